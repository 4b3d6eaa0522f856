"""A café or a classroom can play (issue 23; app/web/http/newcomers.py): past the free limit of new
players per address, a browser that did a moment of work still becomes a player, once per
proof, up to a larger ceiling; the API and a browser without the work are refused as before."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from app.web.http.signin_guard import leading_zero_bits, solve, work
from tests.web.support import browser_post, csrf
from tests.web.test_security import _retry_after, limited_app, players_count

BITS = 8  # solved in Python here: a few hundred hashes
CHALLENGE_RE = re.compile(
    r'src="/static/js/newcomer.js" defer data-challenge="([^"]+)" data-nonce="([^"]+)" '
    r'data-bits="(\d+)"'
)


@pytest.fixture()
def cafe(db_url: str) -> Iterator[FastAPI]:
    app = limited_app(
        db_url,
        rate_limit_new_players="2/hour",
        rate_limit_new_players_proved="3/hour",
        newcomer_proof_bits=BITS,
    )
    yield app
    app.state.limits.clear()
    app.state.services.engine.dispose()
    app.state.services.move_store.close()


def guest(app: FastAPI, port: int) -> TestClient:
    """Another person at the café: the same address, a browser of their own."""
    return TestClient(app, base_url="http://testserver", client=("203.0.113.50", port))


def challenge(c: TestClient) -> tuple[str, str, int] | None:
    page = c.get("/")
    assert page.status_code == 200
    found = CHALLENGE_RE.search(page.text)
    return (found.group(1), found.group(2), int(found.group(3))) if found else None


def prove(c: TestClient) -> Any:
    asked = challenge(c)
    assert asked is not None, "the page asks for no work"
    token, nonce, bits = asked
    assert bits == BITS
    return browser_post(c, "/newcomer", {"challenge": token, "proof": solve(nonce, bits)})


def first_action(c: TestClient) -> Any:
    return browser_post(c, "/games", {"game": "corners"})


def test_a_cafe_plays_past_the_free_limit_with_a_moment_of_work(cafe: FastAPI) -> None:
    for port in (1, 2):  # the free newcomers: no work asked, none needed
        with guest(cafe, port) as c:
            assert challenge(c) is None
            assert first_action(c).status_code == 303
    before = players_count(cafe)
    with guest(cafe, 3) as c:
        # Without the work: refused, nothing made, and the answer says why and what to do.
        assert challenge(c) is not None
        refused = first_action(c)
        assert _retry_after(refused) == 2 and "a café, a school?" in refused.text
        assert players_count(cafe) == before
        # With it: the page's script posts the proof and the first action makes the player.
        assert prove(c).status_code == 204
        assert first_action(c).status_code == 303
        assert players_count(cafe) == before + 1
        assert challenge(c) is None  # a player now: no more work on its pages
    with guest(cafe, 4) as c:
        assert prove(c).status_code == 204
        # The session cookie, proof and all, replayed by a script: one player, not two.
        saved = dict(c.cookies)
        assert first_action(c).status_code == 303
        c.cookies.clear()
        for key, value in saved.items():
            c.cookies.set(key, value)
        _retry_after(first_action(c))
        assert players_count(cafe) == before + 2
    # The proved ceiling holds even for browsers that work (3 an hour here: one left).
    with guest(cafe, 5) as c:
        assert prove(c).status_code == 204
        assert first_action(c).status_code == 303
    with guest(cafe, 6) as c:
        assert prove(c).status_code == 204
        refused = first_action(c)
        _retry_after(refused)
        assert "Too many new players" in refused.text
    assert players_count(cafe) == before + 3
    # The API keeps the free limit alone: programs use it.
    with guest(cafe, 7) as c:
        assert error_code_of(c.post("/api/players", json={})) == "rate_limited"


def error_code_of(response: Any) -> str:
    assert response.status_code == 429, response.text
    code: str = response.json()["error"]["code"]
    return code


def test_a_forged_altered_or_lazy_proof_is_refused(cafe: FastAPI) -> None:
    for port in (1, 2):
        with guest(cafe, port) as c:
            assert first_action(c).status_code == 303
    with guest(cafe, 3) as c:
        asked = challenge(c)
        assert asked is not None
        token, nonce, bits = asked
        issued, _, _, signature = token.split(".")
        lazy = next(str(n) for n in range(10_000) if not _works(nonce, str(n), bits))
        for sent, proof in (
            (token, lazy),  # no work done
            (f"{issued}.{nonce}.1.{signature}", solve(nonce, 1)),  # fewer bits than asked
            (f"{issued}.other{nonce}.{bits}.{signature}", solve(f"other{nonce}", bits)),
            ("not a challenge", "1"),
        ):
            answer = browser_post(c, "/newcomer", {"challenge": sent, "proof": proof})
            assert answer.status_code == 422, answer.text
        _retry_after(first_action(c))
        # A proof without the session's CSRF token is refused like any other form.
        bare = c.post("/newcomer", data={"challenge": token, "proof": solve(nonce, bits)})
        assert bare.status_code == 403
        assert csrf(c)


def _works(nonce: str, proof: str, bits: int) -> bool:
    return leading_zero_bits(work(nonce, proof)) >= bits
