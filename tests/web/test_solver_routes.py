"""The solver over HTTP: hints (owner only, never from hidden cards, casual from the first),
the certified pool (CLI, ``"winnable": true``) and finished games' ``deal_winnable``."""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy.exc import OperationalError

from app.cli import main
from app.config import Settings
from app.engine import Move, get_ruleset
from app.services.solver_jobs import Verdict, judge_deal
from app.services.solver_pool import CpuShare
from app.solver import Outcome
from tests.aio import run
from tests.settings import SEARCH_NODES
from tests.web.support import (
    GAME_SLUGS,
    error_code,
    finish_deal,
    move,
    new_game,
    post,
    solver_of,
    start,
)

WON_DEAL, LOST_DEAL = 1, 3  # Castle's End, development key (tests/solver decides them)


def hint_of(api: TestClient, game_id: str) -> dict[str, Any]:
    response = api.get(f"/api/games/{game_id}/hint")
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def test_a_castles_end_hint_is_exact_and_makes_the_game_casual(api: TestClient) -> None:
    game = start(api, "castles-end", WON_DEAL)
    first = hint_of(api, game["id"])
    assert first["outcome"] == "winnable" and first["exact"] is True, first
    assert first["move"] in game["legal_moves"]
    assert first["version"] == 0 and first["hints_used"] == 1 and first["casual"] is True
    played = move(api, game["id"], f"{first['move']['from']}-{first['move']['to']}", 0)
    assert played.status_code == 200, played.text
    second = hint_of(api, game["id"])
    assert second["hints_used"] == 2 and second["version"] == 1
    assert second["outcome"] == "winnable"


def test_a_lost_castles_end_deal_is_said_to_be_lost(api: TestClient) -> None:
    game = start(api, "castles-end", LOST_DEAL)
    answer = hint_of(api, game["id"])
    assert answer == {
        "move": None,
        "outcome": "lost",
        "exact": True,
        "message": "This position can no longer be won.",
        "chance": None,
        "version": 0,
        "hints_used": 1,
        "casual": True,
    }


@pytest.mark.parametrize("time_limits", [True, False])
def test_without_time_limits_searches_are_bounded_by_positions_alone(
    api: TestClient, app: FastAPI, monkeypatch: pytest.MonkeyPatch, time_limits: bool
) -> None:
    """SOLVER_TIME_LIMITS: on, a hint's search has its seconds and the app waits a little
    longer for a worker; off (the suite's settings), positions alone bound the search and
    the app waits for the answer however long it takes."""
    solver = solver_of(app)
    assert solver.time_limits is False  # the suite's settings
    monkeypatch.setattr(solver, "time_limits", time_limits)
    monkeypatch.setattr(solver, "hint_nodes", 5_000)
    asked: list[tuple[float | None, tuple[Any, ...]]] = []

    async def here(timeout: float | None, fn: Any, *args: Any) -> Any:
        asked.append((timeout, args))
        return fn(*args)

    monkeypatch.setattr(solver.pool, "run", here)
    game = start(api, "castles-end", LOST_DEAL)
    assert hint_of(api, game["id"])["outcome"] == "lost"
    ((timeout, (_, seconds, nodes)),) = asked
    assert nodes == 5_000
    if time_limits:
        assert seconds == solver.hint_seconds and timeout is not None and timeout > seconds
    else:
        assert seconds is None and timeout is None


@pytest.mark.slow
@pytest.mark.parametrize("slug", ["corners", "quadruple-interchange"])
def test_a_hidden_card_hint_is_never_exact(api: TestClient, slug: str) -> None:
    game = start(api, slug, 1)
    answer = hint_of(api, game["id"])
    assert answer["outcome"] == "estimate" and answer["exact"] is False
    assert answer["move"] in game["legal_moves"]  # always a move while one is legal
    assert 0 <= answer["chance"] <= 1
    assert "chance" in answer["message"]


