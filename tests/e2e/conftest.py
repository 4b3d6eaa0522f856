"""A real server and a real browser: uvicorn on a free local port against a fresh SQLite
database (migrated with Alembic first), driven by Debian's Chromium through Playwright.

Playwright's own browser download does not work on this machine, so the browser is always
/usr/bin/chromium (override with E2E_CHROMIUM). scripts/install.sh --dev installs it where it
can (apt-get, as root or with sudo); without it these tests are skipped, saying why, except
under CI=true, where they fail: CI never passes without having driven the browser.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Generator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from app.config import PROJECT_DIR
from app.engine import DEVELOPMENT_KEY
from tests.databases import migrate
from tests.settings import SHARED, environment

CHROMIUM = os.environ.get("E2E_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
SCREENSHOTS = PROJECT_DIR / "test-artifacts" / "screenshots"

try:
    from playwright.sync_api import (
        Browser,
        BrowserContext,
        Page,
        Playwright,
        expect,
        sync_playwright,
    )
except ImportError:  # pragma: no cover - the dev extras install it
    sync_playwright = None  # type: ignore[assignment]
else:
    # Every wait is on a condition: it ends as soon as the page gets there, so a generous
    # bound costs a passing test nothing, and a machine kept busy by others fails nothing
    # (Playwright's own default for ``expect`` is 5 s).
    expect.set_options(timeout=30_000)


@dataclass(frozen=True)
class Server:
    url: str
    database_url: str
    database: Path
    log: Path


def _bindable(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def _free_port() -> int:
    """Any free port; or, with E2E_PORT (ports of one's own, where several suites share a
    machine), the first free one of ten from E2E_PORT + 10 × the xdist worker's number: each
    worker runs servers of its own (the session's, and a test's with settings of its own),
    and two of them on one port left a browser talking to another worker's server."""
    if os.environ.get("E2E_PORT"):
        worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw")
        first = int(os.environ["E2E_PORT"]) + 10 * (int(worker) if worker.isdigit() else 0)
        for port in range(first, first + 10):
            if _bindable(port):
                return port
        raise RuntimeError(f"no free port from E2E_PORT's {first} to {first + 9}")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_until_up(url: str, proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 120  # a loaded machine: migrations ran, the app still imports
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the server stopped: {log.read_text()[-2000:]}")
        try:
            with urllib.request.urlopen(f"{url}/healthz", timeout=1) as answer:
                if answer.status == 200:
                    return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"the server did not start in time: {log.read_text()[-2000:]}")


def _no_browser(reason: str) -> None:
    """Skip a browser test that cannot run here, saying why; under CI=true, fail it."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI must run the browser tests: {reason}", pytrace=False)
    pytest.skip(reason)


@pytest.hookimpl(tryfirst=True)  # before -m deselects by marker
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test here is an ``e2e`` test, whether or not its module says so."""
    here = Path(__file__).parent
    for item in items:
        if item.path.is_relative_to(here) and item.get_closest_marker("e2e") is None:
            item.add_marker(pytest.mark.e2e)


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    if sync_playwright is None:
        _no_browser("the end-to-end tests need the playwright package (install.sh --dev)")
    if not Path(CHROMIUM).exists():
        _no_browser(
            f"no Chromium at {CHROMIUM}: scripts/install.sh --dev installs Debian's where it "
            "can (apt-get, as root or with sudo); elsewhere set E2E_CHROMIUM to a Chromium"
        )
    with serve(tmp_path_factory.mktemp("e2e")) as running:
        yield running


