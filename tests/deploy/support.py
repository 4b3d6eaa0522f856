"""Servers for the deployment tests: ports on 127.0.0.1 in 8300–8399, or in the range
``TEST_PORTS`` names (e.g. ``9400-9499``: a checkout's own range on a shared machine); processes
that always stop (terminated at the end of the test, killed if they do not)."""

from __future__ import annotations

import os
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import NoReturn

import pytest

from app.config import PROJECT_DIR


def _ports(spec: str) -> range:
    low, _, high = spec.partition("-")
    return range(int(low), int(high) + 1)


PORTS = _ports(os.environ.get("TEST_PORTS") or "8300-8399")
_taken: set[int] = set()


def needs(reason: str) -> NoReturn:
    """A tool or server the test needs is missing: skipped here, a failure in CI (CI=true),
    where scripts/install.sh --dev must have installed it."""
    if os.environ.get("CI") == "true":
        pytest.fail(reason)
    pytest.skip(reason)


def free_port() -> int:
    """A free port of ``PORTS`` (this checkout's range on the shared machine)."""
    start = (os.getpid() * 7) % len(PORTS)
    for i in range(len(PORTS)):
        port = PORTS[(start + i) % len(PORTS)]
        if port in _taken:
            continue
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
        _taken.add(port)
        return port
    raise RuntimeError(f"no free port in {PORTS.start}-{PORTS.stop - 1}")


@contextmanager
def process(
    command: list[str], env: dict[str, str], log: Path
) -> Iterator[subprocess.Popen[bytes]]:
    with log.open("ab") as out:
        proc = subprocess.Popen(
            command, cwd=PROJECT_DIR, env=env, stdout=out, stderr=subprocess.STDOUT
        )
    try:
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


def wait_until_up(url: str, proc: subprocess.Popen[bytes], log: Path, seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"{url}: the server stopped: {log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(url, timeout=1) as answer:
                if answer.status == 200:
                    return
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise RuntimeError(f"{url}: the server did not start: {log.read_text()[-3000:]}")
        time.sleep(0.1)
