"""The daily challenge (contract v3, Competition), on SQLite and PostgreSQL: a deal of one's own
per player and UTC day, one clean game, standings by moves over par, streaks of days won, and
the deal sealed until the day ends — against a scout with a second account."""

from __future__ import annotations

import logging
from contextlib import closing
from datetime import timedelta
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import select

from app.db.models import Challenge, CompetitionDeal, DealVerdict
from app.services.challenge import rank_key, streak_of
from app.services.seal import end_of_day
from tests.web.competition_support import GAME, clock_at, ensure_fresh, future_day, win
from tests.web.support import error_code, new_player, post, stored_deal


def start_challenge(api: TestClient, who: dict[str, str]) -> dict[str, Any]:
    answer = api.post(f"/api/daily/{GAME}", headers=who)
    assert answer.status_code == 201, answer.text
    data: dict[str, Any] = answer.json()
    return data


def test_one_clean_challenge_game_a_day(
    app: FastAPI, api: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    ensure_fresh(app, 2)
    me = new_player(api)
    with clock_at(app, monkeypatch, app.state.services.sealer.clock()):
        game = start_challenge(api, me)
        assert game["deal"] is None and game["rated"] is False
        again = api.post(f"/api/daily/{GAME}", headers=me)
        assert error_code(again, 409) == "already_played"
        assert again.json()["error"]["game"] == game["id"]
        hint = api.get(f"/api/games/{game['id']}/hint", headers=me)
        assert error_code(hint, 409) == "not_in_challenge"
        first = win_first_move(api, app, game["id"], me)
        undo = api.post(f"/api/games/{game['id']}/undo", json={}, headers=me)
        assert error_code(undo, 409) == "not_in_challenge", first
        daily = api.get("/api/daily", headers=me).json()
        mine = daily["challenge"][GAME]
        assert mine["your_game"] == game["id"] and mine["streak"] == 0
        assert mine["date"] == app.state.services.challenges.today().isoformat()
        assert mine["ends_at"] == end_of_day(app.state.services.challenges.today()).isoformat()
        # Not entered: a second lifespan's end would close the services this test still uses.
        with closing(TestClient(app, base_url="http://testserver")) as nobody_client:
            anonymous = nobody_client.get("/api/daily")
        assert anonymous.status_code == 200, anonymous.text
        nobody = anonymous.json()["challenge"][GAME]
        assert nobody["your_game"] is None and nobody["streak"] == 0


def win_first_move(api: TestClient, app: FastAPI, game_id: str, who: dict[str, str]) -> str:
    """Plays the first move of the solver's line (so that there is something to undo)."""
    from tests.web.competition_support import solution_of
    from tests.web.support import move

    notation = solution_of(app, game_id)[0]
    version = api.get(f"/api/games/{game_id}", headers=who).json()["version"]
    assert move(api, game_id, notation, version, who).status_code == 200
    return notation


def test_each_player_gets_a_deal_of_their_own_sealed_until_the_day_ends(
    app: FastAPI, api: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    ensure_fresh(app, 3)
    main, second = new_player(api), new_player(api)
    day = future_day(3)
    with clock_at(app, monkeypatch, app.state.services.sealer.clock()) as clock:
        clock.day(day, 9)
        mine = start_challenge(api, main)
        theirs = start_challenge(api, second)
        number, other = stored_deal(app, mine["id"]), stored_deal(app, theirs["id"])
        assert number != other
        with app.state.services.sessions() as db:
            claims = dict(
                db.execute(
                    select(CompetitionDeal.deal, CompetitionDeal.player_id).where(
                        CompetitionDeal.game == GAME, CompetitionDeal.deal.in_([number, other])
                    )
                ).all()
            )
            par = db.scalar(
                select(DealVerdict.par).where(DealVerdict.game == GAME, DealVerdict.deal == number)
            )
        assert claims[number] == mine["player"]["id"] and claims[other] == theirs["player"]["id"]
        # The scout knows the number (suppose it guessed): it cannot deal the cards to itself.
        peek = api.post("/api/games", json={"game": GAME, "deal": number}, headers=second)
        assert error_code(peek, 403) == "deal_sealed"
        assert peek.json()["error"]["opens_at"] == end_of_day(day).isoformat()
        # Nor draw it as a winnable deal, now or ever.
        for _ in range(3):
            drawn = api.post("/api/games", json={"game": GAME, "winnable": True}, headers=second)
            if drawn.status_code == 201:
                assert stored_deal(app, drawn.json()["id"]) not in (number, other)
        won = win(api, app, mine["id"], main)
        assert won["deal"] is None  # still sealed: the number stays hidden once won
        assert "log" not in won or won["log"] is None
        for path in ("/replay", "/solution", "/analysis"):
            refused = api.get(f"/api/games/{mine['id']}{path}", headers=second)
            assert error_code(refused, 403) == "deal_sealed", path
        seen = api.get(f"/api/games/{mine['id']}", headers=second).json()
        assert seen["deal"] is None and set(seen["piles"]["stock"]) <= {"count"}
        page = api.get(f"/api/players/{mine['player']['name']}", headers=second).json()
        assert all(g["deal"] is None for g in page["recent"]), page["recent"]
        board = api.get(f"/api/daily/{GAME}/standings").json()
        assert board["final"] is False
        row = next(r for r in board["standings"] if r["player"] == mine["player"]["name"])
        assert row["rank"] is not None  # a win is ranked while the day runs
        assert row["over_par"] == 0 and row["par"] == par and row["game"] is None
        # The day ends: the seal lifts, the best games open as replays to everyone.
        clock.day(day + timedelta(days=1), 0, 1)
        final = api.get(f"/api/daily/{GAME}/standings", params={"date": day.isoformat()}).json()
        assert final["final"] is True
        row = next(r for r in final["standings"] if r["player"] == mine["player"]["name"])
        assert row["game"] == mine["id"]
        replay = api.get(f"/api/games/{mine['id']}/replay", headers=second)
        assert replay.status_code == 200, replay.text
        assert replay.json()["game"]["deal"] == number


def test_standings_rank_wins_by_moves_over_par_then_active_time() -> None:
    rows = [
        ("slow-win", "won", 30, 20, 90_000),
        ("lost", "lost", 5, 20, 1_000),
        ("at-par", "won", 20, 20, 500_000),
        ("quick-win", "won", 30, 20, 60_000),
        ("playing", "playing", 3, 20, 2_000),
    ]
    ordered = sorted(rows, key=lambda r: rank_key(r[1], r[2], r[3], r[4]))
    assert [r[0] for r in ordered] == ["at-par", "quick-win", "slow-win", "playing", "lost"]


@pytest.mark.slow
def test_streaks_count_utc_days_won_across_day_boundaries_and_time_zones(
    app: FastAPI, api: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    ensure_fresh(app, 4)
    me = new_player(api)
    first = future_day(10)
    challenges = app.state.services.challenges
    with clock_at(app, monkeypatch, app.state.services.sealer.clock()) as clock:
        # 23:50 UTC, then 00:10 UTC: one evening for a player in New York (UTC-5), yet two
        # UTC days, so two days of the streak (deals and days are UTC for everyone).
        clock.day(first, 23, 50)
        win(api, app, start_challenge(api, me)["id"], me)
        clock.day(first + timedelta(days=1), 0, 10)
        game = start_challenge(api, me)
        assert api.get("/api/daily", headers=me).json()["challenge"][GAME]["streak"] == 1
        win(api, app, game["id"], me)
        assert api.get("/api/daily", headers=me).json()["challenge"][GAME]["streak"] == 2
        # The next day, not played yet: the streak holds until the day is over …
        clock.day(first + timedelta(days=2), 18)
        assert api.get("/api/daily", headers=me).json()["challenge"][GAME]["streak"] == 2
        # … a loss does not add to it …
        lost = start_challenge(api, me)
        assert api.post(f"/api/games/{lost['id']}/resign", json={}, headers=me).status_code == 200
        assert challenges.streaks(player_id(app, lost))[GAME] == 2
        # … and a day later it is broken.
        clock.day(first + timedelta(days=3), 1)
        assert api.get("/api/daily", headers=me).json()["challenge"][GAME]["streak"] == 0
        name = lost["player"]["name"]
        clock.day(first + timedelta(days=1), 12)
        page = api.get(f"/players/{name}")
        assert page.status_code == 200
        assert "Corners</a>: a streak of 2 days won" in page.text


def test_the_challenge_page_plays_and_shows_standings_and_streak(
    app: FastAPI, client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    ensure_fresh(app, 2)
    day = future_day(20)
    with clock_at(app, monkeypatch, app.state.services.sealer.clock()) as clock:
        clock.day(day, 8)
        page = client.get(f"/daily/{GAME}/challenge")
        assert page.status_code == 200 and "Play today's challenge" in page.text
        assert 'data-countdown="' + end_of_day(day).isoformat() + '"' in page.text
        started = post(client, f"/daily/{GAME}/challenge", {}, htmx=False)
        assert started.status_code == 303
        game_id = started.headers["location"].rsplit("/", 1)[1]
        again = post(client, f"/daily/{GAME}/challenge", {}, htmx=False)
        assert again.headers["location"] == f"/games/{game_id}"  # back to the one game
        board = client.get(f"/games/{game_id}")
        assert board.status_code == 200
        page = client.get(f"/daily/{GAME}/challenge")
        assert f'href="/games/{game_id}"' in page.text and 'id="standings"' in page.text
        assert f"/games/{game_id}/replay" not in page.text  # replays open after the day
        # The day's standings stay live on the page: it fetches itself and swaps them in.
        assert 'hx-select="#standings-live"' in page.text
        assert 'hx-trigger="every 30s"' in page.text
        past = client.get(f"/daily/{GAME}/challenge?date={(day - timedelta(days=1)).isoformat()}")
        assert past.status_code == 200 and 'id="standings-live"' in past.text
        assert 'hx-trigger="every 30s"' not in past.text  # a day over does not change
        assert client.get(f"/daily/{GAME}/challenge?date=someday").status_code == 422
        assert client.get("/daily/no-such-game/challenge").status_code == 404


def test_the_challenge_page_offers_no_game_its_pool_cannot_deal(client: TestClient) -> None:
    """With no fresh certified deal left (no test certifies a Patriarchs deal), the page says
    so instead of offering a button that could only be refused."""
    page = client.get("/daily/patriarchs/challenge")
    assert page.status_code == 200
    assert "Play today's challenge" not in page.text
    assert "Today's challenge is not ready yet" in page.text
    german = client.get("/daily/patriarchs/challenge?lang=de")
    assert "Die heutige Herausforderung ist noch nicht bereit" in german.text


def player_id(app: FastAPI, game: dict[str, Any]) -> str:
    with app.state.services.sessions() as db:
        found = db.scalar(select(Challenge.player_id).where(Challenge.game_id == game["id"]))
    assert found is not None
    return str(found)


def test_streak_of_counts_unbroken_days() -> None:
    day = future_day(0)
    won = {day - timedelta(days=n) for n in (1, 2, 3, 5)}
    assert streak_of(won, day) == 3  # today not won yet: yesterday's streak holds
    assert streak_of(won | {day}, day) == 4
    assert streak_of(won, day + timedelta(days=1)) == 0


def test_no_fresh_deal_left_is_a_clear_conflict(
    app: FastAPI, api: TestClient, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    me = new_player(api)
    # No test certifies a Patriarchs deal: its pool is empty.
    with caplog.at_level(logging.WARNING, logger="app.services.pool"):
        answer = api.post("/api/daily/patriarchs", headers=me)
    assert error_code(answer, 409) == "no_certified_deals"
    # The player is told what it means for them; the operator's command is in the log.
    message = answer.json()["error"]["message"]
    assert "try again later" in message and "python -m" not in message
    assert "python -m app.cli certify --game patriarchs" in caplog.text
    assert error_code(api.post("/api/daily/no-such-game", headers=me), 422) == "invalid_request"
    assert api.get(f"/api/daily/{GAME}/standings", params={"date": "soon"}).status_code == 422
