"""The deployment files: Dockerfile, docker-compose.yml, .env.example and the start script.

There is no Docker engine where the tests run, so the files are checked as text, and the start
script is run as is (it is the container's command) against a SQLite file on 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from fnmatch import fnmatch
from pathlib import Path
from typing import Any

import pytest
import yaml

from app.config import Settings
from app.engine import DEVELOPMENT_KEY
from tests.databases import fresh_postgres_database

ROOT = Path(__file__).resolve().parent.parent
START = ROOT / "scripts" / "docker-start.sh"


def _dockerfile() -> list[tuple[str, str]]:
    """The Dockerfile's instructions as (KEYWORD, arguments), continuation lines joined."""
    text = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    text = re.sub(r"\\\n", " ", text)
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            keyword, _, args = line.partition(" ")
            out.append((keyword.upper(), args.strip()))
    return out


def _instructions(keyword: str) -> list[str]:
    return [args for kw, args in _dockerfile() if kw == keyword]


def _compose() -> dict[str, Any]:
    data = yaml.safe_load((ROOT / "docker-compose.yml").read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def _setting_env_vars() -> set[str]:
    return {name.upper() for name in Settings.model_fields}


# -- Dockerfile ------------------------------------------------------------------------------


def test_dockerfile_builds_on_python_311_slim_and_runs_as_a_non_root_user() -> None:
    assert _instructions("FROM") == ["python:3.11-slim"]
    users = _instructions("USER")
    assert users, "the image must switch to a non-root user"
    assert users[-1] not in ("root", "0")


def test_dockerfile_installs_the_locked_runtime_dependencies_only() -> None:
    runs = " ".join(_instructions("RUN"))
    assert "pip install --require-hashes --no-deps -r requirements/app.lock" in runs
    assert "dev.lock" not in runs and "[dev]" not in runs
    assert "requirements/app.lock" in " ".join(_instructions("COPY"))


def test_dockerfile_copies_what_the_app_needs_and_nothing_is_dockerignored() -> None:
    copied = []
    for args in _instructions("COPY"):
        sources = args.split()[:-1]
        copied += [s.rstrip("/") for s in sources if not s.startswith("--")]
    needed = {"pyproject.toml", "app", "migrations", "templates", "static", "docs", "alembic.ini"}
    assert needed <= set(copied)
    ignored = [
        line.strip()
        for line in (ROOT / ".dockerignore").read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith(("#", "!"))
    ]
    for source in copied:
        assert (ROOT / source).exists(), source
        top = source.split("/")[0]
        assert not any(fnmatch(top, pattern) for pattern in ignored), f"{source} is ignored"
    assert any(fnmatch(".env", pattern) for pattern in ignored), "never send .env to a build"


def test_dockerfile_has_a_healthcheck_on_healthz() -> None:
    (check,) = _instructions("HEALTHCHECK")
    options, _, command = check.partition("CMD ")
    assert "--interval" in options
    argv = json.loads(command)
    assert argv[0] == "python"
    assert "/healthz" in argv[-1]


def test_dockerfile_starts_with_the_start_script() -> None:
    (cmd,) = _instructions("CMD")
    assert json.loads(cmd) == ["scripts/docker-start.sh"]
    assert any("scripts/docker-start.sh" in args for args in _instructions("COPY"))


def test_the_start_script_exists_and_is_executable() -> None:
    assert START.is_file()
    assert os.access(START, os.X_OK)
    text = START.read_text(encoding="utf-8")
    assert text.startswith("#!/bin/sh")  # python:3.11-slim has no bash
    assert "alembic upgrade head" in text
    assert "--factory app.main:create_app" in text
    assert "WEB_CONCURRENCY:-4" in text
    assert "app.cli migrate" in text


# -- docker-compose.yml ----------------------------------------------------------------------


def test_compose_runs_postgres_15_with_a_health_check_and_a_named_volume() -> None:
    compose = _compose()
    db = compose["services"]["db"]
    assert db["image"] == "postgres:15"
    test = db["healthcheck"]["test"]
    assert "pg_isready" in (test if isinstance(test, str) else " ".join(test))
    volume, _, target = db["volumes"][0].partition(":")
    assert target == "/var/lib/postgresql/data"
    assert volume in compose["volumes"]


def test_compose_starts_the_app_once_migrated_with_the_database_and_redis_healthy() -> None:
    app = _compose()["services"]["app"]
    assert app["build"] == "."
    assert app["depends_on"] == {
        "db": {"condition": "service_healthy"},
        "redis": {"condition": "service_healthy"},
        "migrate": {"condition": "service_completed_successfully"},
    }
    assert "ports" not in app, "no fixed host port: --scale app=N must work"
    assert app["expose"] == ["8000"]


def test_compose_configures_the_app_from_the_environment_and_requires_the_secrets() -> None:
    env = _compose()["services"]["app"]["environment"]
    assert env["APP_ENV"] == "production"
    assert env["DATABASE_URL"].startswith("postgresql+psycopg://")
    assert "@db:5432/" in env["DATABASE_URL"]
    for secret in ("DEAL_KEY", "SESSION_SECRET"):
        assert re.fullmatch(rf"\$\{{{secret}:\?[^}}]+\}}", env[secret]), env[secret]
    # Every setting of app/config.py can be given to the container.
    assert _setting_env_vars() <= set(env)


def test_env_example_names_every_variable_compose_needs_and_holds_no_secret() -> None:
    compose_text = (ROOT / "docker-compose.yml").read_text(encoding="utf-8")
    example = (ROOT / ".env.example").read_text(encoding="utf-8")
    assigned = dict(
        line.split("=", 1)
        for line in example.splitlines()
        if line.strip() and not line.startswith("#")
    )
    required = set(re.findall(r"\$\{(\w+):\?", compose_text))
    assert {"DEAL_KEY", "SESSION_SECRET"} <= required
    for name in required:
        assert name in assigned, name
        if name == "SITE_ADDRESS":  # a public name, not a secret
            continue
        assert assigned[name].strip() == "", f"{name} must be left for the operator to fill"
    for name in re.findall(r"\$\{(\w+):-", compose_text):
        assert name in example, f".env.example should mention {name}"


# -- the start script, run for real ------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _environment(**overrides: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _setting_env_vars()}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHON"] = sys.executable
    env.update(overrides)
    return env


def _request(url: str, body: dict[str, Any] | None = None, token: str = "") -> Any:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method="GET" if data is None else "POST")
    req.add_header("Content-Type", "application/json")
    if token:
        req.add_header("Authorization", f"Bearer {token}")
    with urllib.request.urlopen(req, timeout=10) as response:
        return response.status, json.loads(response.read())


