"""Who is asking (app/web/deps.py), with a fake players' service: the browser's session and its
revocation, the API's bearer token, and the race queue's session key."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from starlette.datastructures import Headers

from app.services.errors import Unauthenticated
from app.web.deps import (
    SESSION_BROWSER,
    SESSION_PLAYER,
    SESSION_VERSION,
    api_player_id,
    api_viewer_id,
    session_key,
    sign_session_in,
    viewer_id,
)
from tests.aio import run


class FakePlayers:
    """The parts of app.services.players.Players the dependencies use."""

    def __init__(self) -> None:
        self.versions = {"p1": 3}
        self.tokens = {"tok-1": "p1"}
        self.prefs = {"p1": "dark.lang-de"}
        self.cached = False

    def cached_session_version(self, pid: str) -> int | None:
        return self.versions.get(pid) if self.cached else None

    async def session_version_async(self, pid: str) -> int | None:
        return self.versions.get(pid)

    def cached_prefs(self, pid: str) -> str | None:
        return self.prefs.get(pid)

    def cached_token_owner(self, token: str) -> str | None:
        return self.tokens.get(token) if self.cached else None

    async def id_for_token_async(self, token: str) -> str | None:
        return self.tokens.get(token)


def _request(session: dict[str, Any] | None = None, **headers: str) -> Any:
    return SimpleNamespace(
        session={} if session is None else session,
        headers=Headers(headers),
        state=SimpleNamespace(),
    )


@pytest.mark.parametrize("cached", [False, True])
def test_a_valid_session_is_its_player_with_the_accounts_prefs(cached: bool) -> None:
    players = FakePlayers()
    players.cached = cached
    request = _request({SESSION_PLAYER: "p1", SESSION_VERSION: 3})
    assert run(viewer_id(request, players)) == "p1"  # type: ignore[arg-type]
    assert request.state.account_prefs == "dark.lang-de"


def test_a_revoked_or_unknown_session_forgets_its_player() -> None:
    players = FakePlayers()
    stale = _request({SESSION_PLAYER: "p1", SESSION_VERSION: 2, SESSION_BROWSER: "b"})
    assert run(viewer_id(stale, players)) is None  # type: ignore[arg-type]
    assert stale.session == {SESSION_BROWSER: "b"}
    gone = _request({SESSION_PLAYER: "nobody", SESSION_VERSION: 1})
    assert run(viewer_id(gone, players)) is None  # type: ignore[arg-type]
    assert run(viewer_id(_request(), players)) is None  # type: ignore[arg-type]


@pytest.mark.parametrize("cached", [False, True])
def test_a_bearer_token_names_its_player(cached: bool) -> None:
    players = FakePlayers()
    players.cached = cached
    request = _request(authorization="Bearer  tok-1 ")
    assert run(api_player_id(request, players)) == "p1"  # type: ignore[arg-type]
    assert request.state.account_prefs == "dark.lang-de"


@pytest.mark.parametrize("authorization", ["", "Bearer", "Basic tok-1", "Bearer other", "tok-1"])
def test_anything_but_a_known_bearer_token_is_401(authorization: str) -> None:
    with pytest.raises(Unauthenticated):
        run(api_player_id(_request(authorization=authorization), FakePlayers()))  # type: ignore[arg-type]


def test_the_api_reads_without_a_token_but_not_with_a_bad_one() -> None:
    players = FakePlayers()
    assert run(api_viewer_id(_request(), players)) is None  # type: ignore[arg-type]
    with pytest.raises(Unauthenticated):
        run(api_viewer_id(_request(authorization="Bearer x"), players))  # type: ignore[arg-type]


def test_the_session_key_is_the_tokens_digest_or_the_browsers_id() -> None:
    api = session_key(_request(authorization="Bearer tok-1"))
    assert api.startswith("token:") and "tok-1" not in api
    assert api == session_key(_request(authorization="bearer tok-1"))
    browser = _request()
    key = session_key(browser)
    assert key == "browser:" + browser.session[SESSION_BROWSER]
    assert session_key(browser) == key  # kept for the session


def test_signing_in_starts_a_fresh_session_that_keeps_the_browser() -> None:
    request = _request({SESSION_BROWSER: "b1", "csrf": "old", SESSION_PLAYER: "anon"})
    sign_session_in(request, "p1", 7)
    assert request.session == {SESSION_BROWSER: "b1", SESSION_PLAYER: "p1", SESSION_VERSION: 7}
