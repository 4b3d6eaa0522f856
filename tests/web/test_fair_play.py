"""Fair play (contract v2), on SQLite and PostgreSQL: rated and casual games, the same-deal rule
on every route that shows a game, and the ways a record could be copied or scouted.

Every response here also passes the fixtures' hidden-card guard, which holds each one to the
same-deal rule for whoever asked (tests/web/hidden.py).
"""

from __future__ import annotations

import re
from datetime import date
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.engine import DEVELOPMENT_KEY
from app.services import daily
from tests.web.hidden import HiddenCardGuard
from tests.web.support import (
    csrf,
    error_code,
    finish_deal,
    move,
    new_game,
    new_player,
    post,
    start_as,
)

CARD_CODE = re.compile(r"\b[A2-9TJQK][CDHS]\b")
SCOUTED = ("corners", 777)


def read(client: TestClient, url: str, auth: dict[str, str]) -> Any:
    return client.get(url, headers=auth)


def player_stats(client: TestClient, name: str, slug: str) -> dict[str, Any]:
    data = client.get(f"/api/players/{name}").json()
    return next(g for g in data["games"] if g["game"] == slug)


def name_of(client: TestClient, auth: dict[str, str]) -> str:
    game = client.post("/api/games", json={"game": "castles-end", "deal": 1}, headers=auth).json()
    client.post(f"/api/games/{game['id']}/resign", headers=auth)
    return str(game["player"]["name"])


# -- the scouting scenario of issue 14 -------------------------------------------------------------


def test_reading_another_game_of_your_deal_is_refused_and_shows_no_card(api: TestClient) -> None:
    a, b = new_player(api), new_player(api)
    game_a = start_as(api, a, *SCOUTED)
    for version in range(5):  # A deals five cards from the stock to the waste
        answer = move(api, game_a["id"], "stock-waste", version, a)
        assert answer.status_code == 200, answer.text
    dealt = answer.json()["piles"]["waste"]["cards"]
    assert len(dealt) == 5
    start_as(api, b, *SCOUTED)  # B now has the same deal in play
    for url in (
        f"/api/games/{game_a['id']}",
        f"/api/games/{game_a['id']}/replay",
        f"/api/deals/{SCOUTED[0]}/{SCOUTED[1]}",
    ):
        answer = read(api, url, b)
        if url.startswith("/api/deals/"):  # the deal page: counts only, no game
            assert answer.status_code == 200
            assert answer.json()["finished"] == [] and answer.json()["replays_open"] is False
        else:
            assert error_code(answer, 403) == "same_deal_in_play"
            assert answer.json()["error"]["message"] == "Finish your own game of this deal first."
        assert not set(CARD_CODE.findall(answer.text)) & set(dealt), url
    # A stranger to the deal may watch A's game, as A sees it (the waste, never the stock).
    watched = read(api, f"/api/games/{game_a['id']}", new_player(api))
    assert watched.status_code == 200
    assert watched.json()["piles"]["waste"]["cards"] == dealt
    assert watched.json()["piles"]["stock"] == {"count": 43 - 5}


def test_the_browser_gets_a_page_that_says_why(api: TestClient, client: TestClient) -> None:
    other = new_player(api)
    theirs = start_as(api, other, *SCOUTED)
    mine = new_game(client, *SCOUTED)
    for url in (f"/games/{theirs['id']}", f"/games/{theirs['id']}/replay"):
        page = client.get(url)
        assert page.status_code == 403
        assert "Finish your own game first" in page.text
        assert "Finish your own game of this deal first." in page.text
        assert 'class="pile' not in page.text
    # The deal page offers to resume the player's own game instead of a second one.
    deal_page = client.get(f"/deal/{SCOUTED[0]}/{SCOUTED[1]}")
    assert f'href="/games/{mine}"' in deal_page.text and "Resume your game" in deal_page.text
    again = client.post(
        "/games",
        data={"game": SCOUTED[0], "deal": str(SCOUTED[1]), "csrftoken": csrf(client)},
        follow_redirects=False,
    )
    assert again.status_code == 303 and again.headers["location"] == f"/games/{mine}"
    assert "You already have this deal in play" in client.get(f"/games/{mine}").text
    # Once the player's own game is over, the other game opens (as its owner sees it).
    assert post(client, f"/games/{mine}/resign", {}).status_code == 200
    assert client.get(f"/games/{theirs['id']}").status_code == 200


