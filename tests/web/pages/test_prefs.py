"""Preferences follow the account (issue 23): the theme, the card back and the rest are kept on
the player and in the cookie; the account's win. A game's first-visit guide is dismissed once."""

from __future__ import annotations

import json

from fastapi.testclient import TestClient

from tests.web.support import new_game, post


def body_classes(client: TestClient, path: str = "/") -> set[str]:
    html = client.get(path).text
    start = html.index('<body class="') + len('<body class="')
    return set(html[start : html.index('"', start)].split())


def test_a_visitor_keeps_preferences_in_the_cookie_only(client: TestClient) -> None:
    answer = post(client, "/prefs", {"theme": "dark", "cardback": "gold"})
    assert answer.status_code == 204
    assert client.cookies["ph_prefs"] == "back-gold.dark"
    # The page is told the classes the server paints with; it writes no cookie itself.
    saved = json.loads(answer.headers["hx-trigger"])
    assert saved == {"prefs-saved": {"classes": "back-gold theme-dark"}}
    assert {"theme-dark", "back-gold"} <= body_classes(client)
    # Unknown values are the defaults, never an error.
    assert post(client, "/prefs", {"theme": "neon", "cardback": "plaid"}).status_code == 204
    assert not {"theme-dark", "back-gold"} & body_classes(client)


def test_a_players_preferences_are_stored_on_the_account(client: TestClient) -> None:
    game_id = new_game(client, "corners", 5)  # now the browser has a player
    assert (
        post(client, "/prefs", {"theme": "dark", "cardback": "red", "four": "1"}).status_code == 204
    )
    client.cookies.delete("ph_prefs")  # another device of the same session: the account decides
    assert {"theme-dark", "back-red", "pref-four"} <= body_classes(client, f"/games/{game_id}")
    # ... and the page puts the account's choice back in the cookie for the pages that do not
    # ask who is viewing.
    assert [c.value for c in client.cookies.jar if c.name == "ph_prefs"] == ["back-red.dark.four"]


def test_the_first_visit_guide_is_shown_once(client: TestClient) -> None:
    game_id = new_game(client, "castles-end", 3)
    board = client.get(f"/games/{game_id}")
    assert 'id="guide-title"' in board.text
    assert board.headers["cache-control"] == "no-store"  # Back shows the board as it is
    assert post(client, "/prefs/guide", {"game": "castles-end"}).status_code == 204
    assert 'id="guide-title"' not in client.get(f"/games/{game_id}").text
    # Other games keep theirs; a later preference keeps the guide read.
    assert post(client, "/prefs", {"theme": "dark"}).status_code == 204
    assert 'id="guide-title"' not in client.get(f"/games/{game_id}").text
    assert 'id="guide-title"' in client.get(f"/games/{new_game(client, 'corners', 3)}").text
    assert post(client, "/prefs/guide", {"game": "chess"}).status_code == 422
