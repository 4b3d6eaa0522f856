"""The hidden-card guard itself: it must catch every kind of leak, and it must really run.

Leaks are made by hand from real responses: a JSON state with a face-down card or the stock
filled in, the deal key or a seed pasted in, and a board page in play carrying piles taken from
the page of the same position after the game ended (when every card is shown).
"""

from __future__ import annotations

import copy
import re
from typing import Any

import httpx2 as httpx
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from app.engine import get_ruleset
from app.engine.deals import deal_seed
from tests.web.hidden import HiddenCardGuard, check_event
from tests.web.support import csrf, finish_deal, move, start

HTML = {"content-type": "text/html; charset=utf-8"}


def _json(data: Any) -> httpx.Response:
    return httpx.Response(200, json=data)


def _html(text: str) -> httpx.Response:
    return httpx.Response(200, text=text, headers=HTML)


def _full_view(app: FastAPI, game: dict[str, Any]) -> dict[str, list[str]]:
    """Every card of the game's deal, hidden ones included (the guard's view, not a client's)."""
    rules = get_ruleset(game["game"])
    return rules.full_view(rules.deal(game["deal"], app.state.settings.deal_key_bytes))


def _pile_element(page: str, pile_id: str) -> str:
    match = re.search(rf'<(\w+) id="pile-{pile_id}"[^>]*>.*?</\1>', page, re.S)
    assert match is not None, f"no pile-{pile_id} element"
    return match[0]


def test_the_guard_catches_json_leaks(api: TestClient, app: FastAPI) -> None:
    guard = HiddenCardGuard(app)
    game = start(api, "quadruple-interchange", 1)
    full = _full_view(app, game)
    guard.check(_json(game))  # the honest answer passes
    assert guard.checked_games == 1

    face_down = copy.deepcopy(game)
    t1 = face_down["piles"]["t1"]["cards"]
    hidden = t1.index(None)
    t1[hidden] = full["t1"][hidden]
    stock_cards = copy.deepcopy(game)
    stock_cards["piles"]["stock"]["cards"] = full["stock"]
    stock_top = copy.deepcopy(game)
    stock_top["piles"]["stock"] = {"count": len(full["stock"]), "top": full["stock"][-1]}
    wrong_count = copy.deepcopy(game)
    wrong_count["piles"]["stock"]["count"] -= 1
    log_in_play = {**game, "log": []}
    key = {**game, "note": app.state.settings.deal_key}
    seed = deal_seed(app.state.settings.deal_key_bytes, game["game"], game["deal"])
    seed_hex = {**game, "etag": seed.hex()}
    nested = {"games": [face_down]}
    for leak in (face_down, stock_cards, stock_top, wrong_count, log_in_play, key, seed_hex):
        with pytest.raises(AssertionError):
            guard.check(_json(leak))
    with pytest.raises(AssertionError):
        guard.check(_json(nested))


def test_the_guard_catches_html_leaks(api: TestClient, client: TestClient, app: FastAPI) -> None:
    guard = HiddenCardGuard(app)
    # Two games of the same deal in the same position; the browser player's then ends, which
    # shows them all its cards.
    playing = start(api, "quadruple-interchange", 1)
    ended = finish_deal(client, "quadruple-interchange", 1)
    page = client.get(f"/games/{playing['id']}").text
    shown_all = client.get(f"/games/{ended}").text
    before = guard.checked_games
    guard.check(_html(page))  # the honest page passes
    assert guard.checked_games == before + 1

    leaks = [
        page.replace(_pile_element(page, pid), _pile_element(shown_all, pid))
        for pid in ("stock", "t1")  # the stock's cards; a pile's face-down cards
    ]
    leaks.append(page.replace("</body>", f"<!-- {app.state.settings.deal_key} --></body>"))
    seed = deal_seed(app.state.settings.deal_key_bytes, playing["game"], playing["deal"])
    leaks.append(page.replace("</body>", f'<i data-x="{seed.hex()}"></i></body>'))
    for leak in leaks:
        assert leak != page
        with pytest.raises(AssertionError):
            guard.check(_html(leak))


def test_the_guard_checks_what_a_session_shows(
    api: TestClient, client: TestClient, guard: HiddenCardGuard
) -> None:
    """The fixtures' guard really looks at JSON states, board pages and move fragments."""
    game = start(api, "quadrangle", 1)
    after_json = guard.checked_games
    assert after_json > 0
    assert client.get(f"/games/{game['id']}").status_code == 200
    after_page = guard.checked_games
    assert after_page > after_json, "the guard no longer recognises the board page"
    client.get("/")
    token = csrf(client)
    mine = client.post(
        "/games", data={"game": "quadrangle", "deal": "1", "csrftoken": token}
    ).url.path.rsplit("/", 1)[1]
    after_mine = guard.checked_games
    fragment = client.post(
        f"/games/{mine}/moves",
        data={"from": "t5", "to": "t9", "count": "1", "version": "0", "csrftoken": token},
        headers={"HX-Request": "true"},
    )
    assert fragment.status_code == 200
    assert guard.checked_games > after_mine, "the guard no longer recognises move fragments"
    assert move(api, game["id"], "t5-t9", 0).status_code == 200


def test_the_event_check_catches_cards_and_extra_fields() -> None:
    good = {"player": "Ann", "game": "abc", "moves": 3, "foundation_cards": 5, "status": "playing"}
    check_event("progress", good)
    check_event("race", {"type": "started", "race": {"standings": [good]}})
    bad_events = [
        ("progress", {**good, "top": "KS"}),  # an extra field
        ("race", {"type": "standings", "race": {"last_card": "7H"}}),  # a card code
        ("race", {"race": {"piles": {}}}),  # a field that holds cards
        ("room", {"players": ["Ann", "QD"]}),
        ("gossip", {}),  # no such kind of event
    ]
    for kind, data in bad_events:
        with pytest.raises(AssertionError):
            check_event(kind, data)
