"""The solver over HTTP: hints (owner only, never from hidden cards, casual from the first),
the certified pool (CLI, ``"winnable": true``) and finished games' ``deal_winnable``."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from app.cli import main
from app.config import Settings
from app.services.solver import Solver, judge_deal
from app.solver import Outcome
from tests.web.support import error_code, finish_deal, move, new_game, post, start

WON_DEAL, LOST_DEAL = 1, 3  # Castle's End, development key (tests/solver decides them)


def solver_of(app: FastAPI) -> Solver:
    solver: Solver = app.state.solver
    return solver


@pytest.fixture(autouse=True)
def patient_solver(app: FastAPI, monkeypatch: pytest.MonkeyPatch) -> None:
    # The machine running the tests may be busy: give searches time enough to decide.
    monkeypatch.setattr(solver_of(app), "hint_seconds", 30.0)


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
        "version": 0,
        "hints_used": 1,
        "casual": True,
    }


@pytest.mark.parametrize("slug", ["corners", "quadruple-interchange"])
def test_a_hidden_card_hint_is_never_exact(api: TestClient, slug: str) -> None:
    game = start(api, slug, 1)
    answer = hint_of(api, game["id"])
    assert answer["outcome"] == "unknown" and answer["exact"] is False
    assert answer["move"] is None or answer["move"] in game["legal_moves"]
    assert answer["message"]


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
    assert solver_of(app).certify("castles-end", 1) >= 1
    pool = set()
    with app.state.sessions() as db:
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


def test_a_finished_game_says_whether_its_deal_could_be_won(api: TestClient, app: FastAPI) -> None:
    solver = solver_of(app)
    key = app.state.settings.deal_key_bytes
    for number in (WON_DEAL, LOST_DEAL):
        solver.store(judge_deal("castles-end", number, key), certified=False)
    assert judge_deal("castles-end", LOST_DEAL, key).outcome is Outcome.LOST
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
    solver.store(judge_deal("castles-end", WON_DEAL, key), certified=False)
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
    solver_of(app).store(judge_deal("castles-end", LOST_DEAL, key), certified=False)
    page = f"/deal/castles-end/{LOST_DEAL}"
    assert "What the deal allowed" not in client.get(page).text
    finish_deal(client, "castles-end", LOST_DEAL)
    text = client.get(page).text
    assert "What the deal allowed" in text and "cannot be won" in text