def test_the_first_hint_makes_a_rated_game_casual(api: TestClient, app: FastAPI) -> None:
    started = api.post("/api/games", json={"game": "castles-end"})
    assert started.status_code == 201, started.text
    game = started.json()
    assert game["rated"] is True
    hint_of(api, game["id"])
    after = api.get(f"/api/games/{game['id']}").json()
    assert after["rated"] is False
    hint_of(api, game["id"])
    assert api.get(f"/api/games/{game['id']}").json()["rated"] is False


def test_hints_are_for_the_owner_of_a_game_in_play(
    api: TestClient, app: FastAPI, guard: Any
) -> None:
    game = start(api, "castles-end", WON_DEAL)
    with TestClient(app, base_url="http://testserver") as other:
        other.event_hooks["response"].append(guard.check)
        token = other.post("/api/players", json={}).json()["token"]
        other.headers["Authorization"] = f"Bearer {token}"
        assert error_code(other.get(f"/api/games/{game['id']}/hint"), 403) == "forbidden"
        del other.headers["Authorization"]
        assert error_code(other.get(f"/api/games/{game['id']}/hint"), 401) == "unauthenticated"
    assert error_code(api.get("/api/games/nosuchgame/hint"), 404) == "not_found"
    api.post(f"/api/games/{game['id']}/resign")
    assert error_code(api.get(f"/api/games/{game['id']}/hint"), 409) == "game_over"


