"""A first walk through the API: start, move, read, undo, resign."""

from __future__ import annotations

from fastapi.testclient import TestClient

from tests.web.support import csrf


def test_play_a_corners_game_through_the_api(api: TestClient) -> None:
    started = api.post("/api/games", json={"game": "corners", "deal": 1})
    assert started.status_code == 201, started.text
    game = started.json()
    assert game["piles"]["stock"] == {"count": 43}
    assert {"from": "r5", "to": "f1", "count": 1} in game["legal_moves"]
    moved = api.post(
        f"/api/games/{game['id']}/moves",
        json={"from": "r5", "to": "f1", "count": 1, "version": 0},
    )
    assert moved.status_code == 200, moved.text
    after = moved.json()
    assert after["version"] == 1
    assert after["piles"]["f1"]["cards"] == ["KC", "AC"]
    assert after["piles"]["stock"] == {"count": 42}
    # The refill came from the stock, so it cannot be undone.
    undo = api.post(f"/api/games/{game['id']}/undo")
    assert undo.status_code == 409
    assert undo.json()["error"]["code"] == "undo_unavailable"
    assert api.get(f"/api/games/{game['id']}").json()["version"] == 1
    resigned = api.post(f"/api/games/{game['id']}/resign")
    assert resigned.status_code == 200
    assert resigned.json()["status"] == "lost"
    assert resigned.json()["log"] == ["r5-f1"]


def test_board_page_and_browser_move(client: TestClient) -> None:
    home = client.get("/")
    assert home.status_code == 200
    token = csrf(client)
    start = client.post(
        "/games",
        data={"game": "quadrangle", "deal": "1", "csrftoken": token},
        follow_redirects=False,
    )
    assert start.status_code == 303
    page = client.get(start.headers["location"])
    assert 'id="pile-t1"' in page.text
    game_id = start.headers["location"].rsplit("/", 1)[1]
    fragment = client.post(
        f"/games/{game_id}/moves",
        data={"from": "t5", "to": "t9", "count": "1", "version": "0", "csrftoken": token},
        headers={"HX-Request": "true"},
    )
    assert fragment.status_code == 200, fragment.text
    assert 'id="pile-t5"' in fragment.text and 'id="pile-t9"' in fragment.text
    assert 'id="pile-t1"' not in fragment.text
    assert "HX-Request" in fragment.headers["vary"]