@pytest.fixture()
def production_server(tmp_path: Path) -> Iterator[str]:
    port = _free_port()
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    env = _environment(
        APP_ENV="production",
        DEAL_KEY=secrets.token_urlsafe(32),
        SESSION_SECRET=secrets.token_urlsafe(32),
        # Production refuses SQLite: a fresh PostgreSQL database, migrated by the script.
        DATABASE_URL=fresh_postgres_database(f"ph_start_script_{worker}"),
        HOST="127.0.0.1",
        PORT=str(port),
        WEB_CONCURRENCY="1",
        TMPDIR=str(tmp_path),  # where the script makes its metrics directory: removed after
    )
    log = tmp_path / "server.log"
    with log.open("wb") as out:
        # sh execs uvicorn, so this process is the server itself (one worker: no children).
        server = subprocess.Popen(
            [str(START)], cwd=tmp_path, env=env, stdout=out, stderr=subprocess.STDOUT
        )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 180  # a loaded machine: it imports the app twice
        while True:
            try:
                if _request(f"{base}/healthz")[0] == 200:
                    break
            except (OSError, urllib.error.URLError):
                pass
            if server.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"the server did not come up:\n{log.read_text(errors='replace')}")
            time.sleep(0.2)
        yield base
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(timeout=10)


@pytest.mark.slow
@pytest.mark.postgres
def test_the_start_script_migrates_then_serves_in_production(production_server: str) -> None:
    status, created = _request(f"{production_server}/api/players", {})
    assert status == 201
    status, game = _request(
        f"{production_server}/api/games", {"game": "corners", "deal": 42}, created["token"]
    )
    assert status == 201
    assert game["status"] == "playing" and game["version"] == 0
    assert _request(f"{production_server}/api/games/{game['id']}")[1]["id"] == game["id"]


@pytest.mark.slow
def test_the_start_script_refuses_production_with_the_development_deal_key(
    tmp_path: Path,
) -> None:
    env = _environment(
        APP_ENV="production",
        DEAL_KEY=DEVELOPMENT_KEY.decode(),
        SESSION_SECRET=secrets.token_urlsafe(32),
        DATABASE_URL=f"sqlite:///{tmp_path / 'refused.db'}",
        HOST="127.0.0.1",
        PORT=str(_free_port()),
    )
    done = subprocess.run(
        [str(START)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 78, done.stderr
    assert "Refusing to start in production" in done.stderr
    assert "DEAL_KEY" in done.stderr
    assert not (tmp_path / "refused.db").exists(), "nothing may run before the settings pass"
