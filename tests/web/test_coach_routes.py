"""The coach over HTTP (issue #22): kept winning lines, analysis of finished games, "Try
again from here", and winnable draws that skip the caller's own deals."""

from __future__ import annotations

import re
from datetime import timedelta
from functools import cache
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import delete, update

from app.cli import main
from app.config import Settings
from app.db.models import DealVerdict, Game, GameCoach
from app.engine import Move, get_ruleset
from app.services import daily
from app.services.seal import end_of_day
from app.services.solver_jobs import Verdict, analysis_job
from app.solver import Budget, Outcome, solve
from tests.settings import SEARCH_NODES
from tests.web.support import (
    GAME_SLUGS,
    error_code,
    move,
    new_player,
    post,
    solver_of,
    start,
    start_as,
)

WON_DEAL, LOST_DEAL = 1, 3  # Castle's End, development key


def notation(m: dict[str, Any]) -> str:
    return f"{m['from']}-{m['to']}" + (f"/{m['count']}" if m["count"] > 1 else "")


@cache
def slipping_line() -> tuple[tuple[Move, ...], Move]:
    """Castle's End deal 1: a few moves of a winning line, then a move that loses the deal."""
    rules = get_ruleset("castles-end")
    state = rules.deal(WON_DEAL)
    budget = Budget(nodes=SEARCH_NODES)
    line = solve(state, budget).moves
    for k, good in enumerate(line):
        if k >= 3:
            for m in rules.legal_moves(state):
                if solve(rules.apply(state, m), budget).outcome is Outcome.LOST:
                    return tuple(line[:k]), m
        state = rules.apply(state, good)
    raise AssertionError("no losing move along the line")


def play(api: TestClient, game_id: str, moves: list[Move], version: int = 0) -> int:
    for m in moves:
        answer = move(api, game_id, str(m), version)
        assert answer.status_code == 200, answer.text
        version += 1
    return version


@pytest.mark.slow
def test_a_followed_hint_continues_the_kept_line_without_a_search(
    api: TestClient, app: FastAPI, monkeypatch: pytest.MonkeyPatch
) -> None:
    game = start(api, "castles-end", WON_DEAL)
    first = api.get(f"/api/games/{game['id']}/hint").json()
    assert first["outcome"] == "winnable" and first["move"]
    with app.state.services.sessions() as db:
        kept = db.get(GameCoach, game["id"])
        assert kept is not None and kept.line and kept.line.split()[0] == notation(first["move"])

    async def never(*args: Any) -> None:  # no worker answers from now on
        return None

    monkeypatch.setattr(solver_of(app).pool, "run", never)
    for version in range(5):
        given = api.get(f"/api/games/{game['id']}/hint").json()
        assert given["outcome"] == "winnable" and given["exact"] and given["move"], given
        assert given["version"] == version
        assert move(api, game["id"], notation(given["move"]), version).status_code == 200


@pytest.mark.slow
def test_analysis_names_the_slip_and_try_again_starts_just_before_it(
    api: TestClient, app: FastAPI
) -> None:
    good, slip = slipping_line()
    game = start(api, "castles-end", WON_DEAL)
    play(api, game["id"], [*good, slip])
    assert error_code(api.get(f"/api/games/{game['id']}/analysis"), 409) == "game_in_play"
    assert api.post(f"/api/games/{game['id']}/resign").status_code == 200
    answer = api.get(f"/api/games/{game['id']}/analysis")
    assert answer.status_code == 200, answer.text
    found = answer.json()
    assert found["deal_winnable"] is True and found["knowing"] == "all" and found["decided"]
    assert found["slip"]["ply"] == len(good) + 1
    assert notation(found["slip"]["move"]) == str(slip)
    rules = get_ruleset("castles-end")
    before = rules.replay(rules.deal(WON_DEAL), list(good))
    better = Move.parse(notation(found["slip"]["better"]))
    assert better in rules.legal_moves(before)
    assert solve(rules.apply(before, better), Budget(SEARCH_NODES)).outcome is Outcome.WINNABLE
    with app.state.services.sessions() as db:  # stored with the game
        kept = db.get(GameCoach, game["id"])
        assert kept is not None and kept.analysis is not None
    assert api.get(f"/api/games/{game['id']}/analysis").json() == found

    again = api.post(f"/api/games/{game['id']}/try-again")
    assert again.status_code == 201, again.text
    fresh = again.json()
    assert fresh["id"] != game["id"] and fresh["deal"] == WON_DEAL and fresh["rated"] is False
    assert fresh["version"] == len(good) and fresh["status"] == "playing"
    assert found["slip"]["move"] in fresh["legal_moves"]
    # The same position as the finished game had just before the slip.
    other = new_player(api)
    same = start_as(api, other, "castles-end", WON_DEAL)
    for n, m in enumerate(good):
        assert move(api, same["id"], str(m), n, headers=other).status_code == 200
    assert api.get(f"/api/games/{same['id']}", headers=other).json()["piles"] == fresh["piles"]


