"""The home, my-games and board pages (app/web/pages/home.py) on what the other tests leave
out: how many games the home page offers to resume, a no-JavaScript message kept for its own
board, and the board's moves in words without JavaScript (pure)."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from fastapi.testclient import TestClient

from app.db.game_rows import GameRow
from app.engine import RULES_VERSION, State, dumps, get_ruleset
from app.services.game_views import GameView
from app.web.pages.home import _moves_in_words
from tests.engine.builders import position
from tests.web.support import new_game, post


def view_of(state: State) -> GameView:
    rules = get_ruleset(state.game)
    row = GameRow.dealt(
        "g" * 22, "p" * 22, state.game, 1, dumps(state), "playing",
        datetime(2026, 1, 1, tzinfo=UTC), rules=RULES_VERSION, rated=False,
    )  # fmt: skip
    return GameView(row, "Ada", rules, state, [])  # the moves to word are given


def test_moves_without_javascript_name_the_cards_they_move() -> None:
    qi = view_of(position("quadruple-interchange", t1="(KH) 7S 6S 5S", t2="8S"))
    assert _moves_in_words(qi, ["t1-t2/3", "t1-t2"]) == [
        ("t1-t2/3", "7♠ and 2 more: t1 → t2"),
        ("t1-t2", "5♠: t1 → t2"),
    ]


def test_the_stock_and_the_redeal_are_said_as_what_they_do() -> None:
    corners = view_of(position("corners", f1="KC", waste="AC", stock="2C", redeals=1))
    words = dict(_moves_in_words(corners, ["stock-waste", "waste-stock/1"]))
    assert words == {
        "stock-waste": "Deal from the stock",
        "waste-stock/1": "Turn the waste over (redeal)",
    }


def test_a_move_of_more_cards_than_the_pile_shows_says_no_card() -> None:
    qi = view_of(position("quadruple-interchange", t1="(KH) 5S", t2="8S"))
    assert _moves_in_words(qi, ["t1-t2/3"]) == [("t1-t2/3", "? and 2 more: t1 → t2")]


def test_home_offers_the_five_latest_games_in_play(client: TestClient) -> None:
    assert "Carry on where you left off" not in client.get("/").text  # nothing to resume
    games = [new_game(client, "corners", deal) for deal in range(401, 407)]
    home = client.get("/").text
    offered = [g for g in games if f'href="/games/{g}"' in home]
    assert offered == games[1:]  # the latest five, not the first
    assert "Carry on where you left off" in home


def test_my_games_of_a_visitor_with_no_player_is_an_empty_page(client: TestClient) -> None:
    page = client.get("/my-games")
    assert page.status_code == 200
    assert not re.search(r'href="/games/[A-Za-z0-9_-]{22,}', page.text)


def test_a_no_javascript_message_is_shown_on_its_own_board_only(client: TestClient) -> None:
    moved = new_game(client, "castles-end", 1)
    other = new_game(client, "castles-end", 2)
    answer = post(client, f"/games/{moved}/moves", {"move": "t2-f1", "version": "0"}, False)
    assert answer.status_code == 303
    said = "Moved A♣ from pile t2 to foundation f1."
    assert said not in client.get(f"/games/{other}").text
    # Read (and dropped) by the other board: a message never turns up late on its own.
    assert said not in client.get(f"/games/{moved}").text
