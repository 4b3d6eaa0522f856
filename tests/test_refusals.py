"""Production refuses to start, clearly: on SQLite, with several workers and no Redis, and with a
DEAL_KEY that is not the one the database was created with (its fingerprint is stored). Over
plain HTTP with Secure cookies, pages say so instead of failing every form. /metrics, /docs,
/redoc and /openapi.json are not public in production."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import create_engine, text

from app.bootstrap import StartRefused
from app.cli import main as cli
from app.config import PROJECT_DIR, Settings, refusals
from app.db.deployment import key_fingerprint
from app.main import create_app
from tests.databases import fresh_postgres_database, migrate

KEY_A, KEY_B = secrets.token_urlsafe(48), secrets.token_urlsafe(48)
SECRET = secrets.token_urlsafe(48)


def _production(**values: Any) -> Settings:
    fields = {"deal_key": KEY_A, "session_secret": SECRET, **values}
    return Settings(_env_file=None, app_env="production", **fields)  # type: ignore[call-arg]


def _closed(app: FastAPI) -> None:
    app.state.services.engine.dispose()
    app.state.services.move_store.close()


@pytest.fixture(scope="module")
def pg_url() -> str:
    url = fresh_postgres_database(f"ph_refusals_{os.environ.get('PYTEST_XDIST_WORKER', 'm')}")
    migrate(url)
    return url


def test_production_refuses_sqlite(tmp_path: Path) -> None:
    settings = _production(database_url=f"sqlite:///{tmp_path / 'x.db'}")
    (problem,) = refusals(settings)
    assert "SQLite" in problem and "DATABASE_URL" in problem
    with pytest.raises(StartRefused, match="SQLite"):
        create_app(settings)
    assert not (tmp_path / "x.db").exists()
    assert refusals(Settings(_env_file=None, database_url="sqlite://")) == []  # type: ignore[call-arg]


@pytest.mark.postgres
def test_production_refuses_several_workers_without_redis(pg_url: str) -> None:
    (problem,) = refusals(_production(database_url=pg_url, web_concurrency=4))
    assert "WEB_CONCURRENCY=4" in problem and "REDIS_URL" in problem
    assert refusals(_production(database_url=pg_url, web_concurrency=1)) == []
    ok = _production(database_url=pg_url, web_concurrency=4, redis_url="redis://127.0.0.1/5")
    assert refusals(ok) == []


@pytest.mark.postgres
def test_production_refuses_another_deal_key_than_the_databases(pg_url: str) -> None:
    create_app_ok = create_app(_production(database_url=pg_url))  # the first start records it
    _closed(create_app_ok)
    engine = create_engine(pg_url)
    with engine.connect() as db:
        stored = db.execute(text("SELECT value FROM app_meta")).scalar_one()
    engine.dispose()
    assert stored == key_fingerprint(KEY_A.encode()) and KEY_A not in stored
    _closed(create_app(_production(database_url=pg_url)))  # the same key starts again
    with pytest.raises(StartRefused, match="DEAL_KEY is not the key this database"):
        create_app(_production(database_url=pg_url, deal_key=KEY_B))
    # The operator's check says the same, with EX_CONFIG (the start script's exit code).
    assert cli(["preflight"], settings=_production(database_url=pg_url, deal_key=KEY_B)) == 78
    assert cli(["preflight"], settings=_production(database_url=pg_url)) == 0
    # Outside production another key is only a warning (tests and development use several).
    dev = Settings(_env_file=None, app_env="test", database_url=pg_url, deal_key=KEY_B)  # type: ignore[call-arg]
    _closed(create_app(dev))


@pytest.mark.slow
def test_the_start_script_refuses_sqlite_in_production(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "PYTHON": sys.executable,
        "APP_ENV": "production",
        "DEAL_KEY": KEY_A,
        "SESSION_SECRET": SECRET,
        "DATABASE_URL": f"sqlite:///{tmp_path / 'refused.db'}",
        "WEB_CONCURRENCY": "1",
        "JSON_LOGS": "true",
    }
    done = subprocess.run(
        [str(PROJECT_DIR / "scripts" / "docker-start.sh")],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 78, done.stderr
    (line,) = [json.loads(line) for line in done.stderr.splitlines()]  # JSON_LOGS: on
    assert line["level"] == "error" and "Refusing to start in production on SQLite" in line["msg"]
    env["DATABASE_URL"] = "postgresql+psycopg://nobody@127.0.0.1:1/none"
    env.pop("WEB_CONCURRENCY")  # the script's default is 4 workers: Redis is needed
    done = subprocess.run(
        [str(PROJECT_DIR / "scripts" / "docker-start.sh")],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 78 and "REDIS_URL" in done.stderr, done.stderr


@pytest.fixture(scope="module")
def production_app(pg_url: str) -> Iterator[FastAPI]:
    app = create_app(_production(database_url=pg_url, metrics_token="scrape-me-" + SECRET))
    yield app
    _closed(app)


@pytest.mark.postgres
def test_plain_http_in_production_answers_an_explicit_styled_page(production_app: FastAPI) -> None:
    with TestClient(production_app, base_url="http://games.example.org") as c:
        page = c.get("/")
        assert page.status_code == 400
        assert "This site needs HTTPS" in page.text and "games.example.org" in page.text
        assert "/static/css/site.css" in page.text and "FORWARDED_ALLOW_IPS" in page.text
        assert c.post("/games", data={"game": "corners"}).status_code == 400
        assert c.get("/healthz").status_code == 200  # the proxy's and the container's check
        assert c.post("/api/players", json={}).status_code == 201  # bearer tokens: no cookies
    with TestClient(production_app, base_url="http://localhost:8000") as c:
        assert c.get("/").status_code == 200  # browsers keep Secure cookies on localhost
    with TestClient(production_app, base_url="https://games.example.org") as c:
        assert c.get("/").status_code == 200


@pytest.mark.postgres
def test_metrics_and_api_docs_are_not_public_in_production(production_app: FastAPI) -> None:
    with TestClient(production_app, base_url="https://games.example.org") as c:
        for path in ("/docs", "/redoc", "/openapi.json", "/static/docs/swagger-ui.css"):
            assert c.get(path).status_code == 404, path
        assert c.get("/metrics").status_code == 401
        assert c.get("/metrics", headers={"Authorization": "Bearer wrong"}).status_code == 401
        scraped = c.get("/metrics", headers={"Authorization": f"Bearer scrape-me-{SECRET}"})
        assert scraped.status_code == 200 and "ph_requests_total" in scraped.text


@pytest.mark.postgres
def test_metrics_without_a_token_are_not_served_in_production(pg_url: str) -> None:
    app = create_app(_production(database_url=pg_url))
    try:
        with TestClient(app, base_url="https://games.example.org") as c:
            assert c.get("/metrics").status_code == 404
    finally:
        _closed(app)
