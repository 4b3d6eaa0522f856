"""The browser's Undo and Resign carry the board's version (issue 21): a double click or two
tabs take back one move, not several, and a resignation acts on the board the player saw.
HTMX and no-JavaScript paths, on SQLite and PostgreSQL."""

from __future__ import annotations

import re

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from tests.web.support import browser_post, log_rows, pile_ids, snapshot
from tests.web.test_security import new_browser_game


def _two_undoable_moves(client: TestClient) -> str:
    """A Quadrangle game (deal 1) with two moves made that undo can take back: version 2."""
    game_id = new_browser_game(client, "quadrangle")
    for version, notation in enumerate(["t5-t9", "t8-t10"]):
        made = browser_post(
            client, f"/games/{game_id}/moves", {"move": notation, "version": str(version)}
        )
        assert made.status_code == 303, made.text
    state = client.get(f"/api/games/{game_id}").json()
    assert state["version"] == 2 and state["can_undo"]
    return game_id


def _version_sent(html: str, form: str) -> str:
    found = re.search(rf'name="version" value="(\d+)" form="{form}"', html)
    assert found, f"the board sends no version with {form}"
    return found[1]


@pytest.mark.parametrize("htmx", [True, False], ids=["htmx", "no-js"])
def test_two_undos_sent_with_the_same_version_take_back_one_move(
    client: TestClient, app: FastAPI, htmx: bool
) -> None:
    game_id = _two_undoable_moves(client)
    board = client.get(f"/games/{game_id}").text
    version = _version_sent(board, "undo-form")  # what both clicks (or both tabs) send
    assert version == "2"
    first = browser_post(client, f"/games/{game_id}/undo", {"version": version}, htmx)
    second = browser_post(client, f"/games/{game_id}/undo", {"version": version}, htmx)
    state = client.get(f"/api/games/{game_id}").json()
    assert (state["version"], state["moves"], state["undos"]) == (3, 2, 1)
    assert [a for _, a, _ in log_rows(app, game_id)] == ["move", "move", "undo"]
    if htmx:
        assert first.status_code == 200
        # The usual stale answer: why, and the whole current board, as after a stale move.
        assert second.status_code == 409
        assert "changed" in second.text.lower()
        every_pile = pile_ids(client.get(f"/games/{game_id}").text)
        assert pile_ids(second.text) == every_pile
        assert 'data-version="3"' in second.text
    else:
        assert (first.status_code, second.status_code) == (303, 303)
        assert second.headers["location"] == f"/games/{game_id}"
        page = client.get(f"/games/{game_id}").text  # the board says why nothing happened
        assert 'class="error"' in page and "changed" in page.lower()
        assert _version_sent(page, "undo-form") == "3"


@pytest.mark.parametrize("htmx", [True, False], ids=["htmx", "no-js"])
def test_a_stale_resignation_changes_nothing(client: TestClient, app: FastAPI, htmx: bool) -> None:
    game_id = _two_undoable_moves(client)
    before = snapshot(app, client, game_id)
    stale = browser_post(client, f"/games/{game_id}/resign", {"version": "1"}, htmx)
    assert snapshot(app, client, game_id) == before
    assert client.get(f"/api/games/{game_id}").json()["status"] == "playing"
    if htmx:
        assert stale.status_code == 409 and 'data-version="2"' in stale.text
    else:
        assert stale.status_code == 303
        page = client.get(f"/games/{game_id}").text
        assert 'class="error"' in page and "changed" in page.lower()
    done = browser_post(client, f"/games/{game_id}/resign", {"version": "2"}, htmx)
    assert done.status_code == (200 if htmx else 303)
    assert client.get(f"/api/games/{game_id}").json()["status"] == "lost"
    assert [a for _, a, _ in log_rows(app, game_id)] == ["move", "move", "resign"]


def test_every_undo_and_resign_form_of_the_board_sends_the_version(
    client: TestClient,
) -> None:
    game_id = new_browser_game(client, "castles-end")
    board = client.get(f"/games/{game_id}").text
    assert _version_sent(board, "undo-form") == "0"
    assert _version_sent(board, "resign-form") == "0"
    # Castle's End deal 1: 7♦ from t1 as the base leaves no legal move; the stuck panel's own
    # Undo and End the game forms (the no-JavaScript way out) carry the version too.
    trapped = browser_post(client, f"/games/{game_id}/moves", {"move": "t1-f1", "version": "0"})
    assert trapped.status_code == 303
    board = client.get(f"/games/{game_id}").text
    stuck = board[board.index('id="stuck-title"') :]
    for action in ("undo", "resign"):
        form = re.search(rf'<form[^>]*action="/games/{game_id}/{action}".*?</form>', stuck, re.S)
        assert form and '<input type="hidden" name="version" value="1">' in form[0], action


def test_an_old_page_without_a_version_still_undoes(client: TestClient, app: FastAPI) -> None:
    game_id = _two_undoable_moves(client)
    assert browser_post(client, f"/games/{game_id}/undo", {}, htmx=True).status_code == 200
    assert [a for _, a, _ in log_rows(app, game_id)] == ["move", "move", "undo"]
