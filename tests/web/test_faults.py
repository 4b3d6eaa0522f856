"""The database unavailable: 503 with Retry-After (never a 500), the one-retry rule of moves,
unknown outcomes settled by the Idempotency-Key, and no request lost to a stale pooled
connection. Connection failures are simulated at the move transaction's seams on both
databases, and made real on PostgreSQL (``pg_terminate_backend``, a held row lock)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from app.config import Settings
from app.db.faults import Disconnected, OutcomeUnknown
from app.main import create_app
from app.services.games import Games
from tests.aio import run
from tests.databases import require_postgres
from tests.web.hidden import HiddenCardGuard
from tests.web.support import error_code, log_rows, move, snapshot, start


def _first_legal(game: dict[str, Any]) -> str:
    m = game["legal_moves"][0]
    return f"{m['from']}-{m['to']}" + (f"/{m['count']}" if m["count"] != 1 else "")


def _unavailable(response: Any) -> None:
    assert error_code(response, 503) == "unavailable"
    assert int(response.headers["retry-after"]) >= 1


# -- the database cannot be reached at all --------------------------------------------------


def _unreachable_url(backend: str, tmp_path: Path) -> str:
    if backend == "postgres":
        require_postgres()
        import socket

        with socket.socket() as s:  # a port nobody listens on
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        return f"postgresql+psycopg://postgres@127.0.0.1:{port}/nothing"
    directory = tmp_path / "not-a-database.db"
    directory.mkdir()  # SQLite cannot open a directory: "unable to open database file"
    return f"sqlite:///{directory}"


@pytest.fixture()
def down_app(backend: str, tmp_path: Path) -> Iterator[FastAPI]:
    application = create_app(
        Settings(app_env="test", database_url=_unreachable_url(backend, tmp_path))
    )
    yield application
    application.state.services.engine.dispose()
    application.state.services.move_store.close()


def test_unreachable_database_answers_503_everywhere(
    down_app: FastAPI, caplog: pytest.LogCaptureFixture
) -> None:
    guard = HiddenCardGuard(down_app)
    with TestClient(down_app) as c, caplog.at_level(logging.WARNING):
        c.event_hooks["response"].append(guard.check)
        errors_before = _db_errors(c.get("/metrics").text)
        _unavailable(c.post("/api/players", json={}))
        _unavailable(c.get("/api/games/abcdefghijklmnop"))
        _unavailable(c.get("/api/leaderboard"))
        _unavailable(
            c.post(
                "/api/games/abcdefghijklmnop/moves",
                json={"from": "t1", "to": "f1", "version": 0},
                headers={"Authorization": "Bearer whatever"},
            )
        )
        page = c.get("/leaderboard", headers={"Accept": "text/html"})
        assert page.status_code == 503
        assert page.headers["content-type"].startswith("text/html")
        assert "Back in a moment" in page.text and "try again" in page.text
        assert int(page.headers["retry-after"]) >= 1
        health = c.get("/healthz")
        assert health.status_code == 503
        assert health.json() == {"status": "database unavailable"}
        assert _db_errors(c.get("/metrics").text) - errors_before == 5
    lines = [r for r in caplog.records if r.name == "patience_hall.faults"]
    assert len(lines) == 5  # one line per failed request (healthz says it in its answer)
    assert all(r.exc_info is None and "\n" not in r.getMessage() for r in lines)
    assert all(r.getMessage().startswith("database unavailable: ") for r in lines)


def test_the_room_sweeper_logs_one_line_while_the_database_is_away(
    backend: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The background sweep (forfeits, idle rooms) meets the outage every round: a line a
    round, no traceback (bench/faults.py counted two chained tracebacks per failed sweep)."""
    application = create_app(
        Settings(
            app_env="test",
            database_url=_unreachable_url(backend, tmp_path),
            room_sweep_s=0.05,
        )
    )
    try:
        with caplog.at_level(logging.WARNING, logger="app.main"), TestClient(application):
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and len(_sweep_lines(caplog)) < 2:
                time.sleep(0.05)
    finally:
        application.state.services.engine.dispose()
        application.state.services.move_store.close()
    lines = _sweep_lines(caplog)
    assert len(lines) >= 2
    assert all(r.exc_info is None and "\n" not in r.getMessage() for r in lines)
    assert all("database unavailable" in r.getMessage() for r in lines)