@pytest.fixture(scope="module")
def arena(server: Server, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A server of the module's own, for walks that claim certified deals (the daily challenge
    and events give each player deals of their own, sealed until the day or the event ends):
    on the shared server their seals refused other walks the same small deal numbers (403,
    depending on which walks one xdist worker ran first)."""
    with serve(tmp_path_factory.mktemp("arena")) as running:
        yield running


@contextmanager
def serve(where: Path, **settings: str) -> Iterator[Server]:
    """A server on a fresh database in ``where``; ``settings``: environment variables that
    differ from the suite's (a test about a limit sets it)."""
    database = where / "e2e.db"
    url = f"sqlite:///{database}"
    migrate(url)
    port = _free_port()
    env = {
        **os.environ,
        # Admission, the solver's budgets and judging as in the in-process apps
        # (tests/settings.py says why); what differs for a browser's server follows.
        **environment(SHARED),
        "DATABASE_URL": url,
        "DEAL_KEY": DEVELOPMENT_KEY.decode(),  # the plans in the tests are for this key
        "LEADERBOARD_MIN_GAMES": "2",  # the new-player walk below plays two games
        # Boards computed on each request: one an earlier walk had cached would hide a new
        # player's row for 30 s. The cache is tested on its own (tests/services).
        "LEADERBOARD_CACHE_SECONDS": "0",
        # Every browser of the suite comes from one address, far faster than people. The
        # per-name sign-in limit keeps its default: the sign-in walk is about it.
        "RATE_LIMIT_NEW_PLAYERS": "100000/minute",
        "RATE_LIMIT_NEW_GAMES": "100000/minute",
        "RATE_LIMIT_MOVES": "100000/minute",
        "RATE_LIMIT_SIGNIN": "100000/minute",
        "RATE_LIMIT_ADDRESS": "1000000/minute",
        # A lost game's analysis (its board asks for one at once) searches a smaller budget
        # than the in-process apps': it took a core from the browser.
        "SOLVER_ANALYSIS_NODES": "20000",
        # On a loaded CI machine a request may wait seconds for SQLite's write lock; the
        # default would turn that into a 503 the board cannot recover from (tested on its own,
        # tests/web/test_faults.py).
        "DB_LOCK_TIMEOUT_MS": "10000",
        # The race queue forms a race as soon as two strangers wait (tests/e2e/test_compete.py).
        "RACE_QUEUE_WAIT_S": "0",
        **settings,
    }
    log = where / "server.log"
    with log.open("wb") as out:
        command = [sys.executable, "-m", "uvicorn", "--factory", "app.main:create_app"]
        command += ["--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"]
        proc = subprocess.Popen(
            command,
            cwd=PROJECT_DIR,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_until_up(base, proc, log)
        yield Server(base, url, database, log)
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """A failed browser test shows what its server said last (a 503 or a lock wait, say)."""
    report = yield
    server = getattr(item, "funcargs", {}).get("server")
    if report.failed and isinstance(server, Server) and server.log.exists():
        tail = server.log.read_text(errors="replace").splitlines()[-40:]
        report.sections.append(("e2e server log (last 40 lines)", "\n".join(tail)))
    return report


@pytest.fixture(scope="session")
def playwright() -> Iterator[Playwright]:
    if sync_playwright is None:
        _no_browser("the end-to-end tests need the playwright package (install.sh --dev)")
    with sync_playwright() as p:
        yield p


@pytest.fixture(scope="session")
def browser(playwright: Playwright, server: Server) -> Iterator[Browser]:
    chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
    yield chromium
    chromium.close()


# Runs before any page script (and outside the page's CSP): every violation of the content
# security policy is reported on the console, where the page fixture fails the test on it.
REPORT_CSP = """
document.addEventListener("securitypolicyviolation", (e) => {
  console.error("CSP violation: " + e.violatedDirective + " blocked " + e.blockedURI);
});
"""


@pytest.fixture()
def context(browser: Browser, server: Server) -> Iterator[BrowserContext]:
    """A fresh browser profile: a new visitor (a player once it acts)."""
    ctx = browser.new_context(base_url=server.url, viewport={"width": 1280, "height": 800})
    ctx.set_default_timeout(30_000)
    ctx.add_init_script(REPORT_CSP)
    yield ctx
    ctx.close()


def csp_problems(messages: list[str]) -> list[str]:
    return [m for m in messages if "CSP violation" in m or "Content Security Policy" in m]


@pytest.fixture()
def page(context: BrowserContext) -> Iterator[Page]:
    """A page that fails the test on any script error or CSP violation in the browser."""
    errors: list[str] = []
    console: list[str] = []
    p = context.new_page()
    p.on("pageerror", lambda exc: errors.append(str(exc)))
    p.on("console", lambda msg: console.append(msg.text))
    yield p
    assert not errors, f"script errors in the page: {errors}"
    assert not csp_problems(console), f"CSP violations: {csp_problems(console)}"


@pytest.fixture(scope="session")
def screenshots() -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS
