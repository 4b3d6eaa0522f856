"""Signing in: wrong guesses by others never lock the owner out (issue 21).

Guessers stay limited per address; wrong passwords from addresses that never signed in as a
name count against the name, and past that limit such an address must bring a proof of work;
the owner from a known address signs in as usual, and from a new address with a proof. Proofs
are single-use (across instances, through Redis), expire, and cannot be forged. Addresses are
set per test client; time comes from the guard's clock. On SQLite and PostgreSQL.
"""

from __future__ import annotations

import logging
import re
import uuid
from typing import Any

import pytest
from argon2 import PasswordHasher
from fastapi import FastAPI
from fastapi.testclient import TestClient

from app.services import players as players_module
from app.services.players import name_key
from app.web.http.signin_guard import SignInGuard, leading_zero_bits, solve, work
from tests.local_redis import REDIS_URL, needs_redis
from tests.web.support import browser_post
from tests.web.test_security import (
    PASSWORD,
    _retry_after,
    account_name,
    limited_app,
    with_password,
)

BITS = 8  # the tests solve proofs in Python: a few hundred hashes each


@pytest.fixture(autouse=True)
def quick_hashes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Argon2 at its lightest: these tests are about counting attempts, not about hashing (a
    real verification takes about half a second on this machine, and they make a hundred)."""
    quick = PasswordHasher(time_cost=1, memory_cost=8, parallelism=1)
    monkeypatch.setattr(players_module, "_hasher", quick)
    monkeypatch.setattr(players_module, "_DUMMY_HASH", quick.hash("no such password"))


class Clock:
    def __init__(self, now: float = 1_800_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def guarded_app(db_url: str, close: list[FastAPI], **settings: Any) -> FastAPI:
    values: dict[str, Any] = {
        "rate_limit_signin": "5/minute",
        "rate_limit_signin_name": "10/hour",
        "signin_proof_bits": BITS,
        **settings,
    }
    app = limited_app(db_url, **values)
    close.append(app)
    app.state.signin_guard.clock = Clock()
    return app


def guard_of(app: FastAPI) -> SignInGuard:
    guard: SignInGuard = app.state.signin_guard
    return guard


def at(app: FastAPI, address: str) -> TestClient:
    return TestClient(app, base_url="http://testserver", client=(address, 1))


def ask(c: TestClient, name: str) -> dict[str, Any]:
    answer = c.get("/signin/challenge", params={"name": name})
    assert answer.status_code == 200, answer.text
    assert answer.headers["cache-control"] == "no-store"
    body: dict[str, Any] = answer.json()
    return body


def sign_in(c: TestClient, name: str, password: str, *, prove: bool = True) -> Any:
    """A sign-in as the page sends it: with a proof when the server asks for one (``prove``)."""
    data = {"name": name, "password": password}
    if prove:
        asked = ask(c, name)
        if asked["required"]:
            data |= {"challenge": asked["challenge"], "proof": solve(asked["nonce"], asked["bits"])}
    return browser_post(c, "/signin", data)


def owner(app: FastAPI, address: str = "192.0.2.1") -> str:
    """A named player with a password, set from ``address``; returns the name."""
    with at(app, address) as c:
        _, name = with_password(c)
    return name


def failures(app: FastAPI, name: str) -> int:
    guard = guard_of(app)
    (item,) = guard.names.items
    return guard.storage.get(item.key_for(guard.names.name, guard._name_id(name_key(name))))


def test_a_hundred_guesses_from_elsewhere_do_not_lock_the_owner_out(
    db_url: str, close_apps: list[FastAPI]
) -> None:
    app = guarded_app(db_url, close_apps)
    name = owner(app)
    # 100 wrong guesses from 20 addresses, 5 each, bringing a proof whenever one is asked.
    for i in range(20):
        with at(app, f"203.0.113.{i + 1}") as guesser:
            for _ in range(5):
                assert sign_in(guesser, name, f"guess {uuid.uuid4()}").status_code == 401
            # Guessers are still limited per address.
            blocked = sign_in(guesser, name, PASSWORD)
            _retry_after(blocked)
            assert account_name(guesser) != name
    assert failures(app, name) == 100
    assert guard_of(app).under_attack(name_key(name))

    with at(app, "198.51.100.77") as phone:  # the owner, somewhere new
        assert ask(phone, name)["required"]
        # Without the proof (no JavaScript): refused, and told plainly what to do.
        plain = sign_in(phone, name, PASSWORD, prove=False)
        assert plain.status_code == 403
        assert "JavaScript" in plain.text and "device you have signed in on before" in plain.text
        assert account_name(phone) != name
        # With it, the right password signs in; the address is known from now on.
        assert sign_in(phone, name, PASSWORD).status_code == 303
        assert account_name(phone) == name
        assert not ask(phone, name)["required"]
    assert failures(app, name) == 100  # a right password counts nothing

    with at(app, "192.0.2.1") as home:  # where the password was set: as usual, no proof
        assert not ask(home, name)["required"]
        assert sign_in(home, name, PASSWORD, prove=False).status_code == 303
        assert account_name(home) == name


def test_a_known_address_is_never_counted_nor_asked(db_url: str, close_apps: list[FastAPI]) -> None:
    app = guarded_app(db_url, close_apps, rate_limit_signin_name="2/hour")
    name = owner(app, "192.0.2.2")
    with at(app, "192.0.2.2") as home:
        for _ in range(3):  # the owner's own typos at home
            assert sign_in(home, name, "typo typo typo", prove=False).status_code == 401
        assert failures(app, name) == 0 and not guard_of(app).under_attack(name_key(name))
    with at(app, "203.0.113.50") as guesser:
        for _ in range(2):
            assert sign_in(guesser, name, "guess", prove=False).status_code == 401
        assert sign_in(guesser, name, "guess", prove=False).status_code == 403
    with at(app, "192.0.2.2") as home:
        assert sign_in(home, name, PASSWORD, prove=False).status_code == 303


def test_a_wrong_password_with_a_valid_proof_is_refused_and_counted(
    db_url: str, close_apps: list[FastAPI]
) -> None:
    app = guarded_app(db_url, close_apps, rate_limit_signin_name="2/hour")
    name = owner(app)
    with at(app, "203.0.113.60") as guesser:
        for _ in range(2):
            assert sign_in(guesser, name, "guess", prove=False).status_code == 401
        assert failures(app, name) == 2
        refused = sign_in(guesser, name, "still a guess")  # with a valid proof
        assert refused.status_code == 401 and "do not match" in refused.text
        assert account_name(guesser) != name
    assert failures(app, name) == 3


def _proof_for(c: TestClient, name: str) -> tuple[dict[str, Any], str]:
    asked = ask(c, name)
    assert asked["required"]
    return asked, solve(asked["nonce"], asked["bits"])


def _refused(answer: Any, status: int, words: str) -> None:
    assert answer.status_code == status, answer.text
    assert "Not signed in" in answer.text and words in answer.text


def test_replayed_expired_and_forged_proofs_are_refused(
    db_url: str, close_apps: list[FastAPI], caplog: pytest.LogCaptureFixture
) -> None:
    app = guarded_app(
        db_url, close_apps, rate_limit_signin="50/minute", rate_limit_signin_name="1/hour"
    )
    guard = guard_of(app)
    assert isinstance(guard.clock, Clock)
    name, other = owner(app), owner(app, "192.0.2.9")
    with at(app, "203.0.113.70") as guesser:
        assert sign_in(guesser, name, "guess", prove=False).status_code == 401
        assert sign_in(guesser, other, "guess", prove=False).status_code == 401
    with caplog.at_level(logging.WARNING), at(app, "198.51.100.80") as c:

        def post(data: dict[str, str]) -> Any:
            return browser_post(c, "/signin", {"name": name, "password": PASSWORD, **data})

        # Replayed: a proof is spent by its first use, right password or wrong.
        asked, proof = _proof_for(c, name)
        used = {"challenge": asked["challenge"], "proof": proof}
        assert (
            browser_post(c, "/signin", {"name": name, "password": "wrong", **used}).status_code
            == 401
        )
        _refused(post(used), 409, "used already")
        # Expired: the clock moves past the challenge's lifetime.
        asked, proof = _proof_for(c, name)
        guard.clock.now += guard.ttl + 1
        _refused(post({"challenge": asked["challenge"], "proof": proof}), 422, "expired")
        # Forged: altered signature, bits or time; a challenge for another name; no real work.
        asked, proof = _proof_for(c, name)
        issued, nonce, bits, signature = asked["challenge"].split(".")
        flipped = signature[:-1] + ("0" if signature[-1] != "0" else "1")
        wrong_work = next(
            str(n) for n in range(10_000) if leading_zero_bits(work(nonce, str(n))) < BITS
        )
        forged = [
            {"challenge": f"{issued}.{nonce}.{bits}.{flipped}", "proof": proof},
            {"challenge": f"{issued}.{nonce}.1.{signature}", "proof": proof},
            {"challenge": f"{int(issued) + 100}.{nonce}.{bits}.{signature}", "proof": proof},
            {"challenge": asked["challenge"], "proof": wrong_work},
            {"challenge": asked["challenge"], "proof": "-1"},
            {"challenge": "nonsense", "proof": proof},
            {"challenge": asked["challenge"], "proof": ""},
        ]
        with at(app, "198.51.100.81") as elsewhere:
            theirs, their_proof = _proof_for(elsewhere, other)
        forged.append({"challenge": theirs["challenge"], "proof": their_proof})
        for data in forged:
            _refused(post(data), 422, "did not verify")
        assert account_name(c) != name
        # Only the wrong password counted (with the guesser's one): no refused proof did.
        assert failures(app, name) == 2
        # The untouched challenge still works, once.
        assert post({"challenge": asked["challenge"], "proof": proof}).status_code == 303
        assert account_name(c) == name
    assert [r for r in caplog.records if r.levelno >= logging.ERROR] == []


def test_a_missing_proof_page_names_no_secret_and_says_how_long(
    db_url: str, close_apps: list[FastAPI]
) -> None:
    app = guarded_app(db_url, close_apps, rate_limit_signin_name="1/hour")
    name = owner(app)
    with at(app, "203.0.113.90") as guesser:
        assert sign_in(guesser, name, "guess", prove=False).status_code == 401
        page = sign_in(guesser, name, "guess", prove=False)
        assert page.status_code == 403
        assert re.search(r"wait about \d+ minutes?\.", page.text)
        assert 'name="challenge"' in page.text and "/static/js/signin.js" in page.text
        # With JavaScript the page starts the work at once, on a challenge for the name typed.
        assert re.search(r'data-signin data-challenge="[^"]+" data-nonce="[^"]+"', page.text)
        assert f'value="{name}"' in page.text


@needs_redis
def test_with_redis_two_instances_share_known_addresses_failures_and_spent_proofs(
    db_url: str, close_apps: list[FastAPI]
) -> None:
    shared = {"redis_url": REDIS_URL, "rate_limit_prefix": f"ph-test-{uuid.uuid4().hex[:12]}"}
    one = guarded_app(db_url, close_apps, rate_limit_signin_name="3/hour", **shared)
    two = guarded_app(db_url, close_apps, rate_limit_signin_name="3/hour", **shared)
    name = owner(one, "192.0.2.30")
    for i, app in enumerate([one, two, one]):  # failures counted on both instances together
        with at(app, f"203.0.113.{100 + i}") as guesser:
            assert sign_in(guesser, name, "guess", prove=False).status_code == 401
    assert guard_of(two).under_attack(name_key(name)) and failures(one, name) == 3
    with at(two, "192.0.2.30") as home:  # known on one, so known on two
        assert not ask(home, name)["required"]
    with at(one, "198.51.100.90") as a, at(two, "198.51.100.90") as b:
        asked, proof = _proof_for(a, name)
        data = {"name": name, "password": "wrong", "challenge": asked["challenge"], "proof": proof}
        assert browser_post(a, "/signin", data).status_code == 401
        _refused(browser_post(b, "/signin", {**data, "password": PASSWORD}), 409, "used already")
        assert sign_in(b, name, PASSWORD).status_code == 303  # a fresh proof, on the other one
        assert account_name(b) == name
    assert failures(two, name) == 4


def test_the_guard_is_silent_when_rate_limits_are_off(
    db_url: str, close_apps: list[FastAPI]
) -> None:
    app = guarded_app(
        db_url, close_apps, rate_limits_enabled=False, rate_limit_signin_name="1/hour"
    )
    name = owner(app)
    with at(app, "203.0.113.95") as guesser:
        for _ in range(3):
            assert sign_in(guesser, name, "guess", prove=False).status_code == 401
        assert not ask(guesser, name)["required"]


def test_proofs_are_what_the_browser_computes() -> None:
    # SHA-256 of "<nonce>:<n>", leading zero bits counted from the first byte.
    assert leading_zero_bits(bytes([0, 0x0F]) + bytes(30)) == 12
    assert leading_zero_bits(bytes(32)) == 256
    proof = solve("abc", 12)
    assert leading_zero_bits(work("abc", proof)) >= 12
    assert all(leading_zero_bits(work("abc", str(n))) < 12 for n in range(int(proof)))