def _sweep_lines(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.getMessage().startswith("sweeping rooms failed")]


def _db_errors(metrics: str) -> float:
    return sum(
        s.value
        for family in text_string_to_metric_families(metrics)
        for s in family.samples
        if s.name == "ph_db_errors_total"
    )


# -- simulated failures of a move's connection (both databases) ------------------------------


@contextmanager
def _faulty_transactions(
    games: Games, monkeypatch: pytest.MonkeyPatch, fault: Callable[[Any, int], None]
) -> Iterator[list[int]]:
    """Wrap each move transaction; ``fault(tx, attempt)`` may break it. Yields the attempts.

    Both ways a move runs are wrapped: in a thread (``store.transaction``: SQLite, the
    browser's moves) and on the event loop (``store.inline``: the API's moves on PostgreSQL).
    """
    attempts: list[int] = []

    def wrap(original: Callable[[], Any]) -> Callable[[], Any]:
        @contextmanager
        def wrapped() -> Iterator[Any]:
            attempts.append(len(attempts) + 1)
            with original() as tx:
                fault(tx, attempts[-1])
                yield tx

        return wrapped

    monkeypatch.setattr(games.store, "transaction", wrap(games.store.transaction))
    if games.store.inline is not None:
        inline = games.store.inline
        monkeypatch.setattr(inline, "transaction", wrap(inline.transaction))
    yield attempts


def _lock_fails(times: int) -> Callable[[Any, int], None]:
    def fault(tx: Any, attempt: int) -> None:
        if attempt <= times:

            def lock(*_: Any) -> None:
                raise Disconnected("server closed the connection unexpectedly")

            tx.lock = lock

    return fault


def test_a_move_that_lost_its_connection_before_commit_is_retried_once(
    api: TestClient, app: FastAPI, monkeypatch: pytest.MonkeyPatch
) -> None:
    game = start(api, "corners", 3)
    with _faulty_transactions(app.state.services.games, monkeypatch, _lock_fails(1)) as attempts:
        response = move(api, game["id"], _first_legal(game), 0)
    assert response.status_code == 200, response.text
    assert attempts == [1, 2]
    assert response.json()["version"] == 1
    assert [action for _, action, _ in log_rows(app, game["id"])] == ["move"]


def test_a_move_is_retried_only_once(
    api: TestClient, app: FastAPI, monkeypatch: pytest.MonkeyPatch
) -> None:
    game = start(api, "corners", 4)
    before = snapshot(app, api, game["id"])
    with _faulty_transactions(app.state.services.games, monkeypatch, _lock_fails(5)) as attempts:
        response = move(api, game["id"], _first_legal(game), 0)
    _unavailable(response)
    assert attempts == [1, 2]
    assert snapshot(app, api, game["id"]) == before


def _commit_answer_lost(*, committed: bool) -> Callable[[Any, int], None]:
    def fault(tx: Any, attempt: int) -> None:
        if attempt == 1:
            write = tx.write

            def lost(game: dict[str, Any], record: dict[str, Any], event: Any = None) -> None:
                if committed:
                    write(game, record, event)
                raise OutcomeUnknown("connection lost during COMMIT")

            tx.write = lost

    return fault


@pytest.mark.parametrize("committed", [True, False], ids=["committed", "not-committed"])
def test_unknown_outcome_is_503_and_the_idempotent_retry_settles_it(
    api: TestClient, app: FastAPI, monkeypatch: pytest.MonkeyPatch, committed: bool
) -> None:
    game = start(api, "castles-end", 5)
    notation = _first_legal(game)
    key = {"Idempotency-Key": f"retry-{committed}"}
    fault = _commit_answer_lost(committed=committed)
    with _faulty_transactions(app.state.services.games, monkeypatch, fault) as attempts:
        first = move(api, game["id"], notation, 0, key)
        _unavailable(first)
        assert attempts == [1]  # an unknown outcome is not retried by the server
        second = move(api, game["id"], notation, 0, key)
    assert second.status_code == 200, second.text
    assert second.json()["version"] == 1
    assert (second.headers.get("idempotent-replayed") == "true") is committed
    assert [action for _, action, _ in log_rows(app, game["id"])] == ["move"]


