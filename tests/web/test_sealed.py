"""Sealed deals (contract v3), played by the cheater: one person with a main account, a second
account, an anonymous browser and a spectator seat, against a rated game in play, a running race
and today's deal of the day — on SQLite and PostgreSQL.

The scout tries every channel (state, board, fragments, replays, move log, solution, verdict,
deal page, player page, my games, room JSON and page, the spectator view) and must learn no
number and no card that was never face up in its own game; then the seal lifts and everything
opens. The hidden-card guard (tests/web/hidden.py) checks every body besides, with an oracle
of its own: no sealed number anywhere, finished games of a sealed deal no more than in play,
race games nobody's but their owners', and spectator faces seen by every racer.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import func, select

from app.db.models import Player
from app.services import daily
from app.services.rooms.views import Limits
from app.services.seal import end_of_day
from tests.web.hidden import HiddenCardGuard
from tests.web.support import (
    browser_post,
    error_code,
    new_game,
    new_player,
    start_as,
    stored_deal,
)

CARD_BACK = '<li class="b" aria-label="face-down card"></li>'


@pytest.fixture()
def scout(app: FastAPI, guard: HiddenCardGuard) -> Iterator[TestClient]:
    """An anonymous browser, checked like every other client."""
    with TestClient(app, base_url="http://testserver") as c:
        c.event_hooks["response"].append(guard.check)
        yield c


def players(app: FastAPI) -> int:
    with app.state.services.sessions() as db:
        return int(db.scalar(select(func.count()).select_from(Player)) or 0)


def everything_a_scout_reads(
    api: TestClient, scout: TestClient, game_id: str, owner: str, *auths: dict[str, str]
) -> list[Any]:
    """Every read of one game and its owner, as each account and an anonymous browser."""
    answers = []
    for auth in ({}, *auths):
        for path in ("", "/replay", "/solution"):
            answers.append(api.get(f"/api/games/{game_id}{path}", headers=auth))
    for path in ("", "/board", "/replay", "/solution"):
        answers.append(scout.get(f"/games/{game_id}{path}"))
    answers.append(scout.get(f"/players/{owner}"))
    answers.append(api.get(f"/api/players/{owner}"))
    return answers


# -- a rated game in play --------------------------------------------------------------------


def test_a_rated_game_hides_its_number_from_everyone_until_it_ends(
    app: FastAPI, api: TestClient, scout: TestClient, guard: HiddenCardGuard
) -> None:
    main, second = new_player(api), new_player(api)
    game = api.post("/api/games", json={"game": "corners"}, headers=main).json()
    number, owner = stored_deal(app, game["id"]), game["player"]["name"]
    assert game["deal"] is None and game["rated"] is True
    for answer in everything_a_scout_reads(api, scout, game["id"], owner, main, second):
        assert str(number) not in answer.text
        # 409: no replay of a game in play; 204: the board fragment, nothing new to send
        assert answer.status_code in (200, 204, 409), answer.text
    assert api.get("/api/players/" + owner).json()["recent"][0]["deal"] is None
    # Suppose the scout guessed the number anyway: the deal is sealed while the game is on.
    deal_page = api.get(f"/api/deals/corners/{number}", headers=second).json()
    assert deal_page["sealed"]["kind"] == "rated" and deal_page["sealed"]["opens_at"] is None
    peek = start_as(api, second, "corners", number)
    assert api.post(f"/api/games/{peek['id']}/resign", headers=second).status_code == 200
    resigned = api.get(f"/api/games/{peek['id']}", headers=second).json()
    assert set(resigned["piles"]["stock"]) == {"count"} and "log" not in resigned
    assert "deal_winnable" not in resigned or resigned["deal_winnable"] is None
    for path in ("/replay", "/solution"):
        refused = api.get(f"/api/games/{peek['id']}{path}", headers=second)
        assert error_code(refused, 403) == "deal_sealed"
        assert "when the rated game on it ends" in refused.json()["error"]["message"]
    page = scout.get(f"/deal/corners/{number}").text
    assert 'id="sealed-note"' in page and "Fewest moves" not in page

    # The rated game ends: its number and every card open, for everyone.
    ended = api.post(f"/api/games/{game['id']}/resign", headers=main).json()
    assert ended["deal"] == number and len(ended["piles"]["stock"]["cards"]) == 43
    assert api.get(f"/api/games/{game['id']}").json()["deal"] == number
    opened = api.get(f"/api/games/{peek['id']}", headers=second).json()
    assert len(opened["piles"]["stock"]["cards"]) == 43 and "log" in opened
    assert api.get(f"/api/games/{peek['id']}/replay", headers=second).status_code == 200
    assert "sealed" not in api.get(f"/api/deals/corners/{number}").json()
    assert guard.number_checks >= 4 and guard.sealed_checks >= 1


def test_a_rated_board_and_my_games_show_no_number(
    app: FastAPI, client: TestClient, scout: TestClient
) -> None:
    started = browser_post(client, "/games", {"game": "patriarchs", "deal": ""})
    game_id = started.headers["location"].rsplit("/", 1)[1]
    number = stored_deal(app, game_id)
    board = client.get(f"/games/{game_id}").text
    assert "rated deal" in board and "Share this deal" not in board
    for page in (board, client.get("/my-games").text, client.get("/").text):
        assert str(number) not in page and "/deal/patriarchs/" not in page.split("Deal of")[0]
    assert str(number) not in scout.get(f"/games/{game_id}").text
    assert browser_post(client, f"/games/{game_id}/resign", {}).status_code == 303
    assert f"deal {number}" in client.get(f"/games/{game_id}").text
    assert f"/deal/patriarchs/{number}" in client.get("/my-games").text


# -- a running race ----------------------------------------------------------------------------

DEAL = 6_202_511_250_000_017


@pytest.fixture()
def race(app: FastAPI, api: TestClient, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """A Corners race of two racers on a known deal; the spectator is a third account."""
    monkeypatch.setattr(app.state.services.rooms, "limits", Limits(countdown_s=0))
    # A deal of this test's own: a race another test left running seals the deal it shares.
    deal = DEAL + secrets.randbelow(10**9)
    monkeypatch.setattr(app.state.services.games, "draw_deal", lambda: deal)
    names = [f"r{secrets.token_hex(5)}" for _ in range(2)]
    host, guest = (new_player(api, n) for n in names)
    watcher = new_player(api)
    code = api.post("/api/rooms", json={"game": "corners"}, headers=host).json()["code"]
    assert api.post(f"/api/rooms/{code}/join", headers=guest).status_code == 200
    games = api.post(f"/api/rooms/{code}/start", headers=host).json()["race"]["games"]
    return {"code": code, "host": host, "guest": guest, "watcher": watcher, "deal": deal,
            "lead": games[names[0]], "trail": games[names[1]]}  # fmt: skip


def test_a_running_race_is_sealed_against_every_other_seat(
    app: FastAPI,
    api: TestClient,
    scout: TestClient,
    race: dict[str, Any],
    guard: HiddenCardGuard,
) -> None:
    code, lead, trail, deal = race["code"], race["lead"], race["trail"], race["deal"]
    host, guest, watcher = race["host"], race["guest"], race["watcher"]
    # The leader deals a card the trailing racer has not seen.
    dealt = api.post(f"/api/games/{lead}/moves", headers=host,
                     json={"from": "stock", "to": "waste", "count": 1, "version": 0})  # fmt: skip
    assert dealt.status_code == 200, dealt.text
    card = dealt.json()["piles"]["waste"]["cards"][-1]
    assert dealt.json()["deal"] is None

    room = api.get(f"/api/rooms/{code}", headers=watcher).json()
    assert room["race"]["deal"] is None and str(deal) not in scout.get(f"/rooms/{code}").text
    seats: list[dict[str, str]] = [{}, guest, watcher]  # anonymous, a racer, a spectator
    for auth in seats:
        for path in ("", "/replay", "/solution"):
            answer = api.get(f"/api/games/{lead}{path}", headers=auth)
            assert error_code(answer, 403) == "race_in_play", path
    for path in ("", "/board", "/replay", "/solution"):
        assert scout.get(f"/games/{lead}{path}").status_code == 403
    # The spectator view: the waste card only the leader has seen is drawn face down.
    watch = scout.get(f"/rooms/{code}/watch/{lead}")
    assert watch.status_code == 200
    waste = watch.text.split('id="pile-waste"', 1)[1].split("</ol>", 1)[0]
    assert CARD_BACK in waste and str(deal) not in watch.text
    fragment = scout.get(f"/rooms/{code}/watch/{lead}/board").text
    assert CARD_BACK in fragment.split('id="pile-waste"', 1)[1].split("</ol>", 1)[0]
    # Once the trailing racer has dealt it too, the spectator sees it.
    assert api.post(f"/api/games/{trail}/moves", headers=guest,
                    json={"from": "stock", "to": "waste", "count": 1, "version": 0}
                    ).status_code == 200  # fmt: skip
    from_now = scout.get(f"/rooms/{code}/watch/{lead}/board").text
    assert CARD_BACK not in from_now.split('id="pile-waste"', 1)[1].split("</ol>", 1)[0]
    assert card and guard.spectator_checks > 0  # the guard checked each face shown

    # The leader resigns while the race goes on: still sealed, for the leader too.
    out = api.post(f"/api/games/{lead}/resign", headers=host).json()
    assert out["deal"] is None and set(out["piles"]["stock"]) == {"count"} and "log" not in out
    assert error_code(api.get(f"/api/games/{lead}/replay", headers=host), 403) == "deal_sealed"
    assert api.get("/api/players/" + out["player"]["name"]).json()["recent"][0]["deal"] is None

    # The race ends: everything opens.
    assert api.post(f"/api/games/{trail}/resign", headers=guest).status_code == 200
    assert api.get(f"/api/rooms/{code}").json()["race"]["deal"] == deal
    whole = api.get(f"/api/games/{lead}", headers=host).json()
    assert whole["deal"] == deal and "cards" in whole["piles"]["stock"] and "log" in whole
    assert api.get(f"/api/games/{lead}/replay", headers=host).status_code == 200
    assert api.get(f"/api/games/{lead}", headers=watcher).status_code == 200


def test_a_cookieless_watch_page_makes_no_player(
    app: FastAPI, api: TestClient, race: dict[str, Any]
) -> None:
    before = players(app)
    with TestClient(app, base_url="http://testserver") as fresh:
        assert fresh.get(f"/rooms/{race['code']}/watch/{race['lead']}").status_code == 200
        assert fresh.get(f"/rooms/{race['code']}/watch/{race['lead']}/board").status_code == 200
        assert fresh.get(f"/games/{race['trail']}/board").status_code == 403
        assert fresh.get(f"/rooms/{race['code']}").status_code == 200
    assert players(app) == before


def test_no_cookieless_get_makes_a_player(
    app: FastAPI, api: TestClient, race: dict[str, Any]
) -> None:
    """The app's GET pages and answers, read by a browser without a cookie, on a room, a race
    game and a player that exist (the event stream is in tests/web/pages/test_live.py)."""
    name = api.get("/api/me/export", headers=race["host"]).json()["player"]["name"]
    code, lead = race["code"], race["lead"]
    paths = ["/", "/my-games", "/account", "/rules", "/rules/corners", "/leaderboard",
             "/deal/corners/7", "/daily/corners", f"/players/{name}", f"/rooms/{code}",
             f"/rooms/{code}/watch/{lead}", f"/rooms/{code}/watch/{lead}/board",
             f"/games/{lead}", f"/games/{lead}/board", f"/games/{lead}/replay",
             f"/games/{lead}/solution", f"/games/{lead}/analysis", "/account/export",
             f"/api/games/{lead}", f"/api/games/{lead}/replay", f"/api/games/{lead}/analysis",
             f"/api/rooms/{code}", f"/api/players/{name}", "/api/deals/corners/7",
             "/api/leaderboard?game=corners", "/api/daily", "/healthz"]  # fmt: skip
    before = players(app)
    for path in paths:
        with TestClient(app, base_url="http://testserver") as fresh:
            assert fresh.get(path, follow_redirects=False).status_code < 500, path
    assert players(app) == before


# -- the deal of the day --------------------------------------------------------------------------


def test_the_deal_of_the_day_is_sealed_until_the_day_ends(
    app: FastAPI, api: TestClient, scout: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    games = app.state.services.games
    today = games.sealer.today()
    number = daily.daily_deal("corners", today, app.state.settings.deal_key_bytes)
    scout_a, scout_b = new_player(api), new_player(api)
    peek = start_as(api, scout_a, "corners", number)
    assert peek["deal"] == number  # the deal of the day's number is public; its cards are not
    dealt = api.post(f"/api/games/{peek['id']}/moves", headers=scout_a,
                     json={"from": "stock", "to": "waste", "count": 1, "version": 0})  # fmt: skip
    assert dealt.status_code == 200, dealt.text
    ended = api.post(f"/api/games/{peek['id']}/resign", headers=scout_a).json()
    assert set(ended["piles"]["stock"]) == {"count"} and "log" not in ended
    anonymous: dict[str, str] = {}
    for who in (scout_a, scout_b, anonymous):
        refused = api.get(f"/api/games/{peek['id']}/replay", headers=who)
        assert error_code(refused, 403) in ("deal_sealed", "deal_not_finished")
    sealed = api.get(f"/api/games/{peek['id']}/solution", headers=scout_a)
    assert error_code(sealed, 403) == "deal_sealed"
    assert sealed.json()["error"]["opens_at"] == end_of_day(today).isoformat()
    seen_by_b = api.get(f"/api/games/{peek['id']}", headers=scout_b).json()
    assert set(seen_by_b["piles"]["stock"]) == {"count"}
    # The board and its fragment, as an anonymous browser (the guard compares every pile with
    # the public view), and the scout's player page.
    board = scout.get(f"/games/{peek['id']}")
    assert board.status_code == 200 and "sealed while a competition" in board.text
    assert scout.get(f"/games/{peek['id']}/board").status_code in (200, 204)
    player = api.get(f"/api/players/{ended['player']['name']}").json()
    assert player["recent"][0]["link"] is None  # no replay to follow while sealed
    # Its owner is led to the board, shown as if in play, not to a replay that would be refused.
    own = api.get(f"/api/players/{ended['player']['name']}", headers=scout_a).json()
    assert own["recent"][0]["link"] == f"/games/{peek['id']}"
    deal_page = api.get(f"/api/deals/corners/{number}", headers=scout_a).json()
    assert deal_page["sealed"]["kind"] == "daily" and deal_page["finished"] == []
    assert "Watch the solution" not in scout.get(f"/deal/corners/{number}").text

    # The next day: the seal lifts.
    tomorrow = today + timedelta(days=1)
    monkeypatch.setattr(games.sealer, "today", lambda: tomorrow)
    opened = api.get(f"/api/games/{peek['id']}", headers=scout_a).json()
    assert len(opened["piles"]["stock"]["cards"]) == 42 and opened["log"] == ["stock-waste"]
    assert api.get(f"/api/games/{peek['id']}/replay", headers=scout_a).status_code == 200
    assert "sealed" not in api.get(f"/api/deals/corners/{number}").json()
    own = api.get(f"/api/players/{ended['player']['name']}", headers=scout_a).json()
    assert own["recent"][0]["link"] == f"/games/{peek['id']}/replay"


# -- the coach, the export and the lists, against a running race and the deal of the day -------


def test_analysis_try_again_and_export_keep_a_running_race_sealed(
    app: FastAPI, api: TestClient, scout: TestClient, race: dict[str, Any]
) -> None:
    code, lead, trail, deal = race["code"], race["lead"], race["trail"], race["deal"]
    host, guest, watcher = race["host"], race["guest"], race["watcher"]
    assert api.post(f"/api/games/{lead}/moves", headers=host,
                    json={"from": "stock", "to": "waste", "count": 1, "version": 0}
                    ).status_code == 200  # fmt: skip
    anonymous: dict[str, str] = {}
    for auth in (anonymous, guest, watcher):
        assert error_code(api.get(f"/api/games/{lead}/analysis", headers=auth), 403) == (
            "race_in_play"
        )
    for auth in (guest, watcher):
        tried = api.post(f"/api/games/{lead}/try-again", headers=auth)
        assert error_code(tried, 403) == "race_in_play"
        assert api.get(f"/api/games/{lead}/hint", headers=auth).status_code == 403
    assert scout.get(f"/games/{lead}/analysis").status_code == 403

    # The leader is out while the race goes on: the coach waits for the race, for them too.
    out = api.post(f"/api/games/{lead}/resign", headers=host).json()
    for answer in (
        api.get(f"/api/games/{lead}/analysis", headers=host),
        api.post(f"/api/games/{lead}/try-again", headers=host),
    ):
        assert error_code(answer, 403) == "deal_sealed"
        assert "when the race on it ends" in answer.json()["error"]["message"]
    name = out["player"]["name"]
    for text in (
        api.get("/api/me/export", headers=host).text,
        api.get(f"/api/players/{name}", headers=watcher).text,
        scout.get(f"/players/{name}").text,
        api.get(f"/api/rooms/{code}", headers=host).text,
        scout.get(f"/rooms/{code}").text,
        api.get("/api/leaderboard?game=corners").text,
    ):
        assert str(deal) not in text
    assert [g["deal"] for g in api.get("/api/me/export", headers=host).json()["games"]] == [None]

    # The race ends: the coach opens.
    assert api.post(f"/api/games/{trail}/resign", headers=guest).status_code == 200
    assert api.get(f"/api/games/{lead}/analysis", headers=host).status_code == 200
    assert [g["deal"] for g in api.get("/api/me/export", headers=host).json()["games"]] == [deal]


def test_analysis_and_try_again_of_the_deal_of_the_day_wait_for_the_next_day(
    app: FastAPI, api: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    games = app.state.services.games
    today = games.sealer.today()
    number = daily.daily_deal("corners", today, app.state.settings.deal_key_bytes)
    scout_a, scout_b = new_player(api), new_player(api)
    peek = start_as(api, scout_a, "corners", number)
    assert api.post(f"/api/games/{peek['id']}/resign", headers=scout_a).status_code == 200
    finished_b = start_as(api, scout_b, "corners", number)
    assert api.post(f"/api/games/{finished_b['id']}/resign", headers=scout_b).status_code == 200
    for who in (scout_a, scout_b):  # the owner, and a player who has finished the deal
        for answer in (
            api.get(f"/api/games/{peek['id']}/analysis", headers=who),
            api.post(f"/api/games/{peek['id']}/try-again", headers=who),
        ):
            assert error_code(answer, 403) == "deal_sealed"
            assert answer.json()["error"]["opens_at"] == end_of_day(today).isoformat()
    assert error_code(api.get(f"/api/games/{peek['id']}/analysis"), 403) in (
        "deal_sealed",
        "deal_not_finished",
    )
    tomorrow = today + timedelta(days=1)
    monkeypatch.setattr(games.sealer, "today", lambda: tomorrow)
    assert api.get(f"/api/games/{peek['id']}/analysis", headers=scout_a).status_code == 200
    assert api.get(f"/api/games/{peek['id']}/analysis", headers=scout_b).status_code == 200


def test_my_games_offers_no_replay_of_a_sealed_deal_until_it_opens(
    app: FastAPI, client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    games = app.state.services.games
    today = games.sealer.today()
    number = daily.daily_deal("corners", today, app.state.settings.deal_key_bytes)
    game_id = new_game(client, "corners", number)
    assert browser_post(client, f"/games/{game_id}/resign", {}).status_code == 303
    page = client.get("/my-games").text
    assert f'href="/games/{game_id}"' in page and f"/games/{game_id}/replay" not in page
    tomorrow = today + timedelta(days=1)
    monkeypatch.setattr(games.sealer, "today", lambda: tomorrow)
    assert f"/games/{game_id}/replay" in client.get("/my-games").text
