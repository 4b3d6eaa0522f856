"""What the benchmarks share: the machine's facts, local-only PostgreSQL URLs, and the app
under uvicorn (127.0.0.1 only, always stopped)."""

from __future__ import annotations

import contextlib
import os
import platform
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
HOST = "127.0.0.1"  # the only address the benchmarks ever talk to
LOCAL_HOSTS = {"127.0.0.1", "localhost", "::1"}


def cpu_ticks(pid: int, *, reaped: bool = False) -> int:
    """A process's CPU time in clock ticks (user + system), from /proc; with ``reaped``, that of
    its children that have exited instead. 0 once the process is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0
    first = 13 if reaped else 11  # cutime, cstime / utime, stime
    return int(fields[first]) + int(fields[first + 1])


def local_postgres(url: str, purpose: str) -> Any:
    """The parsed URL, or exit: the benchmarks only ever touch a PostgreSQL on this machine."""
    from sqlalchemy.engine import make_url

    parsed = make_url(url)
    if parsed.get_backend_name() != "postgresql":
        sys.exit("--database-url must be a PostgreSQL URL")
    if parsed.host not in LOCAL_HOSTS:
        sys.exit(f"refusing to {purpose} a database on {parsed.host!r}: only 127.0.0.1")
    return parsed


def recreate_database(parsed: Any, revision: str = "head") -> None:
    """Drop and create the database of ``parsed`` (a checked local URL), then migrate it."""
    from sqlalchemy import create_engine, text

    name = parsed.database
    admin = create_engine(parsed.set(database="postgres"), isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
            conn.execute(text(f'CREATE DATABASE "{name}"'))
    finally:
        admin.dispose()
    url = parsed.render_as_string(hide_password=False)
    subprocess.run(
        [sys.executable, "-m", "alembic", "upgrade", revision],
        cwd=ROOT, env={**os.environ, "DATABASE_URL": url}, check=True, capture_output=True,
    )  # fmt: skip


def machine_facts(database_url: str, *, database_size: bool = False) -> dict[str, str]:
    from sqlalchemy import create_engine, text

    cpu = "unknown"
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    mem_kb = int(Path("/proc/meminfo").read_text().split()[1])
    engine = create_engine(database_url)
    try:
        with engine.connect() as conn:
            pg = str(conn.execute(text("SHOW server_version")).scalar())
            size = conn.execute(text("SELECT pg_database_size(current_database())")).scalar()
    finally:
        engine.dispose()
    facts = {
        "nproc": str(os.cpu_count()),
        "cpu": cpu,
        "ram": f"{mem_kb / 1024 / 1024:.1f} GiB",
        "python": platform.python_version(),
        "postgres": pg,
        "os": platform.platform(),
    }
    if database_size:
        facts["database size"] = f"{int(size or 0) / 2**30:.2f} GiB"
    return facts


def free_port() -> int:
    if "BENCH_PORTS" in os.environ:  # a shared machine: only the ports one was given
        return port_in_range()
    with socket.socket() as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


# Every simulated player comes from 127.0.0.1, hundreds of moves a second: the limits stay on
# (their cost is part of what is measured) but set far above what a benchmark does.
BENCH_LIMITS = {
    "RATE_LIMIT_NEW_PLAYERS": "1000000/minute",
    "RATE_LIMIT_NEW_GAMES": "1000000/minute",
    "RATE_LIMIT_MOVES": "1000000/minute",
    "RATE_LIMIT_SIGNIN": "1000000/minute",
    "RATE_LIMIT_ADDRESS": "100000000/minute",
    "RATE_LIMIT_ROOM_JOINS": "1000000/minute",
    "RATE_LIMIT_HINTS": "1000000/minute",
    "RATE_LIMIT_ANALYSES": "1000000/minute",
    "RATE_LIMIT_COSTLY_ADDRESS": "100000000/minute",
    # One address (127.0.0.1) for every player: the per-address caps are not what is measured
    # here (bench/floods.py measures them, each client with an address of its own).
    "CLIENT_CONCURRENCY": "100000",
    "CLIENT_STREAMS": "100000",
}


def _ports() -> range:
    """Where the benchmarks' own servers listen: 9900-9999, or ``BENCH_PORTS=first-last`` (a
    range of one's own on a machine shared with other checkouts)."""
    given = os.environ.get("BENCH_PORTS", "")
    if not given:
        return range(9900, 10000)
    first, _, last = given.partition("-")
    return range(int(first), int(last) + 1)


PORTS = _ports()
_HANDED_OUT: set[int] = set()