# -- real failures on PostgreSQL ---------------------------------------------------------------


def _terminate(app: FastAPI, pids: list[int] | None = None) -> None:
    """Terminate the app's backends (all of this database's but ours, or ``pids``) and wait
    until they are gone: what a restart of PostgreSQL leaves in the pools."""
    admin = create_engine(
        make_url(str(app.state.services.engine.url)), isolation_level="AUTOCOMMIT"
    )
    try:
        with admin.connect() as conn:
            where = "datname = current_database() AND pid <> pg_backend_pid()"
            if pids is not None:
                where = f"pid IN ({', '.join(str(p) for p in pids)})"
            kill = f"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE {where}"
            conn.execute(text(kill))
            for _ in range(200):
                left = conn.execute(
                    text(f"SELECT count(*) FROM pg_stat_activity WHERE {where}")
                ).scalar()
                if not left:
                    break
                time.sleep(0.02)
    finally:
        admin.dispose()


def test_no_request_fails_on_connections_the_server_closed(
    backend: str, api: TestClient, client: TestClient, app: FastAPI
) -> None:
    if backend != "postgres":
        pytest.skip("SQLite has no server to restart")
    game = start(api, "quadrangle", 6)
    version = 0
    # Fill both pools with several connections, then have the server close all of them.
    for _ in range(3):
        assert api.get(f"/api/games/{game['id']}").status_code == 200
    _terminate(app)
    for _ in range(3):
        current = api.get(f"/api/games/{game['id']}")
        assert current.status_code == 200, current.text
        version = current.json()["version"]
        response = move(api, game["id"], _first_legal(current.json()), version)
        assert response.status_code == 200, response.text
        assert client.get("/").status_code == 200
        assert client.get("/healthz").status_code == 200
        _terminate(app)


def test_a_connection_killed_mid_move_is_retried_on_a_new_one(
    backend: str, api: TestClient, app: FastAPI, monkeypatch: pytest.MonkeyPatch
) -> None:
    if backend != "postgres":
        pytest.skip("a real terminated backend needs PostgreSQL")
    game = start(api, "patriarchs", 7)

    def kill(tx: Any, attempt: int) -> None:
        if attempt == 1:  # after the checkout's check, before the locking SELECT
            _terminate(app, [tx.driver.info.backend_pid])

    with _faulty_transactions(app.state.services.games, monkeypatch, kill) as attempts:
        response = move(api, game["id"], _first_legal(game), 0)
    assert response.status_code == 200, response.text
    assert attempts == [1, 2]
    assert [action for _, action, _ in log_rows(app, game["id"])] == ["move"]


