"""Player changes heard by every process (migration 0015's trigger, ``PostgresBroker``'s LISTEN
on ``ph_players``, ``Players.changed`` and ``Players.feed``).

Two brokers and two players services on one database stand for two worker processes: what one
changes, or an operator changes by hand, the other forgets as the change commits, not after
its short lifetimes; a change rolled back, or one that touches nothing remembered, is not
announced; and when a process stops hearing, it forgets everything and keeps what it reads
for seconds only until it hears again."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from sqlalchemy import Engine, create_engine, text

from app.db.broker import LISTENER_NAME, PostgresBroker
from app.db.session import make_sessionmaker
from app.services.players import Players
from tests.aio import run
from tests.databases import fresh_postgres_database, migrate
from tests.waiting import wait_until_async

pytestmark = pytest.mark.postgres  # a database of its own on the test server


@pytest.fixture(scope="module")
def engine() -> Iterator[Engine]:
    url = fresh_postgres_database(f"ph_players_{os.environ.get('PYTEST_XDIST_WORKER', 'm')}")
    migrate(url)
    engine = create_engine(url)
    yield engine
    engine.dispose()


class Process:
    """What one worker process has: its broker and its players service, watching it."""

    def __init__(self, engine: Engine) -> None:
        self.broker = PostgresBroker(engine, retry_s=0.05)
        self.players = Players(make_sessionmaker(engine))
        self.heard: list[str] = []
        self.live: list[bool] = []
        self.broker.watch_players(self.players.changed, self.players.feed)
        self.broker.watch_players(self.heard.extend, self.live.append)

    async def start(self) -> None:
        await self.broker.start()
        await wait_until_async(lambda: self.live == [True], "listening")

    async def stop(self) -> None:
        await self.broker.stop()


def _execute(engine: Engine, sql: str, **params: object) -> None:
    with engine.begin() as db:
        db.execute(text(sql), params)


def test_a_revocation_in_one_process_is_forgotten_at_once_in_the_other(engine: Engine) -> None:
    async def scenario() -> None:
        a, b = Process(engine), Process(engine)
        await a.start()
        await b.start()
        try:
            player, token = a.players.create_api_player("kim")
            assert b.players.session_version(player.id) == 0
            assert b.players.id_for_token(token) == player.id
            a.players.revoke_sessions(player.id)
            await wait_until_async(
                lambda: b.players.cached_session_version(player.id) is None, "forgotten"
            )
            assert b.players.cached_token_owner(token) is None
            assert b.players.session_version(player.id) == 1  # read again: the new version
            assert a.heard.count(player.id) == b.heard.count(player.id) == 1  # both processes
        finally:
            await a.stop()
            await b.stop()

    run(scenario())


def test_every_kind_of_change_is_announced_and_nothing_else(engine: Engine) -> None:
    """By an operator's SQL as much as by the app: the token, the sessions, the preferences;
    not a rename, not a change rolled back."""

    async def scenario() -> None:
        watcher = Process(engine)
        await watcher.start()
        try:
            player, _ = watcher.players.create_api_player("lee")
            where = {"id": player.id}
            _execute(engine, "UPDATE player SET name = 'lee2' WHERE id = :id", **where)
            with pytest.raises(RuntimeError), engine.begin() as db:
                db.execute(text("UPDATE player SET session_version = 5 WHERE id = :id"), where)
                raise RuntimeError("rolled back")
            _execute(engine, "UPDATE player SET prefs = prefs WHERE id = :id", **where)
            for change in (
                "UPDATE player SET session_version = session_version + 1 WHERE id = :id",
                "UPDATE player SET token_hash = NULL WHERE id = :id",
                "UPDATE player SET prefs = 'dark' WHERE id = :id",
            ):
                _execute(engine, change, **where)
                # Notifications arrive in commit order: any of the changes above that should
                # not be announced would be heard before this one.
                await wait_until_async(lambda: watcher.heard, change)
                assert watcher.heard == [player.id], change
                watcher.heard.clear()
        finally:
            await watcher.stop()

    run(scenario())


def test_a_process_that_stops_hearing_forgets_everything_until_it_hears_again(
    engine: Engine,
) -> None:
    async def scenario() -> None:
        watcher = Process(engine)
        await watcher.start()
        try:
            player, token = watcher.players.create_api_player("max")
            watcher.players.id_for_token(token)
            watcher.players.session_version(player.id)
            _execute(
                engine,
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE datname = current_database() AND application_name = :name",
                name=LISTENER_NAME,
            )
            await wait_until_async(lambda: watcher.live[1:2] == [False], "the drop noticed")
            assert watcher.players.cached_session_version(player.id) is None
            assert watcher.players.cached_token_owner(token) is None
            await wait_until_async(lambda: watcher.live[2:] == [True], "listening again")
            assert watcher.broker.reconnects == 1
            # Heard again: a change reaches this process as before.
            watcher.players.session_version(player.id)
            _execute(
                engine,
                "UPDATE player SET session_version = session_version + 1 WHERE id = :id",
                id=player.id,
            )
            await wait_until_async(
                lambda: watcher.players.cached_session_version(player.id) is None, "forgotten"
            )
        finally:
            await watcher.stop()
        assert watcher.live[-1] is False  # stopped: nothing is heard any more

    run(scenario())


def test_without_the_trigger_a_process_keeps_the_short_lifetimes(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A database not yet migrated to 0015 announces nothing: the broker must not tell the
    watchers that every change is heard."""
    url = fresh_postgres_database(f"ph_players_0014_{os.environ.get('PYTEST_XDIST_WORKER', 'm')}")
    migrate(url, "0014")
    engine = create_engine(url)

    async def scenario() -> None:
        watcher = Process(engine)
        try:
            await watcher.broker.start()
            await wait_until_async(watcher.broker.listening.is_set, "listening")
            assert watcher.live == []
        finally:
            await watcher.broker.stop()

    try:
        run(scenario())
    finally:
        engine.dispose()
    assert "migration 0015 not run" in caplog.text
