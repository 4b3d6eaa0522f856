"""The coach over HTTP (issue #22): kept winning lines, analysis of finished games, "Try
again from here", and winnable draws that skip the caller's own deals."""

from __future__ import annotations

from functools import cache
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import delete

from app.cli import main
from app.config import Settings
from app.db.models import DealVerdict, GameCoach
from app.engine import Move, get_ruleset
from app.solver import Budget, Outcome, solve
from tests.web.support import error_code, move, new_player, post, solver_of, start, start_as

WON_DEAL, LOST_DEAL = 1, 3  # Castle's End, development key


@pytest.fixture(autouse=True)
def patient_solver(app: FastAPI, monkeypatch: pytest.MonkeyPatch) -> None:
    # The machine running the tests may be busy: give searches time enough to decide.
    monkeypatch.setattr(solver_of(app), "hint_seconds", 30.0)
    monkeypatch.setattr(solver_of(app), "analysis_seconds", 60.0)


def notation(m: dict[str, Any]) -> str:
    return f"{m['from']}-{m['to']}" + (f"/{m['count']}" if m["count"] > 1 else "")


@cache
def slipping_line() -> tuple[tuple[Move, ...], Move]:
    """Castle's End deal 1: a few moves of a winning line, then a move that loses the deal."""
    rules = get_ruleset("castles-end")
    state = rules.deal(WON_DEAL)
    line = solve(state, Budget(nodes=200_000)).moves
    budget = Budget(nodes=200_000)
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
    with app.state.sessions() as db:
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
    assert solve(rules.apply(before, better), Budget(nodes=200_000)).outcome is Outcome.WINNABLE
    with app.state.sessions() as db:  # stored with the game
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


def test_winnable_draws_skip_the_deals_the_caller_has_played(api: TestClient, app: FastAPI) -> None:
    with app.state.sessions.begin() as db:  # a pool of exactly two deals
        db.execute(delete(DealVerdict).where(DealVerdict.game == "castles-end"))
    solver = solver_of(app)
    assert solver.certify("castles-end", 2) == 2
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
    with app.state.sessions.begin() as db:
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
    out = capsys.readouterr().out
    assert "short of 3" in out and "the pool is empty" in out
    refused = solver.start_winnable
    with pytest.raises(Exception, match="rarely decides a Quadruple Interchange deal"):
        refused(app.state.players.create_api_player(None)[0].id, "quadruple-interchange")


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