def port_in_range() -> int:
    """A free port of :data:`PORTS` on 127.0.0.1, not handed out before by this process."""
    for port in PORTS:
        if port in _HANDED_OUT:
            continue
        with socket.socket() as s:
            try:
                s.bind((HOST, port))
            except OSError:
                continue
            _HANDED_OUT.add(port)
            return port
    raise RuntimeError(f"no free port in {PORTS.start}-{PORTS.stop - 1}")


def start_redis(port: int, log: Path) -> subprocess.Popen[bytes]:
    """A throwaway Redis on 127.0.0.1 (no persistence): production needs one for 2 workers."""
    command = [
        "redis-server", "--port", str(port), "--bind", HOST, "--save", "",
        "--appendonly", "no", "--protected-mode", "yes",
    ]  # fmt: skip
    with log.open("ab") as out:
        return subprocess.Popen(
            command, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )


def production_env(
    database_url: str,
    port: int,
    workers: int,
    *,
    redis_url: str | None,
    env: dict[str, str] | None = None,
) -> dict[str, str]:
    """The environment of the app as production starts it, with fresh random secrets unless
    ``env`` brings its own (two servers of one database share its ``DEAL_KEY``)."""
    extra = env or {}
    environment = {
        **os.environ,
        **BENCH_LIMITS,
        **extra,
        "APP_ENV": "production",
        "DATABASE_URL": database_url,
        "DEAL_KEY": extra.get("DEAL_KEY") or secrets.token_urlsafe(32),
        "SESSION_SECRET": extra.get("SESSION_SECRET") or secrets.token_urlsafe(32),
        "HOST": HOST,
        "PORT": str(port),
        "WEB_CONCURRENCY": str(workers),
        "MIGRATE": "0",
        "PYTHON": sys.executable,
        "PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}",
    }
    if redis_url:
        environment["REDIS_URL"] = redis_url
    return environment


def start_production(
    database_url: str,
    port: int,
    workers: int,
    log: Path,
    *,
    redis_url: str | None,
    env: dict[str, str] | None = None,
) -> subprocess.Popen[bytes]:
    """The app as production starts it: ``scripts/docker-start.sh`` (settings check, the
    DEAL_KEY preflight, ``python -m app.serve`` with httptools, proxy headers, no access log),
    with fresh random secrets (unless ``env`` brings them), on 127.0.0.1. The database is
    already migrated (MIGRATE=0)."""
    environment = production_env(database_url, port, workers, redis_url=redis_url, env=env)
    # The start script's default metrics directory (under /tmp, named by its pid) outlives the
    # server; this one goes when stop_server stops it.
    metrics = tempfile.mkdtemp(prefix="ph-bench-metrics-")
    environment["PROMETHEUS_MULTIPROC_DIR"] = metrics
    with log.open("wb") as out:
        server = subprocess.Popen(
            ["sh", str(ROOT / "scripts" / "docker-start.sh")], cwd=ROOT, env=environment,
            stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
    _METRICS_DIRS[server.pid] = metrics
    return server


_METRICS_DIRS: dict[int, str] = {}  # a production server's metrics directory, by its pid


def start_server(
    database_url: str,
    port: int,
    workers: int,
    log: Path,
    *,
    access_log: bool = False,
    env: dict[str, str] | None = None,
) -> subprocess.Popen[bytes]:
    """uvicorn with the production settings and fresh random secrets."""
    environment = {
        **os.environ,
        **BENCH_LIMITS,
        **(env or {}),
        "APP_ENV": "production",
        "DATABASE_URL": database_url,
        "DEAL_KEY": secrets.token_urlsafe(32),
        "SESSION_SECRET": secrets.token_urlsafe(32),
    }
    command = [
        sys.executable, "-m", "uvicorn", "--factory", "app.main:create_app",
        "--host", HOST, "--port", str(port), "--workers", str(workers),
        "--no-server-header",
    ]  # fmt: skip
    if not access_log:
        command.append("--no-access-log")
    with log.open("wb") as out:
        # Its own session, so that stopping it reaches its workers too, and nothing else.
        return subprocess.Popen(
            command, cwd=ROOT, env=environment, stdout=out, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip


def stop_server(server: subprocess.Popen[bytes], timeout: float = 20) -> None:
    """Stops a server started in a session of its own (SIGTERM to the group, then SIGKILL
    after ``timeout`` seconds), and removes its metrics directory if the bench made one."""
    try:
        if server.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(server.pid, signal.SIGKILL)
            server.wait(timeout=10)
    finally:
        metrics = _METRICS_DIRS.pop(server.pid, None)
        if metrics is not None:
            shutil.rmtree(metrics, ignore_errors=True)
