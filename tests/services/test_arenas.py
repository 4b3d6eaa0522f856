"""An event's standings are published off the request that ended a game, and folded: changes
that come while a publication runs make one more publication, not one each; the database's
scoring of the table (one row per player) is the scoring rule's own."""

from __future__ import annotations

import random
import secrets
import threading
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from fastapi import FastAPI
from sqlalchemy import delete, insert

from app.db.models import ArenaGame, Game
from app.engine import Status
from app.services.arena_standings import score
from app.services.arenas import Arenas
from tests.waiting import wait_until


def arenas_publishing(
    monkeypatch: pytest.MonkeyPatch,
) -> tuple[Arenas, list[int], threading.Event, threading.Event]:
    arenas = Arenas(sessions=Any, games=Any, deal_key=b"")  # type: ignore[arg-type]
    published: list[int] = []
    started, release = threading.Event(), threading.Event()

    def publish(arena_id: int) -> None:
        started.set()
        release.wait(30)  # the first publication is still running while more games end
        published.append(arena_id)

    monkeypatch.setattr(arenas, "publish_standings", publish)
    return arenas, published, started, release


def test_changes_during_a_publication_are_folded_into_the_next(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    arenas, published, started, release = arenas_publishing(monkeypatch)
    arenas.standings_changed(1)  # returns at once: the publication runs in a thread
    assert started.wait(30) and published == []
    for arena_id in (1, 1, 2, 1):
        arenas.standings_changed(arena_id)
    release.set()
    wait_until(lambda: not arenas._publishing, "the publishing thread to finish")
    # The first publication, then one for each event that changed meanwhile.
    assert published == [1, 1, 2]
    arenas.standings_changed(2)  # a later change starts a publication again
    wait_until(lambda: published == [1, 1, 2, 2], "the next publication")


def test_a_failed_publication_is_logged_and_the_next_change_publishes(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    arenas, published, _, release = arenas_publishing(monkeypatch)
    release.set()
    calls = iter([RuntimeError("database away")])

    def flaky(arena_id: int) -> None:
        failure = next(calls, None)
        if failure is not None:
            raise failure
        published.append(arena_id)

    monkeypatch.setattr(arenas, "publish_standings", flaky)
    arenas.standings_changed(7)
    wait_until(lambda: not arenas._publishing, "the publishing thread to finish")
    assert published == [] and "publishing the standings of event 7 failed" in caplog.text
    arenas.standings_changed(7)
    wait_until(lambda: published == [7], "the next publication")


def test_the_database_scores_the_standings_as_the_rule_does(app: FastAPI) -> None:
    """Runs of wins broken by losses, games in play between them, players with no game yet:
    each player's points, wins, streak, finished games and active time as :func:`score`
    and a sum over the games give them, on SQLite and PostgreSQL alike."""
    services = app.state.services
    arenas: Arenas = services.arenas
    now = datetime.now(UTC)
    event = arenas.create("corners", now - timedelta(minutes=1), 60)[0].id
    rng = random.Random(28)
    fixed = [
        ["won", "won", "won", "lost", "won", "won", "won", "won"],
        ["won", "playing", "won", "won", "lost", "lost", "won"],
        ["lost", "won", "won"],
        ["playing"],
        [],
    ]
    runs = fixed + [
        [rng.choice(["won", "won", "lost", "playing"]) for _ in range(rng.randint(0, 12))]
        for _ in range(25)
    ]
    players = []
    for n in range(len(runs)):
        player, _ = services.players.create_api_player(f"scorer{n}-{secrets.token_hex(3)}")
        arenas.join(event, player.id)
        players.append(player)
    expected = {}
    inserted: list[str] = []
    try:
        with services.sessions.begin() as db:  # one transaction: SQLite has one writer at a time
            for player, results in zip(players, runs, strict=True):
                active = 0
                for seq, status in enumerate(results, 1):
                    game_id = secrets.token_hex(8)
                    inserted.append(game_id)
                    ms = rng.randint(1, 10_000)
                    ended = status != Status.PLAYING
                    active += ms if ended else 0
                    db.execute(
                        insert(Game).values(
                            id=game_id, player_id=player.id, game="corners", deal=seq, rules="1",
                            state="", status=status, created_at=now, updated_at=now,
                            active_ms=ms, duration_ms=ms if ended and seq % 2 else None,
                            competition="event",
                        )
                    )  # fmt: skip
                    db.execute(
                        insert(ArenaGame).values(
                            game_id=game_id, arena_id=event, player_id=player.id, seq=seq
                        )
                    )
                finished = sum(r != Status.PLAYING for r in results)
                expected[player.name] = (*score(results), finished, active)
        _, table = arenas.standings(event)
        got = {s.player: (s.points, s.wins, s.streak, s.games, s.active_ms) for s in table}
        assert got == expected
        assert [s.rank for s in table] == list(range(1, len(runs) + 1))
        keys = [(-s.points, -s.wins, s.active_ms, s.player) for s in table]
        assert keys == sorted(keys)
    finally:
        # Games made up for the rule (no deal, no move log) leave the shared database: the
        # replay checks read every game in it (tests/services/test_replays.py).
        with services.sessions.begin() as db:
            db.execute(delete(ArenaGame).where(ArenaGame.game_id.in_(inserted)))
            db.execute(delete(Game).where(Game.id.in_(inserted)))
