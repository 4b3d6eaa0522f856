"""Events (arenas, contract v3, Competition), on SQLite and PostgreSQL: scheduled by the
operator's command, joined by players who each get deals of their own (sealed until the event
ends), scored 2 a win and double on a streak of two or more wins, standings equal to a recount
from the move logs, and live standings logged once per change for every stream."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import func, select, update

from app.cli import main
from app.config import Settings
from app.db.models import Event, Game
from app.services.arena_standings import score
from app.services.arenas import STANDINGS_KIND, channel
from app.services.recount import recount
from tests.aio import run
from tests.waiting import wait_until
from tests.web.competition_support import GAME, ensure_fresh, win
from tests.web.support import browser_post, error_code, new_player, stored_deal


def create_event(settings: Settings, capsys: pytest.CaptureFixture[str], **kw: Any) -> int:
    starts = kw.get("starts", datetime.now(UTC) - timedelta(minutes=1))
    args = ["event", "create", "--game", GAME, "--starts", starts.isoformat()]
    args += ["--minutes", str(kw.get("minutes", 60))]
    assert main(args, settings) == 0
    out = capsys.readouterr().out
    return int(out.split()[1].rstrip(":"))


def next_game(api: TestClient, event: int, who: dict[str, str]) -> dict[str, Any]:
    answer = api.post(f"/api/events/{event}/next", headers=who)
    assert answer.status_code == 201, answer.text
    data: dict[str, Any] = answer.json()
    return data


def test_scoring_doubles_on_a_streak_of_two_wins() -> None:
    assert score(["won", "won", "won", "lost", "won", "won", "won", "won"]) == (
        20,
        7,
        4,
    )  # 2+2+4, a loss, 2+2+4+4
    assert score(["won", "lost", "won", "playing"]) == (4, 2, 1)
    assert score([]) == (0, 0, 0)


@pytest.mark.slow
def test_an_event_with_three_players_scores_and_recounts(
    app: FastAPI, api: TestClient, settings: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    ensure_fresh(app, 7)
    event = create_event(settings, capsys)
    listed = {e["id"]: e for e in api.get("/api/events").json()["events"]}
    assert listed[event]["status"] == "running" and listed[event]["players"] == 0
    ace, bea, cal = (new_player(api) for _ in range(3))
    assert error_code(api.post(f"/api/events/{event}/next", headers=ace), 403) == "not_a_member"
    for who in (ace, bea, cal):
        assert api.post(f"/api/events/{event}/join", headers=who).json()["players"] >= 1
    first = next_game(api, event, ace)
    assert first["deal"] is None and first["rated"] is False
    again = api.post(f"/api/events/{event}/next", headers=ace)
    assert error_code(again, 409) == "game_in_play"
    hint = api.get(f"/api/games/{first['id']}/hint", headers=ace)
    assert error_code(hint, 409) == "not_in_challenge"
    number = stored_deal(app, first["id"])
    peek = api.post("/api/games", json={"game": GAME, "deal": number}, headers=bea)
    assert error_code(peek, 403) == "deal_sealed"  # nobody else plays it until the end
    before = count_standing_rows(app, event)
    win(api, app, first["id"], ace)
    # Logged once for every client, soon after (a thread of its own publishes, at most every
    # standings_interval_s), not in the request that ended the game.
    wait_until(lambda: count_standing_rows(app, event) == before + 1, "the standings logged")
    for _ in range(2):
        win(api, app, next_game(api, event, ace)["id"], ace)  # the third win scores 4
    b1 = next_game(api, event, bea)
    assert stored_deal(app, b1["id"]) != number
    win(api, app, b1["id"], bea)
    b2 = next_game(api, event, bea)
    assert api.post(f"/api/games/{b2['id']}/resign", json={}, headers=bea).status_code == 200
    c1 = next_game(api, event, cal)  # still playing: no points yet
    table = api.get(f"/api/events/{event}/standings").json()
    rows = [(r["player"], r["points"], r["wins"], r["games"]) for r in table["standings"]]
    names = [api.get(f"/api/games/{g}", headers=h).json()["player"]["name"]
             for g, h in ((first["id"], ace), (b1["id"], bea), (c1["id"], cal))]  # fmt: skip
    assert rows == [(names[0], 8, 3, 3), (names[1], 2, 1, 2), (names[2], 0, 0, 0)]
    wait_until(
        lambda: latest_standings(app, event)["standings"] == table["standings"],
        "the logged standings to count every game ended",
    )
    report = recount(app.state.services)
    assert report.problems == [] and report.events >= 1 and report.games >= 6
    page = api.get(f"/events/{event}")
    assert page.status_code == 200 and 'data-stream="/events/' in page.text
    assert f'href="/events/{event}"' in api.get("/").text
    assert f'href="/events/{event}"' in api.get(f"/players/{names[0]}").text


def test_a_stream_sends_the_logged_standings(
    app: FastAPI, api: TestClient, settings: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    event = create_event(settings, capsys)
    cursor = app.state.services.arenas.last_event_id(event)
    who = new_player(api)
    api.post(f"/api/events/{event}/join", headers=who)
    feed = app.state.services.feed

    async def first_row() -> Any:
        async for row in feed.events(channel(event), cursor):
            return row
        return None

    row = run(asyncio.wait_for(first_row(), 10))
    assert row.kind == STANDINGS_KIND
    assert len(json.loads(row.data)["standings"]) == 1


def test_events_refuse_what_is_not_on(
    app: FastAPI, api: TestClient, settings: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    later = create_event(settings, capsys, starts=datetime.now(UTC) + timedelta(days=2))
    who = new_player(api)
    assert api.post(f"/api/events/{later}/join", headers=who).json()["status"] == "scheduled"
    refused = api.post(f"/api/events/{later}/next", headers=who)
    assert error_code(refused, 409) == "event_not_running"
    assert error_code(api.post("/api/events/999999/join", headers=who), 404) == "not_found"
    args = ["event", "create", "--game", GAME, "--starts", "tomorrow", "--minutes", "5"]
    assert main(args, settings) == 2
    naive = ["event", "create", "--game", GAME, "--starts", "2030-01-01T10:00", "--minutes", "5"]
    assert main(naive, settings) == 2
    series = ["event", "create", "--game", GAME, "--starts", "2030-01-01T10:00Z",
              "--minutes", "60", "--every", "1440", "--times", "3"]  # fmt: skip
    assert main(series, settings) == 0
    assert capsys.readouterr().out.count("event ") == 3


def count_standing_rows(app: FastAPI, event: int) -> int:
    with app.state.services.sessions() as db:
        return int(db.scalar(select(func.count()).where(Event.room_code == channel(event))) or 0)


def latest_standings(app: FastAPI, event: int) -> dict[str, Any]:
    with app.state.services.sessions() as db:
        data = db.scalar(
            select(Event.data).where(Event.room_code == channel(event)).order_by(Event.id.desc())
        )
    assert data is not None
    found: dict[str, Any] = json.loads(data)
    return found


def test_recount_finds_a_game_whose_row_disagrees_with_its_log(
    app: FastAPI, api: TestClient, settings: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    ensure_fresh(app, 1)
    event = create_event(settings, capsys)
    who = new_player(api)
    api.post(f"/api/events/{event}/join", headers=who)
    game = next_game(api, event, who)
    win(api, app, game["id"], who)
    assert main(["recount"], settings) == 0
    assert "0 differences" in capsys.readouterr().out
    with app.state.services.sessions.begin() as db:  # a tampered row: one move fewer
        db.execute(update(Game).where(Game.id == game["id"]).values(moves=Game.moves - 1))
    try:
        assert main(["recount"], settings) == 1
        assert f"MISMATCH game {game['id']}" in capsys.readouterr().out
    finally:
        with app.state.services.sessions.begin() as db:
            db.execute(update(Game).where(Game.id == game["id"]).values(moves=Game.moves + 1))


def test_the_event_page_offers_join_until_joined_then_the_next_deal(
    client: TestClient, settings: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    event = create_event(settings, capsys)
    page = client.get(f"/events/{event}").text
    assert ">Join</button>" in page and "Play my next deal" not in page
    assert browser_post(client, f"/events/{event}/join", {}).status_code in (200, 303)
    page = client.get(f"/events/{event}").text
    assert ">Join</button>" not in page and "Play my next deal" in page
    assert "You have joined this event." in page