def test_a_solver_that_does_not_answer_in_time_gives_no_hint(
    api: TestClient, app: FastAPI, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def never(*args: Any) -> None:
        return None

    game = start(api, "castles-end", WON_DEAL)
    monkeypatch.setattr(solver_of(app).pool, "run", never)
    answer = hint_of(api, game["id"])
    assert answer["move"] is None and answer["outcome"] == "unknown"
    assert "busy" in answer["message"] and answer["hints_used"] == 0


def test_winnable_games_come_from_the_certified_pool(api: TestClient, app: FastAPI) -> None:
    refused = api.post("/api/games", json={"game": "quadruple-interchange", "winnable": True})
    assert error_code(refused, 409) == "no_certified_deals"
    assert solver_of(app).certify("castles-end", 1, nodes=SEARCH_NODES, seconds=600) >= 1
    pool = set()
    with app.state.services.sessions() as db:
        from sqlalchemy import select

        from app.db.models import DealVerdict

        pool = set(
            db.scalars(
                select(DealVerdict.deal).where(
                    DealVerdict.game == "castles-end", DealVerdict.certified
                )
            )
        )
    started = api.post("/api/games", json={"game": "castles-end", "winnable": True})
    assert started.status_code == 201, started.text
    assert started.json()["deal"] in pool
    both = api.post("/api/games", json={"game": "castles-end", "deal": 5, "winnable": True})
    assert error_code(both, 422) == "invalid_request"
    unknown = api.post("/api/games", json={"game": "nope", "winnable": True})
    assert error_code(unknown, 422) == "invalid_request"


def _winnable_button(page: str, slug: str) -> bool:
    card = page.split(f'name="game" value="{slug}"')
    return any('name="winnable"' in part.split("</li>")[0] for part in card[1:])


def test_the_home_page_offers_a_winnable_deal_once_its_pool_holds_one(
    client: TestClient, app: FastAPI
) -> None:
    from sqlalchemy import delete

    from app.db.models import DealVerdict, Game

    with app.state.services.sessions.begin() as db:  # no pool yet (other tests share the database)
        db.execute(delete(DealVerdict))
    solver_of(app)._pools = None
    assert not any(_winnable_button(client.get("/").text, slug) for slug in GAME_SLUGS)
    empty = post(client, "/games", {"game": "castles-end", "winnable": "1"}, htmx=False)
    assert empty.status_code == 409
    assert "No Castle&#39;s End deal has been certified winnable yet" in empty.text
    assert solver_of(app).certify("castles-end", 1, nodes=SEARCH_NODES, seconds=600) >= 1
    home = client.get("/").text
    assert _winnable_button(home, "castles-end")
    assert not any(_winnable_button(home, slug) for slug in GAME_SLUGS if slug != "castles-end")
    started = post(client, "/games", {"game": "castles-end", "winnable": "1"}, htmx=False)
    assert started.status_code == 303, started.text
    game_id = started.headers["location"].rsplit("/", 1)[1]
    with app.state.services.sessions() as db:
        game = db.get(Game, game_id)
        assert game is not None and not game.rated
        verdict = db.get(DealVerdict, ("castles-end", game.deal))
        assert verdict is not None and verdict.certified
    both = post(client, "/games", {"game": "castles-end", "winnable": "1", "deal": "5"})
    assert both.status_code == 422 and "not both" in both.text
    unknown = post(client, "/games", {"game": "klondike", "winnable": "1"}, htmx=False)
    assert unknown.status_code == 422 and "location" not in unknown.headers


def test_the_home_page_opens_while_the_pools_cannot_be_read(
    client: TestClient, app: FastAPI, monkeypatch: pytest.MonkeyPatch
) -> None:
    def away() -> None:
        raise OperationalError("SELECT", {}, Exception("connection refused"))

    solver = solver_of(app)
    solver._pools = None
    monkeypatch.setattr(solver, "sessions", away)
    home = client.get("/")
    assert home.status_code == 200 and "New rated game" in home.text
    assert not any(_winnable_button(home.text, slug) for slug in GAME_SLUGS)


def test_a_finished_game_says_whether_its_deal_could_be_won(api: TestClient, app: FastAPI) -> None:
    solver = solver_of(app)
    key = app.state.settings.deal_key_bytes
    for number in (WON_DEAL, LOST_DEAL):
        solver.store(judge_deal("castles-end", number, key, SEARCH_NODES), certified=False)
    assert judge_deal("castles-end", LOST_DEAL, key, SEARCH_NODES).outcome is Outcome.LOST
    answers = {}
    for number in (WON_DEAL, LOST_DEAL, 424242):
        game = start(api, "castles-end", number)
        assert "deal_winnable" not in game  # only once the game is over
        over = api.post(f"/api/games/{game['id']}/resign").json()
        answers[number] = over["deal_winnable"]
        assert api.get(f"/api/games/{game['id']}").json()["deal_winnable"] == answers[number]
    assert answers == {WON_DEAL: True, LOST_DEAL: False, 424242: None}
    assert solver.solution("castles-end", WON_DEAL)


def test_the_certify_command_fills_the_pool_and_resumes(
    app: FastAPI,
    settings: Settings,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    solver = solver_of(app)
    before = solver.pool_size("corners")
    assert main(["certify", "--game", "corners", "--count", str(before + 2)], settings) == 0
    out = capsys.readouterr()
    assert f"{before + 2} certified winnable deals" in out.out
    assert "certified" in out.err and "#" in out.err
    judged = solver.next_candidate("corners")
    assert solver.pool_size("corners") == before + 2
    # Run again: the pool is full already, so nothing more is judged.
    assert main(["certify", "--game", "corners", "--count", str(before + 2)], settings) == 0
    assert solver.next_candidate("corners") == judged
    assert main(["certify", "--game", "corners", "--count", "0"], settings) == 2


@pytest.mark.slow
def test_the_board_offers_a_hint_and_says_first_that_it_makes_the_game_casual(
    client: TestClient,
) -> None:
    board_url = "/games/" + new_game(client, "castles-end", WON_DEAL)
    board = client.get(board_url).text
    assert 'action="' + board_url + '/hint"' in board and 'aria-keyshortcuts="H"' in board
    assert "A hint makes this game casual" in board
    fragment = post(client, board_url + "/hint", {})
    assert fragment.status_code == 200, fragment.text
    assert 'id="announce"' in fragment.text and "Hint: move" in fragment.text
    assert "This position can be won" in fragment.text
    assert "HX-Request" in fragment.headers["vary"]
    # Without JavaScript: back to the board, which says the hint.
    plain = post(client, board_url + "/hint", {}, htmx=False)
    assert plain.status_code == 303
    assert "Hint: move" in client.get(board_url).text


def test_the_board_hint_of_a_lost_deal_says_it_plainly(client: TestClient) -> None:
    game_id = new_game(client, "castles-end", LOST_DEAL)
    fragment = post(client, f"/games/{game_id}/hint", {})
    assert "This position can no longer be won." in fragment.text


def test_deal_pages_show_the_verdict_only_to_who_finished_the_deal(
    api: TestClient, app: FastAPI
) -> None:
    solver = solver_of(app)
    key = app.state.settings.deal_key_bytes
    solver.store(judge_deal("castles-end", WON_DEAL, key, SEARCH_NODES), certified=False)
    before = api.get(f"/api/deals/castles-end/{WON_DEAL}").json()
    assert "winnable" not in before and "solution" not in before
    game = start(api, "castles-end", WON_DEAL)
    in_play = api.get(f"/api/deals/castles-end/{WON_DEAL}").json()
    assert "winnable" not in in_play
    api.post(f"/api/games/{game['id']}/resign")
    after = api.get(f"/api/deals/castles-end/{WON_DEAL}").json()
    assert after["winnable"] is True
    line = after["solution"]
    assert line == solver.solution("castles-end", WON_DEAL)
    from app.engine import Move, get_ruleset

    rules = get_ruleset("castles-end")
    end = rules.replay(rules.deal(WON_DEAL, key), [Move.parse(m) for m in line])
    assert rules.is_won(end)


def test_the_deal_page_says_what_the_deal_allowed(client: TestClient, app: FastAPI) -> None:
    key = app.state.settings.deal_key_bytes
    solver_of(app).store(judge_deal("castles-end", LOST_DEAL, key, SEARCH_NODES), certified=False)
    page = f"/deal/castles-end/{LOST_DEAL}"
    assert "What the deal allowed" not in client.get(page).text
    finish_deal(client, "castles-end", LOST_DEAL)
    text = client.get(page).text
    assert "What the deal allowed" in text and "cannot be won" in text


def test_the_deal_page_takes_the_verdict_of_a_game_s_analysis_where_none_was_judged(
    client: TestClient, app: FastAPI
) -> None:
    page = "/deal/castles-end/9201"  # a deal of its own: the tests' database outlives a test
    game_id = finish_deal(client, "castles-end", 9201)
    assert "has not decided whether this deal can be won" in client.get(page).text
    lost = {"deal_winnable": False, "slip": None, "knowing": "all", "decided": True}
    solver_of(app).store_analysis(game_id, lost)
    text = client.get(page).text
    assert "What the deal allowed" in text and "<b>cannot be won</b>" in text
    # Another browser of the same person, which has not finished the deal: still a spoiler.
    with TestClient(app, base_url="http://testserver") as other:
        assert "What the deal allowed" not in other.get(page).text
        assert "winnable" not in other.get("/api/deals/castles-end/9201").json()
        assert "cannot be won" not in other.get(f"/games/{game_id}").text  # masked, as before


def _decided_castles_end_deal(
    key: bytes, first: int, nodes: int = SEARCH_NODES
) -> tuple[int, Outcome]:
    """A Castle's End deal from ``first`` on that the solver decides within ``nodes``
    positions, and its outcome (found here by the solver itself, not written down)."""
    for number in range(first, first + 50):
        outcome = judge_deal("castles-end", number, key, nodes, None).outcome
        if outcome is not Outcome.UNKNOWN:
            return number, outcome
    raise AssertionError("no decided deal")


def _forget_verdict(app: FastAPI, slug: str, number: int) -> None:
    from app.db.models import DealVerdict

    with app.state.services.sessions.begin() as db:
        row = db.get(DealVerdict, (slug, number))
        if row is not None:
            db.delete(row)


def _wait_for_verdict(api: TestClient, game_id: str, seconds: float = 90.0) -> Any:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = api.get(f"/api/games/{game_id}").json()["deal_winnable"]
        if found is not None:
            return found
        time.sleep(0.2)
    return None


@pytest.mark.slow
def test_an_ended_games_deal_is_judged_in_the_pool_and_shown(
    api: TestClient, app: FastAPI, monkeypatch: pytest.MonkeyPatch
) -> None:
    solver = solver_of(app)
    monkeypatch.setattr(solver, "judge_seconds", 30.0)  # on (the suite's settings: off)
    key = app.state.settings.deal_key_bytes
    for first, want in ((700, Outcome.WINNABLE), (800, Outcome.LOST)):
        number, outcome = first, Outcome.UNKNOWN
        while outcome is not want:  # one deal of each kind, as the solver finds them
            number, outcome = _decided_castles_end_deal(key, number + 1, solver.judge_nodes)
        _forget_verdict(app, "castles-end", number)
        game = start(api, "castles-end", number)
        ended = api.post(f"/api/games/{game['id']}/resign")
        assert ended.status_code == 200, ended.text
        # The answer to the move that ended the game never waits for the search.
        found = _wait_for_verdict(api, game["id"])
        # A timeout once (a loaded box, no judging failure logged): say where the judge was.
        state = f"judging {solver._judging}, {len(solver._tasks)} tasks, loop {solver.loop}"
        assert found is (want is Outcome.WINNABLE), state
        if want is Outcome.WINNABLE:
            line = solver.solution("castles-end", number)
            assert line is not None
            rules = get_ruleset("castles-end")
            end = rules.replay(rules.deal(number, key), [Move.parse(m) for m in line])
            assert rules.is_won(end)


def test_a_busy_pool_takes_no_backlog_of_deals_to_judge(
    app: FastAPI, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Games that end under load do not queue searches: as many deals are judged at once as
    the pool has workers, and the others are let go (judged when a later game ends)."""
    solver = solver_of(app)
    started: list[tuple[str, int]] = []

    async def judge(slug: str, number: int) -> None:
        started.append((slug, number))
        # Still judging when the others are asked for: the loop below starts them all without
        # letting this task run (no await), so how long a judge takes changes nothing.
        await asyncio.sleep(0)
        solver._judging.discard((slug, number))

    monkeypatch.setattr(solver, "judge_ended", judge)

    async def scenario() -> None:
        for number in (11, 12, 13, 11):
            solver._start_judging("corners", number)
        await asyncio.gather(*solver._tasks)

    run(scenario())
    assert solver.pool.workers == 1
    assert started == [("corners", 11)]


def test_judging_waits_while_the_app_is_busy(app: FastAPI, monkeypatch: pytest.MonkeyPatch) -> None:
    """A game that ends while its app process is busy serving play leaves its deal to be
    judged later: under load, a search would lengthen the moves' tail."""
    solver = solver_of(app)
    started: list[int] = []

    async def judge(slug: str, number: int) -> None:
        started.append(number)
        solver._judging.discard((slug, number))

    monkeypatch.setattr(solver, "judge_ended", judge)
    monkeypatch.setattr(solver, "judge_busy_share", 0.25)
    shares = iter([0.9, 0.1])
    monkeypatch.setattr(solver.busy, "now", lambda: next(shares))

    async def scenario() -> None:
        for number in (21, 22):
            solver._start_judging("corners", number)
        await asyncio.gather(*solver._tasks)

    run(scenario())
    assert started == [22]


def test_the_share_of_a_core_is_measured_over_whole_windows() -> None:
    wall, cpu = [100.0], [5.0]
    share = CpuShare(window=2.0, wall=lambda: wall[0], cpu=lambda: cpu[0])
    assert share.now() == 0.0  # nothing measured yet
    wall[0], cpu[0] = 101.0, 5.9
    assert share.now() == 0.0  # the window is not over: the last whole one counts
    wall[0], cpu[0] = 102.0, 6.0
    assert share.now() == pytest.approx(0.5)  # 1 s of CPU in 2 s
    wall[0], cpu[0] = 104.5, 6.25
    assert share.now() == pytest.approx(0.1)
    wall[0] = 105.0
    assert share.now() == pytest.approx(0.1)


def test_judging_while_the_database_is_away_logs_one_line(
    app: FastAPI, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    solver = solver_of(app)

    def away(slug: str, number: int) -> bool:
        raise OperationalError("SELECT", {}, Exception("connection refused"))

    monkeypatch.setattr(solver, "needs_verdict", away)
    with caplog.at_level(logging.WARNING, logger="app.services.solver"):
        assert run(solver.judge_ended("corners", 5)) is None
    (line,) = [r for r in caplog.records if r.name == "app.services.solver"]
    assert line.exc_info is None and "judging corners deal 5 failed" in line.getMessage()
    assert ("corners", 5) not in solver._judging


def test_judging_an_ended_game_keeps_a_decided_or_certified_verdict(app: FastAPI) -> None:
    solver = solver_of(app)
    key = app.state.settings.deal_key_bytes
    number, outcome = _decided_castles_end_deal(key, 900)
    _forget_verdict(app, "castles-end", number)
    found = judge_deal("castles-end", number, key, SEARCH_NODES)
    solver.store(found, certified=True)
    assert solver.needs_verdict("castles-end", number) is False
    other = Outcome.LOST if outcome is Outcome.WINNABLE else Outcome.WINNABLE
    solver.store_judged(Verdict("castles-end", number, other, (), 1))
    assert solver.verdict("castles-end", number) is (outcome is Outcome.WINNABLE)
    assert solver.pool_size("castles-end") >= (outcome is Outcome.WINNABLE)
    unknown = Verdict("castles-end", number + 10_000, Outcome.UNKNOWN, (), 5)
    _forget_verdict(app, "castles-end", number + 10_000)
    solver.store_judged(unknown)
    assert solver.needs_verdict("castles-end", number + 10_000) is True  # may be decided later
    solver.store_judged(Verdict("castles-end", number + 10_000, Outcome.LOST, (), 9))
    assert solver.verdict("castles-end", number + 10_000) is False


def test_the_solution_of_a_finished_game_is_a_replay(
    api: TestClient, client: TestClient, app: FastAPI
) -> None:
    solver = solver_of(app)
    key = app.state.settings.deal_key_bytes
    solver.store(judge_deal("castles-end", WON_DEAL, key, SEARCH_NODES), certified=False)
    line = solver.solution("castles-end", WON_DEAL)
    assert line
    game = start(api, "castles-end", WON_DEAL)
    assert error_code(api.get(f"/api/games/{game['id']}/solution"), 409) == "game_in_play"
    api.post(f"/api/games/{game['id']}/resign")
    whole = api.get(f"/api/games/{game['id']}/solution").json()
    assert whole["moves"] == line and whole["step"] == len(line)
    assert whole["game"]["on_foundations"] == 52  # the line ends with every card home
    first = api.get(f"/api/games/{game['id']}/solution", params={"step": 1}).json()
    assert first["step"] == 1 and first["game"]["on_foundations"] == 1  # E1: a base card
    # Nobody who has not finished the deal sees it (the same-deal rule).
    with TestClient(app, base_url="http://testserver") as other:
        token = other.post("/api/players", json={}).json()["token"]
        other.headers["Authorization"] = f"Bearer {token}"
        refused = other.get(f"/api/games/{game['id']}/solution")
        assert error_code(refused, 403) == "deal_not_finished"
    # In the browser: the finished board links to it; it steps like a replay.
    game_id = finish_deal(client, "castles-end", WON_DEAL)
    board = client.get(f"/games/{game_id}").text
    assert f'href="/games/{game_id}/solution"' in board and "can be won" in board
    page = client.get(f"/games/{game_id}/solution")
    # (a catalog's words are trusted markup: the apostrophe is not escaped)
    assert page.status_code == 200 and "The solver's solution" in page.text
    assert f"/games/{game_id}/solution?step=1" in page.text
    step = client.get(f"/games/{game_id}/solution?step=2", headers={"HX-Request": "true"})
    assert step.status_code == 200 and 'data-step="2"' in step.text
    assert f"/games/{game_id}/solution?step=3" in step.text  # the next step's link
    assert "<html" not in step.text


def test_a_deal_without_a_winning_line_has_no_solution_page(api: TestClient, app: FastAPI) -> None:
    solver = solver_of(app)
    key = app.state.settings.deal_key_bytes
    solver.store(judge_deal("castles-end", LOST_DEAL, key, SEARCH_NODES), certified=False)
    game = start(api, "castles-end", LOST_DEAL)
    over = api.post(f"/api/games/{game['id']}/resign").json()
    assert over["deal_winnable"] is False
    assert error_code(api.get(f"/api/games/{game['id']}/solution"), 404) == "not_found"