def test_analysis_follows_the_solution_gate(api: TestClient, app: FastAPI) -> None:
    game = start(api, "castles-end", LOST_DEAL)
    assert api.post(f"/api/games/{game['id']}/resign").status_code == 200
    other = new_player(api)
    refused = api.get(f"/api/games/{game['id']}/analysis", headers=other)
    assert refused.status_code == 403
    assert api.get(f"/api/games/{game['id']}/solution", headers=other).status_code in (403, 404)
    anonymous = api.get(
        f"/api/games/{game['id']}/analysis", headers={"Authorization": ""}
    ).status_code
    assert anonymous in (401, 403)
    assert error_code(api.get("/api/games/nosuchgame/analysis"), 404) == "not_found"
    found = api.get(f"/api/games/{game['id']}/analysis").json()
    assert found["deal_winnable"] is False and found["slip"] is None and found["decided"]
    assert error_code(api.post(f"/api/games/{game['id']}/try-again"), 409) == "no_slip"


def test_the_finished_board_shows_the_analysis_and_tries_again(
    client: TestClient, app: FastAPI
) -> None:
    good, slip = slipping_line()
    created = post(client, "/games", {"game": "castles-end", "deal": str(WON_DEAL)}, htmx=False)
    game_id = created.headers["location"].rsplit("/", 1)[1]
    for n, m in enumerate([*good, slip]):
        data = {"from": m.source, "to": m.target, "count": str(m.count), "version": str(n)}
        assert post(client, f"/games/{game_id}/moves", data).status_code == 200
    assert post(client, f"/games/{game_id}/resign", {}).status_code == 200
    board = client.get(f"/games/{game_id}").text
    assert f'hx-get="/games/{game_id}/analysis"' in board
    fragment = client.get(f"/games/{game_id}/analysis", headers={"HX-Request": "true"})
    assert fragment.status_code == 200
    assert f"until move {len(good) + 1}" in fragment.text and "Try again from here" in fragment.text
    page = client.get(f"/games/{game_id}/analysis")  # without JavaScript: a page of its own
    assert page.status_code == 200 and "<html" in page.text
    again = post(client, f"/games/{game_id}/try-again", {}, htmx=False)
    assert again.status_code == 303
    assert again.headers["location"].startswith("/games/")
    assert again.headers["location"] != f"/games/{game_id}"


def test_a_won_board_asks_no_analysis(client: TestClient, app: FastAPI) -> None:
    """Nothing slipped in a won game: its board neither asks where it slipped nor says so."""
    created = post(client, "/games", {"game": "castles-end", "deal": str(WON_DEAL)}, htmx=False)
    game_id = created.headers["location"].rsplit("/", 1)[1]
    assert post(client, f"/games/{game_id}/resign", {}).status_code == 200
    assert f'hx-get="/games/{game_id}/analysis"' in client.get(f"/games/{game_id}").text
    with app.state.services.sessions.begin() as db:  # the same game, ended by a win instead
        db.execute(update(Game).where(Game.id == game_id).values(status="won"))
    board = client.get(f"/games/{game_id}").text
    assert "You won!" in board
    assert "/analysis" not in board and "Where did it slip" not in board