def test_a_move_fragment_is_only_for_the_owner(api: TestClient, client: TestClient) -> None:
    other = new_player(api)
    theirs = start_as(api, other, *SCOUTED)
    new_game(client, *SCOUTED)
    answer = post(client, f"/games/{theirs['id']}/moves", {"move": "deal", "version": "0"})
    assert answer.status_code in (403,)
    assert "Finish your own game" in answer.text or "another player" in answer.text
    assert 'class="pile' not in answer.text


# -- rated and casual ------------------------------------------------------------------------------


def test_a_rated_game_counts_from_the_deal_and_a_chosen_one_never(api: TestClient) -> None:
    me = new_player(api)
    name = name_of(api, me)  # one casual game, resigned: counts for nothing
    assert player_stats(api, name, "castles-end")["played"] == 0
    rated = api.post("/api/games", json={"game": "corners"}, headers=me).json()
    assert rated["rated"] is True and rated["moves"] == 0
    stats = player_stats(api, name, "corners")
    assert (stats["played"], stats["won"]) == (1, 0)  # dealt, not moved: played
    casual = start_as(api, me, "corners", 5)
    assert casual["rated"] is False
    assert player_stats(api, name, "corners")["played"] == 1
    record = api.get(f"/api/players/{name}").json()
    assert {"game": "castles-end", "played": 0, "won": 0} not in record["casual"]


def test_the_resign_and_replay_peek_costs_a_rated_game(api: TestClient) -> None:
    """Deal a rated game, resign before any move: the finished game shows every card. The peek
    counts as a played, lost rated game; the same deal can then only be played casually."""
    me = new_player(api)
    peek = api.post("/api/games", json={"game": "corners"}, headers=me).json()
    ended = api.post(f"/api/games/{peek['id']}/resign", headers=me).json()
    assert ended["status"] == "lost"
    assert len(ended["piles"]["stock"]["cards"]) == 43  # its owner sees every card now
    name = ended["player"]["name"]
    assert (player_stats(api, name, "corners")["played"], ended["rated"]) == (1, True)
    assert peek["deal"] is None and ended["deal"] > 0  # sealed in play, shown once it ends
    again = start_as(api, me, "corners", ended["deal"])
    assert again["rated"] is False
    assert player_stats(api, name, "corners")["played"] == 1


def test_replays_are_copied_by_nobody_who_has_not_finished_the_deal(
    api: TestClient, client: TestClient
) -> None:
    owner, copier, stranger = new_player(api), new_player(api), new_player(api)
    done = start_as(api, owner, "corners", 4242)
    api.post(f"/api/games/{done['id']}/resign", headers=owner)
    start_as(api, copier, "corners", 4242)  # in play: not even the game
    assert error_code(read(api, f"/api/games/{done['id']}/replay", copier), 403) == (
        "same_deal_in_play"
    )
    assert error_code(read(api, f"/api/games/{done['id']}", copier), 403) == "same_deal_in_play"
    # Never played it: the game as its owner saw it, without the log; no replay.
    seen = read(api, f"/api/games/{done['id']}", stranger).json()
    assert "log" not in seen and set(seen["piles"]["stock"]) == {"count"}
    assert error_code(read(api, f"/api/games/{done['id']}/replay", stranger), 403) == (
        "deal_not_finished"
    )
    assert error_code(client.get(f"/api/games/{done['id']}/replay"), 403) == "deal_not_finished"
    page = client.get(f"/games/{done['id']}/replay")
    assert page.status_code == 403 and "Finish this deal first" in page.text
    # Finished it: everything.
    finish_deal(client, "corners", 4242)
    assert client.get(f"/games/{done['id']}/replay").status_code == 200


# -- the deal of the day ---------------------------------------------------------------------------


