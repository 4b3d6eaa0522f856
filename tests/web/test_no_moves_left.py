"""No moves left (contract v2): the game stays in play while the last step can be undone; it is
lost by itself only when no legal move is left and nothing can be undone. Castle's End warns
before a base choice that leaves no move. On SQLite and PostgreSQL."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import delete, update

from app.db.models import DealStats, Game, MoveRecord
from app.engine import DEVELOPMENT_KEY, dumps, get_ruleset
from app.engine.cards import RANKS
from tests.engine.builders import position
from tests.web.pages.test_board import HX, state_of
from tests.web.support import csrf, error_code, move, new_game, post, start

# Corners, every card placed: ♦ and ♥ complete, ♣ (base K) waits for Q♣ on r1, ♠ is up to the
# 10 and J♠ lies under the waste top Q♠; r1-f1 is the only legal move, and redeals are used up.
CLUBS = "KC " + " ".join(f"{r}C" for r in RANKS[:11])  # K A 2 … J
FULL = {s: " ".join(f"{r}{s}" for r in RANKS) for s in "DH"}
SPADES = " ".join(f"{r}S" for r in RANKS[:10])  # A … 10


def corners(waste: str, stock: str) -> Any:
    return position(
        "corners", redeals=2, f1=CLUBS, f2=FULL["D"], f3=FULL["H"], f4=SPADES, r1="QC",
        waste=waste, stock=stock,
    )  # fmt: skip


MADE_UP: list[str] = []


@pytest.fixture()
def api_made_up(app: FastAPI) -> Iterator[TestClient]:
    """An API client for made-up positions. The hidden-card guard rebuilds every state from the
    deal and the move log, which a position written into the database is not, so this client
    goes without it; the tests check what the answers show themselves. Afterwards the made-up
    games are deleted: other tests replay every stored game from its deal."""
    with TestClient(app, base_url="http://testserver") as c:
        created = c.post("/api/players", json={})
        c.headers["Authorization"] = f"Bearer {created.json()['token']}"
        yield c
    while MADE_UP:
        game_id = MADE_UP.pop()
        with app.state.services.sessions.begin() as db:
            db.execute(delete(MoveRecord).where(MoveRecord.game_id == game_id))
            db.execute(delete(Game).where(Game.id == game_id))


def set_state(app: FastAPI, game_id: str, state: Any) -> None:
    MADE_UP.append(game_id)
    with app.state.services.sessions.begin() as db:
        db.execute(update(Game).where(Game.id == game_id).values(state=dumps(state)))


def test_no_move_left_but_undo_possible_keeps_the_game_in_play(
    api_made_up: TestClient, app: FastAPI
) -> None:
    api = api_made_up
    game = start(api, "corners", 1)
    set_state(app, game["id"], corners(waste="JS KS QS", stock=""))
    moved = move(api, game["id"], "r1-f1", 0)
    assert moved.status_code == 200, moved.text
    after = moved.json()
    # r1 stays empty (no stock to refill it): nothing was revealed, so the move can be undone.
    assert after["status"] == "playing"
    assert after["legal_moves"] == [] and after["can_undo"] is True
    assert "log" not in after and after["piles"]["stock"] == {"count": 0}
    assert after["piles"]["waste"] == {"cards": ["JS", "KS", "QS"]}
    assert api.get(f"/api/games/{game['id']}").json()["status"] == "playing"
    # (Undo rebuilds the board from the deal and the log, which this made-up position is not;
    # the Castle's End trap below undoes a real one.) Ending it is the player's choice:
    # resigning counts it as lost.
    resigned = api.post(f"/api/games/{game['id']}/resign")
    assert resigned.status_code == 200
    assert resigned.json()["status"] == "lost"


def test_no_move_left_and_no_undo_ends_the_game(api_made_up: TestClient, app: FastAPI) -> None:
    api = api_made_up
    game = start(api, "corners", 1)
    set_state(app, game["id"], corners(waste="JS QS", stock="KS"))
    moved = move(api, game["id"], "r1-f1", 0)
    assert moved.status_code == 200, moved.text
    after = moved.json()
    # r1 was refilled from the stock with K♠, a card not seen before: no undo, so it is lost.
    assert after["status"] == "lost" and after["can_undo"] is False
    assert after["legal_moves"] == []
    assert error_code(api.post(f"/api/games/{game['id']}/undo"), 409) == "undo_unavailable"


def test_the_castles_end_trap_can_be_undone(api: TestClient) -> None:
    # Deal 1: 7♦ from t1 as the base leaves no legal move (the one-click loss).
    game = start(api, "castles-end", 1)
    after = move(api, game["id"], "t1-f1", 0).json()
    assert after["status"] == "playing" and after["legal_moves"] == [] and after["can_undo"]
    undone = api.post(f"/api/games/{game['id']}/undo").json()
    assert undone["status"] == "playing" and undone["base_rank"] is None
    assert {"from": "t1", "to": "f1", "count": 1} in undone["legal_moves"]


def test_starting_another_game_ends_a_game_with_no_move_left(api: TestClient) -> None:
    stuck = start(api, "castles-end", 1)
    assert move(api, stuck["id"], "t1-f1", 0).json()["legal_moves"] == []  # the trap
    open_game = start(api, "castles-end", 2)  # in play, with moves: left alone
    rated = api.post("/api/games", json={"game": "corners"})
    assert rated.status_code == 201, rated.text
    ended = api.get(f"/api/games/{stuck['id']}").json()
    assert ended["status"] == "lost" and ended["legal_moves"] == []
    assert api.get(f"/api/games/{open_game['id']}").json()["status"] == "playing"


def test_the_board_offers_undo_or_end_when_no_move_is_left(client: TestClient) -> None:
    game_id = new_game(client, "castles-end", 1)
    answer = post(client, f"/games/{game_id}/moves", {"move": "t1-f1", "version": "0"})
    assert answer.status_code == 200
    html = answer.text
    assert "No legal move is left: undo the last move, or end the game." in html
    assert '<h2 id="stuck-title">No legal move is left</h2>' in html
    assert f'hx-post="/games/{game_id}/undo"' in html and "End the game" in html
    assert 'data-undo="1"' in html and "data-moves='[]'" in html
    ended = post(client, f"/games/{game_id}/resign", {})
    assert ended.status_code == 200 and '<h2 id="summary-title">Game over</h2>' in ended.text
    assert state_of(client, game_id)["status"] == "lost"


def test_only_the_player_is_offered_undo_or_end_when_no_move_is_left(
    client: TestClient, app: FastAPI
) -> None:
    game_id = new_game(client, "castles-end", 1)
    assert (
        post(client, f"/games/{game_id}/moves", {"move": "t1-f1", "version": "0"}).status_code
        == 200
    )
    with TestClient(app, base_url="http://testserver") as other:
        page = other.get(f"/games/{game_id}")
    assert page.status_code == 200
    assert 'id="stuck-title"' not in page.text and "End the game" not in page.text
    assert 'id="stuck-title"' in client.get(f"/games/{game_id}").text  # the player's own page


def test_castles_end_marks_the_base_choices_that_leave_no_move(client: TestClient) -> None:
    game_id = new_game(client, "castles-end", 1)
    page = client.get(f"/games/{game_id}").text
    traps = _traps(page)
    assert ("t1", "f1") in traps and ("t2", "f1") not in traps
    assert 'id="trap-dialog"' in page
    # Once the base is chosen there is nothing more to warn about.
    answer = post(client, f"/games/{game_id}/moves", {"move": "t2-f1", "version": "0"})
    assert answer.status_code == 200 and not _traps(answer.text)
    # Games with hidden cards never look ahead.
    other = new_game(client, "quadrangle", 1)
    assert not _traps(client.get(f"/games/{other}").text)


def _traps(html: str) -> set[tuple[str, str]]:
    """The moves the status marks as traps (a fourth item in the board's move data)."""
    moves = json.loads(html.split("data-moves='", 1)[1].split("'", 1)[0])
    assert moves, "no legal move to look at"
    return {(m[0], m[1]) for m in moves if m[3:] == ["trap"]}


def test_restart_resigns_and_deals_the_same_deal_again(client: TestClient, app: FastAPI) -> None:
    game_id = new_game(client, "castles-end", 5)
    moved = post(client, f"/games/{game_id}/moves", {"move": "t2-f1", "version": "0"})
    assert moved.status_code == 200
    answer = client.post(
        f"/games/{game_id}/restart", data={"csrftoken": csrf(client)}, follow_redirects=False
    )
    assert answer.status_code == 303
    new_id = answer.headers["location"].rsplit("/", 1)[1]
    assert new_id != game_id
    fresh = state_of(client, new_id)
    assert (fresh["game"], fresh["deal"], fresh["version"]) == ("castles-end", 5, 0)
    assert state_of(client, game_id)["status"] == "lost"


def test_restart_of_someone_elses_game_is_refused(client: TestClient, api: TestClient) -> None:
    game = start(api, "corners", 3)
    answer = client.post(
        f"/games/{game['id']}/restart", data={"csrftoken": csrf(client)}, headers=HX
    )
    assert answer.status_code == 403
    assert state_of(client, game["id"])["status"] == "playing"


# -- auto-finish ---------------------------------------------------------------------------------

SUITS_DONE = {f"f{i + 1}": " ".join(f"{r}{s}" for r in RANKS) for i, s in enumerate("CDH")}


def test_finish_moves_only_when_every_card_can_go_up() -> None:
    rules = get_ruleset("castles-end")
    spades = " ".join(f"{r}S" for r in RANKS[:11])  # A … J
    ready = position("castles-end", SUITS_DONE, f4=spades, t1="QS", t2="KS")
    plan = rules.finish_moves(ready, rules.legal_moves(ready))
    assert [str(m) for m in plan or []] == ["t1-f4", "t2-f4"]
    # K♠ on Q♠: the Queen cannot go up first without another move: no offer.
    blocked = position("castles-end", SUITS_DONE, f4=spades, t1="QS KS")
    assert rules.finish_moves(blocked, rules.legal_moves(blocked)) is None
    # A card in the stock is never looked at.
    q = get_ruleset("quadrangle")
    dealt = q.deal(1, DEVELOPMENT_KEY)
    assert q.finish_moves(dealt, q.legal_moves(dealt)) is None


def test_the_finish_button_plays_every_card_up(app: FastAPI) -> None:
    with TestClient(app, base_url="http://testserver") as browser:  # made-up position: no guard
        game_id = new_game(browser, "castles-end", 9)
        spades = " ".join(f"{r}S" for r in RANKS[:11])
        set_state(app, game_id, position("castles-end", SUITS_DONE, f4=spades, t1="QS", t2="KS"))
        page = browser.get(f"/games/{game_id}").text
        assert "Every card left can go up." in page and f'hx-post="/games/{game_id}/finish"' in page
        with TestClient(app, base_url="http://testserver") as other:  # the offer is the player's
            watched = other.get(f"/games/{game_id}").text
        assert "Every card left can go up." not in watched and "/finish" not in watched
        answer = post(browser, f"/games/{game_id}/finish", {})
        assert answer.status_code == 200
        assert "Finished: 2 cards went up. You won!" in answer.text
        assert browser.get(f"/api/games/{game_id}").json()["status"] == "won"
        again = post(browser, f"/games/{game_id}/finish", {})
        assert again.status_code == 409 and "Not every card left can go up" in again.text
    while MADE_UP:
        made_up = MADE_UP.pop()
        with app.state.services.sessions.begin() as db:
            db.execute(delete(MoveRecord).where(MoveRecord.game_id == made_up))
            db.execute(
                update(DealStats)
                .where(DealStats.fewest_game_id == made_up)
                .values(fewest_game_id=None, fewest_moves=None)
            )
            db.execute(
                update(DealStats)
                .where(DealStats.fastest_game_id == made_up)
                .values(fastest_game_id=None, fastest_ms=None)
            )
            db.execute(delete(Game).where(Game.id == made_up))
