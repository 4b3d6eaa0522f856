"""The one place that builds the services (app/bootstrap.py): how they are wired, the deal
key's check against the database, and the refusals before serving. Production's refusals end
to end: test_refusals.py."""

from __future__ import annotations

import logging
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, event

import app.bootstrap as bootstrap
from app.bootstrap import (
    Services,
    StartRefused,
    build,
    database_limits,
    deal_key_problem,
    for_serving,
    opened,
    preflight,
)
from app.config import Settings
from app.db.broker import InProcessBroker
from app.db.deployment import KeyCheck, check_deal_key
from app.db.session import make_engine
from tests.migrated import migrated_sqlite
from tests.settings import suite_settings

KEY_A, KEY_B = secrets.token_urlsafe(48), secrets.token_urlsafe(48)
SECRET = secrets.token_urlsafe(48)


def _production(url: str, key: str = KEY_A) -> Settings:
    return Settings(  # type: ignore[call-arg]
        _env_file=None, app_env="production", database_url=url, deal_key=key,
        session_secret=SECRET,
    )  # fmt: skip


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A migrated database whose deal key is KEY_A."""
    url = migrated_sqlite(tmp_path_factory, "bootstrap")
    engine = make_engine(url)
    assert check_deal_key(engine, KEY_A.encode()) is KeyCheck.RECORDED
    engine.dispose()
    return url


@pytest.fixture()
def services(url: str) -> Iterator[Services]:
    services = build(suite_settings(url, deal_key=KEY_A))
    yield services
    services.close()


def test_the_services_share_one_database_broker_and_seal(services: Services) -> None:
    assert isinstance(services.broker, InProcessBroker)  # SQLite: one process
    assert services.sessions.kw["bind"] is services.engine
    assert services.move_store.engine is services.engine  # SQLite moves share the pool
    assert services.games.store is services.move_store and services.players.store is not None
    assert services.games.sealer is services.sealer and services.deals.sealer is services.sealer
    assert services.feed.broker is services.broker
    # Every change is announced through the one broker.
    for service in (services.games, services.rooms, services.arenas):
        assert service.publish == services.broker.publish


def test_the_cycle_of_ended_games_is_closed_here(services: Services) -> None:
    assert services.games.ended == services.solver.game_ended  # its deal is judged
    assert services.games.competition_ended == services.arenas.game_ended  # standings
    assert services.solver.judge_later is None and services.solver.analyse_later is None


def test_a_durable_queue_takes_the_solvers_work(url: str) -> None:
    class Queue:
        def judge_later(self, game: str, deal: int) -> None: ...

        def analyse_later(self, game_id: str, game: str, deal: int, moves: list[str]) -> None: ...

    queue = Queue()
    services = build(suite_settings(url, deal_key=KEY_A), queue=queue, solver_workers=3)
    try:
        assert services.solver.judge_later == queue.judge_later
        assert services.solver.analyse_later == queue.analyse_later
        assert services.solver.pool.workers == 3
    finally:
        services.close()


def test_the_database_limits_come_from_the_settings() -> None:
    settings = Settings(  # type: ignore[call-arg]
        _env_file=None, db_pool_timeout_ms=1500, db_statement_timeout_ms=9000,
        db_lock_timeout_ms=800, db_move_lock_timeout_ms=60,
    )  # fmt: skip
    limits = database_limits(settings)
    assert (limits.pool_timeout_ms, limits.statement_timeout_ms) == (1500, 9000)
    assert (limits.lock_timeout_ms, limits.move_lock_timeout_ms) == (800, 60)


def test_the_databases_own_key_is_no_problem(url: str) -> None:
    engine = make_engine(url)
    try:
        assert deal_key_problem(engine, _production(url)) is None
        assert deal_key_problem(engine, suite_settings(url, deal_key=KEY_A)) is None
    finally:
        engine.dispose()


def test_another_key_is_refused_in_production_and_a_warning_elsewhere(
    url: str, caplog: pytest.LogCaptureFixture
) -> None:
    engine = make_engine(url)
    try:
        problem = deal_key_problem(engine, _production(url, KEY_B))
        assert problem is not None and problem.startswith("Refusing to start: DEAL_KEY is not")
        assert KEY_B not in problem and KEY_A not in problem
        with caplog.at_level(logging.WARNING, "app.bootstrap"):
            assert deal_key_problem(engine, suite_settings(url, deal_key=KEY_B)) is None
        assert "(allowed outside production)" in caplog.text
    finally:
        engine.dispose()


def test_a_database_where_the_key_cannot_be_checked(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    bare = f"sqlite:///{tmp_path / 'not-migrated.db'}"
    engine = make_engine(bare)
    try:
        problem = deal_key_problem(engine, _production(bare))
        assert problem is not None and "cannot be checked" in problem and "alembic" in problem
        with caplog.at_level(logging.WARNING, "app.bootstrap"):
            assert deal_key_problem(engine, suite_settings(bare)) is None
        assert "DEAL_KEY not checked" in caplog.text
    finally:
        engine.dispose()


def test_preflight_says_every_reason_not_to_start(url: str, tmp_path: Path) -> None:
    assert preflight(suite_settings(url, deal_key=KEY_B)) == []  # not production: it starts
    nowhere = tmp_path / "never-made.db"
    (problem,) = preflight(_production(f"sqlite:///{nowhere}"))
    assert "SQLite" in problem
    assert not nowhere.exists()  # refused before any database was opened


def test_serving_is_refused_for_a_settings_problem_before_any_database_is_opened(
    tmp_path: Path,
) -> None:
    nowhere = tmp_path / "never-made.db"
    with pytest.raises(StartRefused, match="SQLite"):
        for_serving(_production(f"sqlite:///{nowhere}"), answer_json=None)
    assert not nowhere.exists()


def test_serving_is_refused_with_another_deal_key(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bootstrap, "refusals", lambda settings: [])  # only the key's check
    disposed: list[Engine] = []

    def tracked(*args: Any, **kwargs: Any) -> Engine:
        engine = make_engine(*args, **kwargs)
        event.listen(engine, "engine_disposed", lambda *_: disposed.append(engine))
        return engine

    monkeypatch.setattr(bootstrap, "make_engine", tracked)
    with pytest.raises(StartRefused, match="DEAL_KEY is not the key"):
        for_serving(_production(url, KEY_B), answer_json=None)
    assert len(disposed) == 1  # the refused process leaves no connection behind
    served = for_serving(_production(url), answer_json=lambda view: "{}")
    served.close()


def test_an_operator_command_gets_small_services_closed_on_the_way_out(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    closed: list[Services] = []
    monkeypatch.setattr(Services, "close", lambda self: closed.append(self))
    with (
        pytest.raises(RuntimeError, match="the command failed"),
        opened(suite_settings(url, deal_key=KEY_A)) as services,
    ):
        assert services.solver.pool.workers == 1  # one solver process at most
        raise RuntimeError("the command failed")
    assert closed == [services]
    services.engine.dispose()