def test_winnable_draws_skip_the_deals_the_caller_has_played(api: TestClient, app: FastAPI) -> None:
    with app.state.services.sessions.begin() as db:  # a pool of exactly two deals
        db.execute(delete(DealVerdict).where(DealVerdict.game == "castles-end"))
    solver = solver_of(app)
    assert solver.certify("castles-end", 2, nodes=SEARCH_NODES, seconds=600) == 2
    first = api.post("/api/games", json={"game": "castles-end", "winnable": True})
    assert first.status_code == 201, first.text
    assert api.post(f"/api/games/{first.json()['id']}/resign").status_code == 200
    second = api.post("/api/games", json={"game": "castles-end", "winnable": True})
    assert second.status_code == 201, second.text
    assert second.json()["deal"] != first.json()["deal"]  # finished: not drawn again
    third = api.post("/api/games", json={"game": "castles-end", "winnable": True})
    assert error_code(third, 409) == "no_certified_deals"  # the other one is in play
    assert "every" in third.json()["error"]["message"]
    other = new_player(api)  # another player still draws from the whole pool
    assert (
        api.post(
            "/api/games", json={"game": "castles-end", "winnable": True}, headers=other
        ).status_code
        == 201
    )


def test_certify_always_ends_at_its_deal_or_time_limit(
    app: FastAPI, settings: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    solver = solver_of(app)
    with app.state.services.sessions.begin() as db:
        db.execute(delete(DealVerdict).where(DealVerdict.game == "quadruple-interchange"))
    assert solver.certify("quadruple-interchange", 5, nodes=200, max_deals=2) == 0
    assert solver.next_candidate("quadruple-interchange") == 1  # nothing certified
    ticks = iter(range(0, 1000, 10))
    judged: list[int] = []
    solver.certify(
        "castles-end",
        500,
        nodes=2_000,
        max_seconds=25,
        clock=lambda: float(next(ticks)),
        progress=lambda have, want, verdict: judged.append(1) if verdict else None,
    )
    assert 1 <= len(judged) <= 3
    code = main(
        [
            "certify", "--game", "quadruple-interchange", "--count", "3", "--nodes", "200",
            "--max-deals", "1",
        ],
        settings,
    )  # fmt: skip
    assert code == 0
    captured = capsys.readouterr()
    out = captured.out
    assert "short of 3" in out and "the pool is empty" in out
    # The progress bar (stderr): the pool's size against the count, and each deal judged.
    assert "[" + "." * 30 + "] 0/3 certified" in captured.err
    assert "deal 1: unknown" in captured.err
    refused = solver.start_winnable
    with pytest.raises(Exception, match="rarely decides a Quadruple Interchange deal"):
        refused(app.state.services.players.create_api_player(None)[0].id, "quadruple-interchange")


def test_a_busy_solver_still_gives_a_hidden_card_hint(
    api: TestClient, app: FastAPI, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def never(*args: Any) -> None:
        return None

    monkeypatch.setattr(solver_of(app).pool, "run", never)
    game = start(api, "corners", 1)
    given = api.get(f"/api/games/{game['id']}/hint").json()
    assert given["outcome"] == "estimate" and given["move"] in game["legal_moves"]
    assert 0 <= given["chance"] <= 1 and "busy" in given["message"]


def test_the_analysis_of_a_sealed_deal_waits_for_the_seal_to_lift(
    api: TestClient, app: FastAPI, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Contract v3: the analysis is subject to the seal — today's deal of the day gets none
    (nor "Try again from here"), for its own player too, until the day ends; and an analysis
    stored once the seal lifted is not given while the deal is sealed again."""
    games = app.state.services.games
    today = games.sealer.today()
    number = daily.daily_deal("castles-end", today, app.state.settings.deal_key_bytes)
    game = start(api, "castles-end", number)
    first = game["legal_moves"][0]
    play(api, game["id"], [Move(first["from"], first["to"], first["count"])])
    assert api.post(f"/api/games/{game['id']}/resign").status_code == 200
    sealed = api.get(f"/api/games/{game['id']}/analysis")
    assert error_code(sealed, 403) == "deal_sealed"
    assert sealed.json()["error"]["opens_at"] == end_of_day(today).isoformat()
    assert error_code(api.post(f"/api/games/{game['id']}/try-again"), 403) == "deal_sealed"
    with app.state.services.sessions() as db:  # nothing was searched, so nothing stored
        assert db.get(GameCoach, game["id"]) is None

    tomorrow = today + timedelta(days=1)
    monkeypatch.setattr(games.sealer, "today", lambda: tomorrow)
    opened = api.get(f"/api/games/{game['id']}/analysis")
    assert opened.status_code == 200, opened.text
    assert opened.json()["decided"] and opened.json()["knowing"] == "all"
    with app.state.services.sessions() as db:
        kept = db.get(GameCoach, game["id"])
        assert kept is not None and kept.analysis is not None

    # The stored analysis goes through the same gate: sealed again, refused again.
    monkeypatch.setattr(games.sealer, "today", lambda: today)
    assert error_code(api.get(f"/api/games/{game['id']}/analysis"), 403) == "deal_sealed"


def test_an_undecided_analysis_says_deal_winnable_null(
    api: TestClient, app: FastAPI, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Contract v3: when the solver could not decide, ``slip`` and ``deal_winnable`` are null —
    even for a deal whose verdict is stored as winnable (``true`` with no slip would read as a
    game won or left while winnable). A deal proved lost needs no search at all."""
    good, slip = slipping_line()
    cut_short = analysis_job(
        "castles-end", WON_DEAL, app.state.settings.deal_key_bytes,
        [str(m) for m in (*good, slip)], "winnable", 60.0, 2,
    )  # fmt: skip
    assert cut_short == {"deal_winnable": None, "slip": None, "knowing": "all", "decided": False}

    solver = solver_of(app)
    solver.store(Verdict("castles-end", WON_DEAL, Outcome.WINNABLE, (), 1), certified=False)
    solver.store(Verdict("castles-end", LOST_DEAL, Outcome.LOST, (), 1), certified=False)

    async def never(*args: Any) -> None:  # no worker answers
        return None

    monkeypatch.setattr(solver.pool, "run", never)
    game = start(api, "castles-end", WON_DEAL)
    play(api, game["id"], [*good, slip])
    assert api.post(f"/api/games/{game['id']}/resign").status_code == 200
    found = api.get(f"/api/games/{game['id']}/analysis").json()
    assert found == {"deal_winnable": None, "slip": None, "knowing": "all", "decided": False}
    assert error_code(api.post(f"/api/games/{game['id']}/try-again"), 409) == "no_slip"

    lost = start(api, "castles-end", LOST_DEAL)
    assert api.post(f"/api/games/{lost['id']}/resign").status_code == 200
    found = api.get(f"/api/games/{lost['id']}/analysis").json()
    assert found == {"deal_winnable": False, "slip": None, "knowing": "all", "decided": True}


def test_the_home_page_says_plainly_when_a_pool_is_empty(client: TestClient, app: FastAPI) -> None:
    with app.state.services.sessions.begin() as db:
        db.execute(delete(DealVerdict).where(DealVerdict.certified))
    solver = solver_of(app)
    solver._pools = None
    assert solver.certify("castles-end", 1, nodes=SEARCH_NODES, seconds=600) >= 1
    cards = {
        part.split("</h2>")[0]: part.split("</li>")[0]
        for part in client.get("/").text.split('<li class="game-card">\n    <h2>')[1:]
    }
    assert len(cards) == 5
    assert 'name="winnable"' in cards["Castle&#39;s End"]
    assert "No winnable deal certified yet" not in cards["Castle&#39;s End"]
    qi = cards["Quadruple Interchange"]
    assert 'name="winnable"' not in qi
    assert "No winnable deal certified yet: the solver rarely decides one" in qi
    assert "No winnable deal certified yet." in cards["Corners"]


@pytest.mark.parametrize("slug", GAME_SLUGS)
def test_each_rules_page_gives_its_winnability_with_sample_and_interval(
    client: TestClient, slug: str
) -> None:
    """Issue #22: the figure, its sample size and 95% interval, and how it was measured, on
    the page itself (players cannot open bench/)."""
    page = client.get(f"/rules/{slug}")
    assert page.status_code == 200
    section = page.text.split("How often a deal can be won", 1)[1]
    assert re.search(r"of\s+200?\s+deals", section)  # the sample size
    assert re.search(r"95% interval \d+(\.\d)?–\d+(\.\d)?%", section)
    assert "How this was measured." in section and "Wilson score" in section
    assert "a short plain depth-first search first" in section
