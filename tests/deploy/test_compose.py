"""docker-compose.yml, the Dockerfile and the lock files, linted and checked; and each service's
command run directly (there is no container engine here): the migration, the solver worker (a
job done, and a job whose worker was killed taken again), the backup. The app's start script is
run by tests/test_deploy_files.py, the proxy by tests/deploy/test_proxy.py."""

from __future__ import annotations

import asyncio
import ipaddress
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from app.bootstrap import opened
from app.config import PROJECT_DIR, Settings
from app.jobs import deferrer, make_jobs, requeue_stalled
from tests.aio import run
from tests.databases import fresh_postgres_database
from tests.deploy.support import free_port, needs

COMPOSE = PROJECT_DIR / "docker-compose.yml"
BIN = Path(sys.executable).parent


def _compose() -> dict[str, Any]:
    data = yaml.safe_load(COMPOSE.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def _pins(path: Path) -> dict[str, str]:
    found = re.findall(r"^([A-Za-z0-9_.\-]+)==(\S+)", path.read_text(), re.MULTILINE)
    return {name.lower().replace("_", "-"): version for name, version in found}


def test_compose_passes_its_linter() -> None:
    done = subprocess.run(
        [str(BIN / "compose-lint"), "check", "--fail-on", "low", "--strict-config", str(COMPOSE)],
        cwd=PROJECT_DIR, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr


def test_dockerfile_passes_its_linter() -> None:
    done = subprocess.run(
        [str(BIN / "hadolint"), "Dockerfile"], cwd=PROJECT_DIR, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_every_service_is_limited_rotated_and_restarted() -> None:
    services = _compose()["services"]
    assert set(services) == {"proxy", "app", "migrate", "worker", "redis", "db", "backup"}
    for name, service in services.items():
        assert service["logging"]["options"]["max-size"], name
        limits = service["deploy"]["resources"]["limits"]
        assert limits["cpus"] and limits["memory"], name
        assert service["restart"] == ("no" if name == "migrate" else "unless-stopped"), name
        assert "no-new-privileges:true" in service["security_opt"], name
    assert services["db"]["healthcheck"]["test"]
    assert services["redis"]["healthcheck"]["test"]
    for name in ("app", "worker"):
        assert services[name]["depends_on"]["migrate"] == {
            "condition": "service_completed_successfully"
        }
    assert services["migrate"]["command"] == ["python", "-m", "app.cli", "migrate"]
    assert services["worker"]["command"] == ["python", "-m", "app.jobs"]
    assert services["app"]["environment"]["MIGRATE"] == "0"
    assert services["app"]["environment"]["SOLVER_JOBS"].startswith("${SOLVER_JOBS:-true")


def test_the_app_trusts_the_proxy_and_only_the_proxy() -> None:
    compose = _compose()
    proxy_ip = compose["services"]["proxy"]["networks"]["front"]["ipv4_address"]
    subnet = compose["networks"]["front"]["ipam"]["config"][0]["subnet"]
    assert ipaddress.ip_address(proxy_ip) in ipaddress.ip_network(subnet)
    trusted = compose["services"]["app"]["environment"]["FORWARDED_ALLOW_IPS"]
    assert trusted == f"${{FORWARDED_ALLOW_IPS:-{proxy_ip}}}"
    assert compose["networks"]["back"]["internal"] is True
    assert "front" not in compose["services"]["db"]["networks"]


def test_the_caddyfile_streams_events_unbuffered_and_validates() -> None:
    caddyfile = PROJECT_DIR / "deploy" / "Caddyfile"
    text_ = caddyfile.read_text()
    assert "flush_interval -1" in text_ and "\n\tencode" not in text_
    caddy = shutil.which("caddy")
    if caddy is None:
        needs("Debian's caddy is not installed (scripts/install.sh --dev installs it)")
    env = {**os.environ, "CADDY_EXTRA": "skip_install_trust", "HOME": "/tmp"}
    done = subprocess.run(
        [caddy, "adapt", "--config", str(caddyfile), "--adapter", "caddyfile"],
        env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert '"flush_interval":-1' in done.stdout


def test_the_locks_pin_every_dependency_with_hashes() -> None:
    project = tomllib.loads((PROJECT_DIR / "pyproject.toml").read_text())["project"]
    app_lock, dev_lock = (
        _pins(PROJECT_DIR / "requirements/app.lock"),
        _pins(PROJECT_DIR / "requirements/dev.lock"),
    )
    for lock, wanted in (
        (app_lock, project["dependencies"]),
        (dev_lock, project["dependencies"] + project["optional-dependencies"]["dev"]),
    ):
        for requirement in wanted:
            name, version = re.split(r"==", requirement.split(";")[0])
            name = re.sub(r"\[.*\]", "", name).strip().lower().replace("_", "-")
            assert lock.get(name) == version.strip(), (
                f"{name}=={version} is not in the lock: regenerate it (docs/operating.md, "
                "Dependencies)"
            )
    assert all(dev_lock[name] == version for name, version in app_lock.items())
    for path in ("requirements/app.lock", "requirements/dev.lock"):
        entries = (PROJECT_DIR / path).read_text().split("==")[1:]
        assert all("--hash=sha256:" in entry for entry in entries), path


def test_the_version_is_the_same_everywhere_and_tags_follow_the_scheme() -> None:
    version = tomllib.loads((PROJECT_DIR / "pyproject.toml").read_text())["project"]["version"]
    assert re.fullmatch(r"\d+\.\d+\.\d+", version)
    changelog = (PROJECT_DIR / "CHANGELOG.md").read_text()
    headings = re.findall(r"^## (\d+\.\d+\.\d+)", changelog, re.MULTILINE)
    assert headings[0] == version, "the newest CHANGELOG entry is the version being released"
    compose = COMPOSE.read_text()
    assert f"patience-hall:${{PH_VERSION:-{version}}}" in compose
    assert f"PH_VERSION={version}" in (PROJECT_DIR / ".env.example").read_text()
    assert f"patience-hall:{version}" in (PROJECT_DIR / "Dockerfile").read_text()
    # Release tags (where this checkout has any) are vX.Y.Z of a CHANGELOG entry.
    done = subprocess.run(
        ["git", "tag", "--list", "v*"], cwd=PROJECT_DIR, capture_output=True, text=True
    )
    for tag in done.stdout.split() if done.returncode == 0 else []:
        assert re.fullmatch(r"v\d+\.\d+\.\d+", tag), tag
        assert tag[1:] in headings, f"{tag} has no CHANGELOG entry"


# -- the services' commands, run directly ----------------------------------------------------------


def _env(url: str, **more: str) -> dict[str, str]:
    return {**os.environ, "APP_ENV": "test", "DATABASE_URL": url, **more}


def _run(command: list[str], env: dict[str, str], timeout: float = 120) -> str:
    done = subprocess.run(
        command, cwd=PROJECT_DIR, env=env, capture_output=True, text=True, timeout=timeout
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout + done.stderr


def _json_lines(output: str) -> list[dict[str, Any]]:
    """Every line a service's command wrote, each one JSON object (JSON_LOGS, the default)."""
    lines = [json.loads(line) for line in output.splitlines() if line.strip()]
    assert all(isinstance(line, dict) and line["msg"] for line in lines)
    return lines


def _scalar(url: str, sql: str) -> Any:
    engine = create_engine(url)
    try:
        with engine.connect() as db:
            return db.execute(text(sql)).scalar()
    finally:
        engine.dispose()


def test_a_served_process_writes_warnings_and_every_loggers_lines_as_json() -> None:
    # What uvicorn does with its log configuration in each worker process of python -m
    # app.serve, then a Python warning, a third-party library's line and uvicorn's own.
    script = (
        "import logging, logging.config, warnings\n"
        "from app import serve\n"
        "logging.config.dictConfig(serve.uvicorn_config.LOGGING_CONFIG)\n"
        "warnings.warn('a deprecated call', DeprecationWarning, stacklevel=1)\n"
        "logging.getLogger('some.library').warning('a library speaks')\n"
        "logging.getLogger('uvicorn.error').info('Started server process')\n"
    )
    env = {**os.environ, "JSON_LOGS": "true", "PYTHONWARNINGS": "always"}
    lines = _json_lines(_run([sys.executable, "-c", script], env))
    assert [line["logger"] for line in lines] == ["py.warnings", "some.library", "uvicorn.error"]
    assert "a deprecated call" in lines[0]["msg"]


@pytest.mark.slow
@pytest.mark.postgres
def test_the_migrate_service_builds_the_schema_and_queues_the_pools(tmp_path: Path) -> None:
    url = fresh_postgres_database("ph_migrate_service")
    env = _env(url, CERTIFIED_POOL_TARGET="5")
    migrate = [sys.executable, "-m", "app.cli", "migrate"]
    first = _json_lines(_run(migrate, {**env, "JSON_LOGS": "true"}))
    assert any(line["msg"].startswith("Running upgrade  -> 0001") for line in first)
    assert first[-1]["msg"] == "ready (APP_ENV=test)"
    plain = _run(migrate, {**env, "JSON_LOGS": "false"})  # again: nothing to do or queue
    assert plain.splitlines()[-1] == "patience-hall: ready (APP_ENV=test)"
    assert _scalar(url, "SELECT version_num FROM alembic_version") is not None
    assert _scalar(url, "SELECT count(*) FROM app_meta") == 1  # the DEAL_KEY's fingerprint
    queued = "SELECT count(*) FROM procrastinate_jobs WHERE task_name = 'fill_pool'"
    assert _scalar(url, queued) == 5  # one per game: the pools fill in the background


@pytest.mark.slow
@pytest.mark.postgres
@pytest.mark.own_thread  # procrastinate's synchronous API (tests/conftest.py)
def test_the_worker_service_takes_a_job_and_a_killed_workers_job_is_taken_again() -> None:
    url = fresh_postgres_database("ph_worker_service")
    env = _env(url, CERTIFIED_POOL_TARGET="0", SOLVER_JUDGE_SECONDS="1")
    _run([sys.executable, "-m", "app.cli", "migrate"], env)
    queue = make_jobs(url)
    with opened(Settings(database_url=url)) as services:  # a finished game, for its analysis
        player = services.players.create_anonymous().id
        game_id = services.games.start(player, "castles-end", 3).record.id  # cannot be won
        services.games.resign(game_id, player)
    with queue.open():
        job = deferrer(queue, "judge").defer(game="castles-end", deal=1)
        analysed = deferrer(queue, "analyse").defer(
            game_id=game_id, game="castles-end", deal=3, moves=[]
        )
    # The worker's command, until the queue is empty; its lines are JSON.
    _json_lines(_run([sys.executable, "-m", "app.jobs", "--one-shot"], env))
    for done in (job, analysed):
        assert _scalar(url, f"SELECT status FROM procrastinate_jobs WHERE id = {done}") == (
            "succeeded"
        )
    verdict = "SELECT outcome FROM deal_verdict WHERE game = 'castles-end' AND deal = 1"
    assert _scalar(url, verdict) in ("winnable", "lost", "unknown")
    stored = _scalar(url, f"SELECT analysis FROM game_coach WHERE game_id = '{game_id}'")
    assert json.loads(stored)["deal_winnable"] is False  # stored with the game, for the app

    # A long job (filling a pool of deals the solver rarely decides), its worker killed mid-way.
    long_env = {**env, "CERTIFIED_POOL_TARGET": "50"}
    with queue.open():
        long = deferrer(queue, "fill_pool").defer(game="quadruple-interchange")
    worker = subprocess.Popen(
        [sys.executable, "-m", "app.jobs"], cwd=PROJECT_DIR, env=long_env,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    status = f"SELECT status FROM procrastinate_jobs WHERE id = {long}"
    try:
        deadline = time.monotonic() + 120
        while _scalar(url, status) != "doing":
            assert time.monotonic() < deadline, "the worker did not take the job"
            time.sleep(0.1)
    finally:
        worker.send_signal(signal.SIGKILL)  # a crash: no chance to say anything
        worker.wait(10)
    assert _scalar(url, status) == "doing"  # lost with its worker, until…

    async def requeue() -> list[int]:
        deadline = time.monotonic() + 120
        async with make_jobs(url).open_async() as app:
            while True:  # the worker's last heartbeat ages past the limit
                again = await requeue_stalled(app, seconds=1.0)
                if again or time.monotonic() > deadline:
                    return again
                await asyncio.sleep(0.2)

    assert run(requeue(), timeout=180) == [long]
    assert _scalar(url, status) == "todo"  # queued again, for the next worker to take


def test_the_redis_service_runs_its_command_and_passes_its_health_check() -> None:
    if shutil.which("redis-server") is None or shutil.which("redis-cli") is None:
        needs("redis-server is not installed")
    redis_service = _compose()["services"]["redis"]
    command, check = redis_service["command"], redis_service["healthcheck"]["test"]
    assert command[0] == "redis-server" and check[:2] == ["CMD", "redis-cli"]
    port = str(free_port())
    server = subprocess.Popen(
        [*command, "--port", port, "--bind", "127.0.0.1", "--dir", "/tmp"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 20
        while True:  # the health check, as compose runs it
            done = subprocess.run(
                [check[1], "-p", port, *check[2:]], capture_output=True, text=True, timeout=10
            )
            if done.stdout.strip() == "PONG":
                break
            assert server.poll() is None and time.monotonic() < deadline, done.stdout
            time.sleep(0.1)
        policy = [check[1], "-p", port, "config", "get", "maxmemory-policy"]
        assert _run(policy, dict(os.environ)).split() == ["maxmemory-policy", "volatile-ttl"]
    finally:
        server.terminate()
        server.wait(10)


@pytest.mark.postgres
def test_the_db_services_health_check_passes_on_a_ready_server() -> None:
    if shutil.which("pg_isready") is None:
        needs("pg_isready is not installed")
    check = _compose()["services"]["db"]["healthcheck"]["test"]
    assert check[0] == "CMD-SHELL" and check[1].startswith("pg_isready ")
    url = make_url(fresh_postgres_database("ph_db_health"))
    where = f" -h {url.host or '127.0.0.1'} -p {url.port or 5432}"
    assert "accepting connections" in _run(["sh", "-c", check[1] + where], dict(os.environ))


@pytest.mark.slow
@pytest.mark.postgres
def test_the_backup_service_dumps_and_keeps_the_newest(tmp_path: Path) -> None:
    if shutil.which("pg_dump") is None or shutil.which("pg_restore") is None:
        needs("pg_dump is not installed")
    url = fresh_postgres_database("ph_backup_service")
    _run([sys.executable, "-m", "app.cli", "migrate"], _env(url, CERTIFIED_POOL_TARGET="0"))
    parts = make_url(url)
    env = {
        **os.environ,
        "PGHOST": parts.host or "127.0.0.1",
        "PGPORT": str(parts.port or 5432),
        "PGUSER": parts.username or "postgres",
        "PGPASSWORD": parts.password or "",
        "PGDATABASE": parts.database or "",
        "BACKUP_DIR": str(tmp_path),
        "BACKUP_KEEP": "2",
        "BACKUP_ONCE": "1",
    }
    for _ in range(3):
        (line,) = _json_lines(_run(["sh", str(PROJECT_DIR / "deploy" / "backup.sh")], env))
        assert line["msg"] == "backup written"
    dumps = sorted(tmp_path.glob("patience-hall-*.dump"))
    assert len(dumps) == 2
    # A failed dump says so in one JSON line, pg_dump's words inside, and leaves no file.
    failed = subprocess.run(
        ["sh", str(PROJECT_DIR / "deploy" / "backup.sh")],
        env={**env, "PGDATABASE": "no_such_database_here"}, capture_output=True, text=True,
        timeout=60,
    )  # fmt: skip
    assert failed.returncode != 0
    (line,) = _json_lines(failed.stdout + failed.stderr)
    assert line["level"] == "error" and "no_such_database_here" in line["error"]
    assert sorted(tmp_path.glob("*")) == dumps
    listing = _run(["pg_restore", "--list", str(dumps[-1])], env)
    assert "TABLE public game" in listing and "TABLE public app_meta" in listing