def test_the_deal_of_the_day_needs_the_deal_key() -> None:
    day = date(2026, 11, 24)
    mine = daily.daily_deals(day, DEVELOPMENT_KEY)
    other = daily.daily_deals(day, b"another server's secret deal key, 32+ bytes")
    assert mine != other
    assert all(1 <= n <= 2**53 - 1 for n in (*mine.values(), *other.values()))
    assert daily.daily_deals(day, DEVELOPMENT_KEY) == mine  # the same all day, for everyone
    assert daily.daily_deals(date(2026, 11, 25), DEVELOPMENT_KEY) != mine


# -- a property: two players on one deal, playing and reading at random ----------------------------

ACTIONS = st.lists(
    st.tuples(st.sampled_from(["move", "read", "replay", "deal_page", "player", "resign"]),
              st.booleans(), st.integers(min_value=0, max_value=30)),
    min_size=4,
    max_size=14,
)  # fmt: skip


@pytest.mark.slow
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(actions=ACTIONS, slug=st.sampled_from(["corners", "quadruple-interchange", "patriarchs"]))
def test_two_players_on_one_deal_never_see_each_others_hidden_cards(
    app: FastAPI, actions: list[tuple[str, bool, int]], slug: str
) -> None:
    guard = HiddenCardGuard(app)
    with TestClient(app, base_url="http://testserver") as client:
        client.event_hooks["response"].append(guard.check)
        players = [new_player(client), new_player(client)]
        deal = 900_000 + len(actions) * 7 + actions[0][2]
        games = [start_as(client, auth, slug, deal) for auth in players]
        names = [g["player"]["name"] for g in games]
        shown = 0  # answers that showed the other player's game
        for action, second, pick in actions:
            me, other = (1, 0) if second else (0, 1)
            auth, mine, theirs = players[me], games[me], games[other]
            if action == "move" and mine["status"] == "playing" and mine["legal_moves"]:
                m = mine["legal_moves"][pick % len(mine["legal_moves"])]
                body = {**m, "version": mine["version"]}
                answer = client.post(f"/api/games/{mine['id']}/moves", json=body, headers=auth)
                assert answer.status_code == 200, answer.text
                games[me] = answer.json()
            elif action == "resign" and mine["status"] == "playing":
                answer = client.post(f"/api/games/{mine['id']}/resign", headers=auth)
                games[me] = answer.json()
            elif action == "read":
                answer = client.get(f"/api/games/{theirs['id']}", headers=auth)
                expected = 403 if mine["status"] == "playing" else 200
                assert answer.status_code == expected, answer.text
                shown += expected == 200
            elif action == "replay":
                answer = client.get(f"/api/games/{theirs['id']}/replay", headers=auth)
                if mine["status"] == "playing":
                    assert error_code(answer, 403) == "same_deal_in_play"
                elif theirs["status"] == "playing":
                    assert error_code(answer, 409) == "game_in_play"
                else:
                    assert answer.status_code == 200, answer.text
                    shown += 1
            elif action == "deal_page":
                client.get(f"/api/deals/{slug}/{deal}", headers=auth)
            elif action == "player":
                client.get(f"/api/players/{names[other]}", headers=auth)
        for auth, g in zip(players, games):  # nothing left in play for a later example
            if g["status"] == "playing":
                assert client.post(f"/api/games/{g['id']}/resign", headers=auth).status_code == 200
    assert guard.same_deal_checks >= shown  # the guard held each of them to the rule


@pytest.mark.parametrize("path", ["/api/games/{id}", "/games/{id}"])
def test_anonymous_readers_see_a_finished_game_as_its_owner_saw_it(
    api: TestClient, client: TestClient, path: str
) -> None:
    game = start_as(api, dict(api.headers), "quadrangle", 31337)
    assert move(api, game["id"], "stock-waste", 0).status_code == 200
    api.post(f"/api/games/{game['id']}/resign")
    answer = client.get(path.format(id=game["id"]))
    assert answer.status_code == 200
    if path.startswith("/api/"):
        assert "log" not in answer.json()
        assert answer.json()["piles"]["stock"] == {"count": 66}