def test_a_connection_killed_under_a_statement_of_the_move_is_never_a_500(
    backend: str, api: TestClient, app: FastAPI, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The connection dies under one of the SQLAlchemy statements of the move's transaction
    (here the statistics of a game that ends): bench/faults.py saw the closing of that
    transaction answer 500 once, the invalidated connection raising again on the way out."""
    if backend != "postgres":
        pytest.skip("a real terminated backend needs PostgreSQL")
    from app.services import stats

    game = start(api, "corners", 17)
    real = stats.count_finished
    calls: list[int] = []

    def killed_first(db: Any, record: Any, stamp: Any) -> None:
        calls.append(1)
        if len(calls) == 1:
            _terminate(app, [db.connection.driver_connection.info.backend_pid])
        real(db, record, stamp)

    monkeypatch.setattr(stats, "count_finished", killed_first)  # games.py calls it by module
    answer = api.post(f"/api/games/{game['id']}/resign")
    assert answer.status_code in (200, 503), answer.text
    if answer.status_code == 503:  # the client's retry settles it
        answer = api.post(f"/api/games/{game['id']}/resign")
    assert answer.status_code == 200, answer.text
    assert [action for _, action, _ in log_rows(app, game["id"])] == ["resign"]


def test_a_row_lock_held_elsewhere_times_out_as_503(
    backend: str, api: TestClient, app: FastAPI
) -> None:
    if backend != "postgres":
        pytest.skip("SQLite's write lock is covered by its busy timeout")
    game = start(api, "corners", 8)
    before = snapshot(app, api, game["id"])
    holder = create_engine(app.state.services.engine.url)
    try:
        with holder.connect() as conn, conn.begin():
            conn.execute(text("SELECT 1 FROM game WHERE id = :id FOR UPDATE"), {"id": game["id"]})
            _unavailable(move(api, game["id"], _first_legal(game), 0))
            _unavailable(api.post(f"/api/games/{game['id']}/undo"))
            # Reading the game takes no lock: it is answered while the row is held.
            assert api.get(f"/api/games/{game['id']}").status_code == 200
    finally:
        holder.dispose()
    assert snapshot(app, api, game["id"]) == before
    assert move(api, game["id"], _first_legal(game), 0).status_code == 200


def test_postgres_connections_carry_the_timeouts(backend: str, app: FastAPI) -> None:
    if backend != "postgres":
        pytest.skip("PostgreSQL settings")
    settings: Settings = app.state.settings
    moves = settings.db_move_lock_timeout_ms
    for engine, lock_ms in (
        (app.state.services.engine, settings.db_lock_timeout_ms),
        (app.state.services.move_store.engine, moves),
    ):
        with engine.connect() as conn:
            setting = "SELECT setting FROM pg_settings WHERE name = :name"  # in ms
            statement = conn.execute(text(setting), {"name": "statement_timeout"}).scalar()
            lock = conn.execute(text(setting), {"name": "lock_timeout"}).scalar()
        assert statement == str(settings.db_statement_timeout_ms)
        assert lock == str(lock_ms)
    # The API's moves run on the event loop's own pool (issue 26), with the move path's timeouts.
    inline = app.state.services.move_store.inline
    assert inline is not None

    async def inline_settings() -> list[str]:
        try:
            async with inline.engine.connect() as conn:
                query = "SELECT setting FROM pg_settings WHERE name IN "
                rows = await conn.execute(
                    text(query + "('statement_timeout', 'lock_timeout') ORDER BY name")
                )
                return [str(value) for (value,) in rows]
        finally:
            await inline.engine.dispose()  # its connections belong to this loop

    assert run(inline_settings()) == [str(moves), str(settings.db_statement_timeout_ms)]


def test_waiting_too_long_for_a_pooled_connection_is_503(backend: str, db_url: str) -> None:
    if backend != "postgres":
        pytest.skip("SQLite's pool is not bounded by DB_POOL_SIZE")
    application = create_app(
        Settings(app_env="test", database_url=db_url, db_pool_size=1, db_pool_timeout_ms=50)
    )
    try:
        with TestClient(application) as c, application.state.services.engine.connect():
            _unavailable(c.get("/api/games/abcdefghijklmnop"))
            assert c.get("/healthz").status_code == 503
    finally:
        application.state.services.engine.dispose()
        application.state.services.move_store.close()


def test_a_background_leaderboard_refresh_without_the_database_logs_one_line(
    app: FastAPI, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from datetime import date

    from sqlalchemy.exc import OperationalError

    from app.services.leaderboard import Period

    boards = app.state.services.leaderboards

    def refused(*_: Any) -> Any:
        raise OperationalError("SELECT …", {}, Exception("connection refused"))

    monkeypatch.setattr(boards, "_since", refused)
    with caplog.at_level(logging.WARNING):
        boards._refresh((None, Period.DAYS_7, date.today()))
    lines = [r for r in caplog.records if "leaderboard failed" in r.getMessage()]
    assert len(lines) == 1 and lines[0].exc_info is None
    assert "connection refused" in lines[0].getMessage()
