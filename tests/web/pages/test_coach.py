"""The coach's pages (app/web/pages/coach.py) with the solver's answers stubbed: how the
analysis page words a slip, fragment or page, and where "Try again from here" leads.
The real searches behind them are tests/web/test_coach_routes.py's."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from app.db.models import DealVerdict
from app.engine import Words
from app.services.errors import DealInPlay, GameInPlay
from tests.web.support import finish_deal, new_game, post, solver_of

SLIP: dict[str, Any] = {
    "deal_winnable": True,
    "slip": {
        "ply": 4,
        "move": {"from": "t2", "to": "t5", "count": 1},
        "better": {"from": "t1", "to": "t3", "count": 3},
    },
    "knowing": "all",
    "decided": True,
}
LOST: dict[str, Any] = {"deal_winnable": False, "slip": None, "knowing": "all", "decided": True}


@dataclass
class Coach:
    """What the stubbed solver was asked, and what it answers next."""

    analysis: dict[str, Any]
    asked_words: list[tuple[str, str | None, int, str]]


@pytest.fixture()
def coach(app: FastAPI, monkeypatch: pytest.MonkeyPatch) -> Iterator[Coach]:
    solver = solver_of(app)
    stub = Coach(SLIP, [])

    async def analysis(game_id: str, viewer: str | None) -> dict[str, Any]:
        return stub.analysis

    def slip_words(game_id: str, viewer: str | None, ply: int, better: str) -> tuple[Words, Words]:
        stub.asked_words.append((game_id, viewer, ply, better))
        return Words("played", "the slip %(x)s", {"x": "here"}), Words("better", "a better one")

    monkeypatch.setattr(solver, "analysis", analysis)
    monkeypatch.setattr(solver, "slip_words", slip_words)
    yield stub


def test_a_slip_is_said_in_words_with_the_better_move_in_notation(
    client: TestClient, coach: Coach
) -> None:
    game_id = finish_deal(client, "castles-end", 2)  # a finished game of this browser's
    fragment = client.get(f"/games/{game_id}/analysis", headers={"HX-Request": "true"})
    assert fragment.status_code == 200
    assert "hx-request" in fragment.headers["vary"].lower()
    assert "<html" not in fragment.text  # a fragment for the finished board
    assert "until move 4: <b>The slip here</b>" in fragment.text
    assert "<b>A better one</b>" in fragment.text
    assert f'action="/games/{game_id}/try-again"' in fragment.text
    player = client.get(f"/api/games/{game_id}").json()["player"]["id"]
    assert coach.asked_words == [(game_id, player, 4, "t1-t3/3")]


def test_a_one_card_better_move_has_no_count(client: TestClient, coach: Coach) -> None:
    coach.analysis = SLIP | {
        "slip": SLIP["slip"] | {"better": {"from": "w", "to": "f1", "count": 1}}
    }
    game_id = finish_deal(client, "castles-end", 2)
    page = client.get(f"/games/{game_id}/analysis")  # without JavaScript: a page of its own
    assert page.status_code == 200 and "<html" in page.text
    assert "hx-request" in page.headers["vary"].lower()
    assert f'<a href="/games/{game_id}">' in page.text  # back to the game
    assert [asked[3] for asked in coach.asked_words] == ["w-f1"]


def test_without_a_slip_nothing_is_worded_and_nothing_is_offered(
    client: TestClient, coach: Coach
) -> None:
    coach.analysis = LOST
    game_id = finish_deal(client, "castles-end", 2)
    page = client.get(f"/games/{game_id}/analysis", headers={"HX-Request": "true"})
    assert page.status_code == 200
    assert "could not be won from the start" in page.text
    assert "try-again" not in page.text and coach.asked_words == []


def test_an_analysis_refused_by_the_solver_is_an_error_page(
    client: TestClient, app: FastAPI, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def in_play(game_id: str, viewer: str | None) -> dict[str, Any]:
        raise GameInPlay("%(what)s is available once the game is over.", what="The analysis")

    monkeypatch.setattr(solver_of(app), "analysis", in_play)
    page = client.get("/games/g1234/analysis")
    assert page.status_code == 409 and page.headers["content-type"].startswith("text/html")
    assert "once the game is over" in page.text


def test_try_again_leads_to_the_new_game_or_to_the_deal_in_play(
    client: TestClient, app: FastAPI, monkeypatch: pytest.MonkeyPatch
) -> None:
    mine = new_game(client, "castles-end", 2)
    asked: list[tuple[str, str]] = []
    answer: SimpleNamespace | DealInPlay = SimpleNamespace(record=SimpleNamespace(id="fresh"))

    async def try_again(game_id: str, player: str) -> Any:
        asked.append((game_id, player))
        if isinstance(answer, DealInPlay):
            raise answer
        return answer

    monkeypatch.setattr(solver_of(app), "try_again", try_again)
    again = post(client, "/games/g1234/try-again", {}, htmx=False)
    assert (again.status_code, again.headers["location"]) == (303, "/games/fresh")
    answer = DealInPlay(mine)  # one unfinished game per deal: back to it, no error page
    again = post(client, "/games/g1234/try-again", {}, htmx=False)
    assert (again.status_code, again.headers["location"]) == (303, f"/games/{mine}")
    player = client.get(f"/api/games/{mine}").json()["player"]["id"]
    assert asked == [("g1234", player)] * 2  # asked as this browser's player


def test_try_again_is_a_form_post_with_the_csrf_token(client: TestClient, coach: Coach) -> None:
    refused = client.post("/games/g1234/try-again", follow_redirects=False)
    assert refused.status_code == 403


def _verdict_line(html: str) -> str:
    """The board's line of the solver's verdict on the deal (templates/components/verdict.html)."""
    start = html.index('id="deal-verdict"')
    return html[start : html.index("</p>", start)]


def _judge(app: FastAPI, deal: int, outcome: str, solution: str | None) -> None:
    """A verdict of the solver's own on a Castle's End deal, as a judgement stores it."""
    with solver_of(app).sessions.begin() as db:
        db.add(DealVerdict(game="castles-end", deal=deal, outcome=outcome, solution=solution,
                           positions=1, certified=False, created_at=datetime.now(UTC)))  # fmt: skip


# Deals of their own: the tests' database outlives a test, and these tests store verdicts.
@pytest.mark.parametrize(
    ("found", "said", "deal"),
    [(LOST, "<b>cannot be won</b>", 9101), (SLIP, "<b>can be won</b>.", 9102)],
)
def test_an_analysis_that_decides_an_unjudged_deal_tells_the_board_above(
    client: TestClient, coach: Coach, found: dict[str, Any], said: str, deal: int
) -> None:
    coach.analysis = found
    game_id = finish_deal(client, "castles-end", deal)  # no judging in the tests: no verdict
    board = client.get(f"/games/{game_id}").text
    assert "has not decided (yet)" in _verdict_line(board)
    fragment = client.get(f"/games/{game_id}/analysis", headers={"HX-Request": "true"}).text
    line = _verdict_line(fragment)
    assert 'hx-swap-oob="true"' in line and said in line
    assert "/solution" not in line  # the analysis keeps no winning line from the deal's start
    page = client.get(f"/games/{game_id}/analysis").text  # a page of its own: no board above
    assert 'id="deal-verdict"' not in page


def test_the_fragment_brings_the_deal_s_latest_verdict_the_solver_s_first(
    client: TestClient, app: FastAPI, coach: Coach
) -> None:
    coach.analysis = {"deal_winnable": None, "slip": None, "knowing": "all", "decided": False}
    game_id = finish_deal(client, "castles-end", 9103)
    fragment = client.get(f"/games/{game_id}/analysis", headers={"HX-Request": "true"}).text
    assert "deal-verdict" not in fragment  # nothing decided: the board's line stays
    # Judged after the board was drawn (a judgement that finished meanwhile): the line says
    # so, with the solver's winning line, even beside an undecided analysis.
    _judge(app, 9103, "winnable", "w-f1")
    fragment = client.get(f"/games/{game_id}/analysis", headers={"HX-Request": "true"}).text
    line = _verdict_line(fragment)
    assert 'hx-swap-oob="true"' in line and "<b>can be won</b>" in line
    assert f'href="/games/{game_id}/solution"' in line
    assert line == _verdict_line(client.get(f"/games/{game_id}").text).replace(
        'id="deal-verdict"', 'id="deal-verdict" hx-swap-oob="true"'
    )  # the same line as a board drawn now


@pytest.mark.parametrize(("found", "winnable", "deal"), [(LOST, False, 9104), (SLIP, True, 9105)])
def test_a_finished_board_shows_the_verdict_of_its_stored_analysis(
    client: TestClient, app: FastAPI, found: dict[str, Any], winnable: bool, deal: int
) -> None:
    game_id = finish_deal(client, "castles-end", deal)
    games = app.state.services.games
    owner = client.get(f"/api/games/{game_id}").json()["player"]["id"]
    assert games.get(game_id, owner).deal_winnable is None  # as the API tells its owner
    solver_of(app).store_analysis(game_id, found)
    assert games.get(game_id, owner).deal_winnable is winnable
    assert games.get(game_id, None).deal_winnable is None  # masked: the same-deal rule
    line = _verdict_line(client.get(f"/games/{game_id}").text)
    assert ("<b>can be won</b>." if winnable else "<b>cannot be won</b>") in line
    assert "/solution" not in line  # no winning line is known to replay
    _judge(app, deal, "winnable" if winnable else "lost", "w-f1" if winnable else None)
    line = _verdict_line(client.get(f"/games/{game_id}").text)
    assert ("/solution" in line) is winnable  # the solver's own verdict, with its line
