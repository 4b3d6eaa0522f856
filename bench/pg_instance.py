"""A PostgreSQL server of one's own, for whatever must stop or restart a database.

The shared server on 127.0.0.1:5432 is never stopped: tests and benchmarks that need a real
outage (tests/web/test_outage.py, bench/faults.py) start one of these instead. ``initdb`` into a
temporary directory, ``pg_ctl start`` on 127.0.0.1 and a free port (its socket in that
directory too, trust authentication for the ``postgres`` user), and at the end ``pg_ctl stop``
and the directory removed. PostgreSQL refuses to run as root, so under root (CI on this
machine) every command runs as the ``postgres`` user (``runuser``).

    with PgInstance() as pg:
        url = pg.create_database("ph")  # postgresql+psycopg://postgres@127.0.0.1:PORT/ph
        pg.stop(); pg.start()

Standard library only, so that both the tests and the benchmark scripts can import it.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path
from types import TracebackType

HOST = "127.0.0.1"


def postgres_bin() -> Path | None:
    """The directory of initdb and pg_ctl: ``PG_BIN``, else the newest under /usr/lib/postgresql
    (Debian's layout), else wherever ``pg_ctl`` is on the PATH."""
    if os.environ.get("PG_BIN"):
        return Path(os.environ["PG_BIN"])
    versions = sorted(
        Path("/usr/lib/postgresql").glob("*/bin/initdb"),
        key=lambda p: int(p.parent.parent.name) if p.parent.parent.name.isdigit() else 0,
    )
    if versions:
        return versions[-1].parent
    found = shutil.which("pg_ctl")
    return Path(found).parent if found else None


def available() -> str | None:
    """None if an instance can be started here, else the reason it cannot."""
    if postgres_bin() is None:
        return "PostgreSQL's initdb is not installed"
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return "running as root and there is no postgres user to run PostgreSQL as"
        if shutil.which("runuser") is None:
            return "running as root without runuser"
    return None


def _free_port() -> int:
    given = os.environ.get("BENCH_PORTS", "")  # a shared machine: only one's own ports
    if given:
        first, _, last = given.partition("-")
        # The highest free port of the range: the benchmarks hand theirs out from the bottom.
        return _highest_free(int(first), int(last))
    with socket.socket() as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


def _highest_free(first: int, last: int) -> int:
    for port in range(last, first - 1, -1):
        with socket.socket() as s:
            try:
                s.bind((HOST, port))
            except OSError:
                continue
            return port
    raise RuntimeError(f"no free port in {first}-{last}")


class PgInstance:
    def __init__(self, port: int | None = None) -> None:
        reason = available()
        if reason:
            raise RuntimeError(reason)
        self.bin = postgres_bin()
        self.port = port or _free_port()
        self.root = Path(tempfile.mkdtemp(prefix="ph-pg-"))
        self.data = self.root / "data"
        self.log = self.root / "postgres.log"
        self._as_root = os.geteuid() == 0
        if self._as_root:
            owner = pwd.getpwnam("postgres")
            os.chown(self.root, owner.pw_uid, owner.pw_gid)
        self.root.chmod(0o700)
        self._run(
            "initdb", "-D", str(self.data), "-U", "postgres", "--auth=trust",
            "--no-locale", "-E", "UTF8", "--no-sync",
        )  # fmt: skip
        self.running = False

    def _run(self, tool: str, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        assert self.bin is not None
        command = [str(self.bin / tool), *args]
        if self._as_root:
            command = ["runuser", "-u", "postgres", "--", *command]
        return subprocess.run(
            command, check=check, capture_output=True, text=True, timeout=120, cwd=self.root
        )

    def url(self, database: str = "postgres") -> str:
        return f"postgresql+psycopg://postgres@{HOST}:{self.port}/{database}"

    def start(self) -> None:
        options = (
            f"-p {self.port} -k {self.root} -c listen_addresses={HOST} -c max_connections=120"
            " -c shared_buffers=64MB -c fsync=on"
        )
        self._run("pg_ctl", "-D", str(self.data), "-o", options, "-l", str(self.log), "-w",
                  "-t", "60", "start")  # fmt: skip
        self.running = True

    def stop(self, mode: str = "fast") -> None:
        """``fast``: what an operator's restart does (clients get "terminating connection due
        to administrator command"); ``immediate``: a crash."""
        self._run("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "-t", "60", "stop")
        self.running = False

    def create_database(self, name: str) -> str:
        self._run("createdb", "-h", HOST, "-p", str(self.port), "-U", "postgres", name)
        return self.url(name)

    def destroy(self) -> None:
        if self.running:
            with contextlib.suppress(subprocess.SubprocessError):
                self.stop("immediate")
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> PgInstance:
        try:
            self.start()
        except BaseException:
            self.destroy()
            raise
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.destroy()
