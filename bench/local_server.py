"""Starting and stopping the app under uvicorn: 127.0.0.1 only, always stopped."""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import socket
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HOST = "127.0.0.1"  # the only address the benchmarks ever talk to


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


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


def stop_server(server: subprocess.Popen[bytes]) -> None:
    if server.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(server.pid, signal.SIGTERM)
    try:
        server.wait(timeout=20)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(server.pid, signal.SIGKILL)
        server.wait(timeout=10)
