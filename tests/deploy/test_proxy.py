"""The real reverse proxy of docker-compose.yml (Debian's caddy, with deploy/Caddyfile as it is)
in front of two app instances in production mode on one PostgreSQL and one Redis:

- per-client rate limits hold through the proxy: five clients are five addresses (the app
  trusts the proxy's X-Forwarded-For, and only the proxy's);
- an event stream held through the proxy delivers a move made on the other instance within a
  second;
- the app behind it sees HTTPS (X-Forwarded-Proto): pages answer, Secure cookies and the CSRF
  check work, where plain HTTP would get the "This site needs HTTPS" page.
"""

from __future__ import annotations

import json
import os
import queue
import re
import secrets
import shutil
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx2 as httpx
import pytest
import redis

from app.config import PROJECT_DIR
from tests.databases import fresh_postgres_database, migrate
from tests.deploy.support import free_port, needs, process, wait_until_up

REDIS_URL = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/5")
SITE = "127.0.0.2"  # not localhost: browsers would keep Secure cookies there over plain HTTP
CLIENTS = [f"127.0.0.{i}" for i in range(3, 8)]  # five clients, five source addresses
NEW_PLAYERS_PER_CLIENT = 3


@dataclass(frozen=True)
class Stack:
    site: str  # https://127.0.0.2:PORT, through Caddy
    a: str  # the instances themselves (Caddy sends everything to A first: LB_POLICY=first)
    b: str


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    caddy = shutil.which("caddy")
    if caddy is None:
        needs(
            "Debian's caddy is not installed and scripts/install.sh --dev could not install it "
            "(apt-get install caddy)"
        )
    try:
        redis.Redis.from_url(REDIS_URL, socket_timeout=2).ping()
    except redis.RedisError as exc:
        needs(f"Redis at {REDIS_URL} does not answer: {exc}")
    url = fresh_postgres_database("ph_proxy")
    migrate(url)
    where = tmp_path_factory.mktemp("proxy")
    key, secret = secrets.token_urlsafe(48), secrets.token_urlsafe(48)
    prefix = f"ph-proxytest-{secrets.token_hex(4)}"
    app_env = {
        **os.environ,
        "APP_ENV": "production",
        "DATABASE_URL": url,
        "DEAL_KEY": key,
        "SESSION_SECRET": secret,
        "REDIS_URL": REDIS_URL,
        "RATE_LIMIT_PREFIX": prefix,
        "RATE_LIMIT_NEW_PLAYERS": f"{NEW_PLAYERS_PER_CLIENT}/hour",
        "RACE_COUNTDOWN_S": "0",
        "WEB_CONCURRENCY": "1",
        "FORWARDED_ALLOW_IPS": "127.0.0.1",  # Caddy, seen from the app
        "JSON_LOGS": "true",
    }
    ports = free_port(), free_port()
    https, http = free_port(), free_port()
    caddy_env = {
        **os.environ,
        "SITE_ADDRESS": SITE,
        "SITE_TLS": "tls internal",
        "APP_UPSTREAMS": " ".join(f"127.0.0.1:{p}" for p in ports),
        "LB_POLICY": "first",
        "HTTP_PORT": str(http),
        "HTTPS_PORT": str(https),
        "CADDY_EXTRA": "skip_install_trust",
        "XDG_DATA_HOME": str(where / "caddy-data"),
        "XDG_CONFIG_HOME": str(where / "caddy-config"),
        "HOME": str(where),
    }
    serve = [sys.executable, "-m", "app.serve", "--factory", "app.main:create_app"]
    serve += ["--host", "127.0.0.1", "--http", "httptools", "--proxy-headers", "--no-access-log"]
    serve += ["--timeout-graceful-shutdown", "2"]
    caddy_run = [caddy, "run", "--config", str(PROJECT_DIR / "deploy" / "Caddyfile")]
    caddy_run += ["--adapter", "caddyfile"]
    logs = [where / "a.log", where / "b.log", where / "caddy.log"]
    with (
        process([*serve, "--port", str(ports[0])], app_env, logs[0]) as a,
        process([*serve, "--port", str(ports[1])], app_env, logs[1]) as b,
        process(caddy_run, caddy_env, logs[2]) as proxy,
    ):
        for proc, port, log in ((a, ports[0], logs[0]), (b, ports[1], logs[1])):
            wait_until_up(f"http://127.0.0.1:{port}/healthz", proc, log)
        site = f"https://{SITE}:{https}"
        deadline = time.monotonic() + 120
        while True:  # Caddy makes its CA and certificate first
            try:
                if httpx.get(f"{site}/healthz", verify=False, timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if proxy.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"Caddy did not come up: {logs[2].read_text()[-3000:]}")
            time.sleep(0.2)
        yield Stack(site, f"http://127.0.0.1:{ports[0]}", f"http://127.0.0.1:{ports[1]}")
        for log in logs[:2]:  # every line the apps wrote is JSON (uvicorn's own too)
            for line in log.read_text().splitlines():
                json.loads(line)


def _client(source: str) -> httpx.Client:
    transport = httpx.HTTPTransport(verify=False, local_address=source)
    return httpx.Client(transport=transport, timeout=10.0)


@pytest.mark.slow
@pytest.mark.postgres
def test_rate_limits_count_each_client_through_the_proxy(stack: Stack) -> None:
    answers = []
    for source in CLIENTS:
        with _client(source) as client:
            answers.append(
                [
                    client.post(f"{stack.site}/api/players", json={}).status_code
                    for _ in range(NEW_PLAYERS_PER_CLIENT + 1)
                ]
            )
    # Each address has its own allowance (counted once in Redis, whichever instance answered).
    assert answers == [[201] * NEW_PLAYERS_PER_CLIENT + [429]] * len(CLIENTS)
    # A client cannot claim other addresses: Caddy replaces what it sends as X-Forwarded-For.
    with _client("127.0.0.10") as liar:
        spoofed = [
            liar.post(
                f"{stack.site}/api/players",
                json={},
                headers={"x-forwarded-for": f"10.9.8.{i}", "forwarded": f"for=10.9.8.{i}"},
            ).status_code
            for i in range(NEW_PLAYERS_PER_CLIENT + 1)
        ]
    assert spoofed == [201] * NEW_PLAYERS_PER_CLIENT + [429]


@pytest.mark.slow
@pytest.mark.postgres
def test_the_app_behind_the_proxy_sees_https(stack: Stack) -> None:
    with _client("127.0.0.8") as browser:
        page = browser.get(f"{stack.site}/account")
        assert page.status_code == 200, page.text[:500]
        cookie = page.headers["set-cookie"]
        assert "secure" in cookie.lower()
        token = re.search(r'name="csrftoken" value="([^"]+)"', page.text)
        assert token
        # The Secure session cookie comes back, the CSRF check passes: forms work.
        named = browser.post(
            f"{stack.site}/account/name",
            data={"name": "ProxyPlayer" + secrets.token_hex(3), "csrftoken": token[1]},
            headers={"origin": stack.site},
        )
        assert named.status_code == 303, named.text[:500]
        # Plain HTTP to the proxy is redirected to HTTPS by Caddy.
    # Straight to an instance over plain HTTP at a public name: the explicit page, not a
    # form that expires for ever.
    direct = httpx.get(f"{stack.a}/account", headers={"host": "games.example.org"})
    assert direct.status_code == 400 and "This site needs HTTPS" in direct.text
    # Operators' routes are not served through the proxy.
    assert httpx.get(f"{stack.site}/metrics", verify=False).status_code == 404


class _Stream:
    """Reads an event stream through the proxy in a thread; each event with its arrival time."""

    def __init__(self, url: str) -> None:
        self.events: queue.Queue[tuple[float, str, dict[str, Any]]] = queue.Queue()
        self.opened = threading.Event()
        self._client = _client("127.0.0.9")
        self._url = url
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        assert self.opened.wait(10), "the stream did not open"

    def _run(self) -> None:
        try:
            with self._client.stream("GET", self._url, timeout=httpx.Timeout(30.0)) as answer:
                assert answer.status_code == 200
                assert answer.headers["content-type"].startswith("text/event-stream")
                self.opened.set()
                kind, data = "", ""
                for line in answer.iter_lines():
                    if line.startswith("event:"):
                        kind = line[6:].strip()
                    elif line.startswith("data:"):
                        data = line[5:].strip()
                    elif not line and data:
                        self.events.put((time.monotonic(), kind, json.loads(data)))
                        kind, data = "", ""
        except (httpx.HTTPError, RuntimeError):
            pass

    def next_progress(self, deadline: float) -> tuple[float, dict[str, Any]]:
        while True:
            left = deadline - time.monotonic()
            assert left > 0, "no progress event in time"
            at, kind, data = self.events.get(timeout=left)
            if kind == "progress":
                return at, data

    def close(self) -> None:
        self._client.close()


@pytest.mark.slow
@pytest.mark.postgres
def test_a_move_on_the_other_instance_reaches_a_stream_through_the_proxy(stack: Stack) -> None:
    with httpx.Client(base_url=stack.b, timeout=10.0) as b:  # plays on instance B only
        token = b.post("/api/players", json={}).json()["token"]
        b.headers["authorization"] = f"Bearer {token}"
        code = b.post("/api/rooms", json={"game": "corners"}).json()["code"]
        race = b.post(f"/api/rooms/{code}/start").json()["race"]
        (game_id,) = race["games"].values()
        stream = _Stream(f"{stack.site}/rooms/{code}/events")  # held by A, through Caddy
        try:
            delays = []
            for moves in range(1, 6):
                state = b.get(f"/api/games/{game_id}").json()
                move = state["legal_moves"][0]
                played = b.post(
                    f"/api/games/{game_id}/moves", json={**move, "version": state["version"]}
                )
                assert played.status_code == 200, played.text
                sent = time.monotonic()
                at, data = stream.next_progress(deadline=sent + 1.0)  # within a second
                assert data["moves"] == moves
                delays.append(at - sent)
        finally:
            stream.close()
    print(f"move on B -> event through Caddy from A: {[round(d * 1000) for d in delays]} ms")
