"""The players' in-process caches (cachetools): what each remembers, for how long, and what
forgetting drops. Time is a clock the test moves, never a sleep."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from app.db.session import make_engine, make_sessionmaker
from app.services.players import Players, TokenOwners
from tests.databases import migrate, sqlite_url


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def players(tmp_path: Path, clock: Clock) -> Iterator[Players]:
    url = sqlite_url(tmp_path, "players")
    migrate(url)
    engine = make_engine(url, pool_size=1)
    try:
        yield Players(make_sessionmaker(engine), clock=clock)
    finally:
        engine.dispose()


def test_a_token_owner_is_remembered_for_its_time_then_asked_again(
    players: Players, clock: Clock
) -> None:
    player, token = players.create_api_player("carol")
    assert players.cached_token_owner(token) is None  # never read yet
    assert players.id_for_token(token) == player.id
    assert players.cached_token_owner(token) == player.id
    clock.now += Players.TOKEN_CACHE_SECONDS + 0.1
    assert players.cached_token_owner(token) is None
    assert players.id_for_token(token) == player.id  # read again from the database


def test_a_session_version_is_fresh_for_its_time_and_a_bump_here_is_seen_at_once(
    players: Players, clock: Clock
) -> None:
    player = players.create_anonymous()
    assert players.session_version(player.id) == player.session_version
    assert players.cached_session_version(player.id) == player.session_version
    bumped = players.revoke_sessions(player.id)
    assert players.cached_session_version(player.id) == bumped
    clock.now += Players.SESSION_CACHE_SECONDS + 0.1
    assert players.cached_session_version(player.id) is None


def test_forgetting_a_player_drops_their_token_and_session_at_once(players: Players) -> None:
    player, token = players.create_api_player("dave")
    other, other_token = players.create_api_player("erin")
    players.id_for_token(token)
    players.id_for_token(other_token)
    players.session_version(player.id)
    players.forget(player.id)
    assert players.cached_token_owner(token) is None
    assert players.cached_session_version(player.id) is None
    assert players.cached_token_owner(other_token) == other.id  # nobody else's


def test_a_player_found_once_stays_known_without_the_database(players: Players) -> None:
    player = players.create_anonymous()
    assert players.exists(player.id)
    players.sessions = None  # type: ignore[assignment]  # any database read would fail now
    assert players.exists(player.id)


def test_preferences_saved_here_are_read_back_without_the_database(players: Players) -> None:
    player = players.create_anonymous()
    assert players.cached_prefs(player.id) is None
    players.save_prefs(player.id, "theme=dark")
    assert players.cached_prefs(player.id) == "theme=dark"


def test_while_every_change_is_heard_what_was_read_is_kept_for_minutes(
    players: Players, clock: Clock
) -> None:
    """The broker listens (``feed(True)``): the short lifetimes no longer apply, FED_SECONDS
    does."""
    player, token = players.create_api_player("fern")
    players.feed(True)
    players.id_for_token(token)
    version = players.session_version(player.id)
    clock.now += max(Players.TOKEN_CACHE_SECONDS, Players.SESSION_CACHE_SECONDS) + 0.1
    assert players.cached_token_owner(token) == player.id
    assert players.cached_session_version(player.id) == version
    clock.now += Players.FED_SECONDS
    assert players.cached_token_owner(token) is None
    assert players.cached_session_version(player.id) is None


def test_a_change_heard_forgets_that_player_only(players: Players) -> None:
    player, token = players.create_api_player("gail")
    other, other_token = players.create_api_player("hugh")
    players.feed(True)
    for who, their_token in ((player, token), (other, other_token)):
        players.id_for_token(their_token)
        players.session_version(who.id)
    players.save_prefs(player.id, "dark")
    players.changed([player.id])
    assert players.cached_token_owner(token) is None
    assert players.cached_session_version(player.id) is None
    assert players.cached_prefs(player.id) is None
    assert players.cached_token_owner(other_token) == other.id
    assert players.cached_session_version(other.id) is not None


def test_when_the_changes_stop_or_start_being_heard_everything_is_forgotten(
    players: Players, clock: Clock
) -> None:
    player, token = players.create_api_player("ida")
    players.feed(True)
    players.id_for_token(token)
    players.session_version(player.id)
    players.feed(False)  # the LISTEN connection dropped: changes made from now are not heard
    assert players.cached_token_owner(token) is None
    assert players.cached_session_version(player.id) is None
    players.session_version(player.id)
    clock.now += Players.SESSION_CACHE_SECONDS + 0.1  # the short lifetime again
    assert players.cached_session_version(player.id) is None
    players.session_version(player.id)
    players.feed(True)  # listening again: what changed while away was not heard
    assert players.cached_session_version(player.id) is None


class _ForgetsDuringTheRead:
    """The players' sessions, with a change heard while each read is under way."""

    def __init__(self, players: Players, player_id: str) -> None:
        self.players = players
        self.player_id = player_id
        self.real = players.sessions

    def __call__(self) -> object:
        self.players.changed([self.player_id])
        return self.real()


def test_a_read_under_way_when_a_change_is_heard_is_not_remembered(players: Players) -> None:
    """It may hold what the change replaced: the next request reads again."""
    player, token = players.create_api_player("jon")
    players.feed(True)
    players.sessions = _ForgetsDuringTheRead(players, player.id)  # type: ignore[assignment]
    assert players.session_version(player.id) == player.session_version
    assert players.id_for_token(token) == player.id
    assert players.cached_session_version(player.id) is None
    assert players.cached_token_owner(token) is None


def test_the_token_cache_knows_each_owners_digests_through_evictions_and_clearing() -> None:
    """Forgetting a player looks up their digests, never searches the whole cache: the index
    must follow every way an entry goes."""
    tokens = TokenOwners(2)
    tokens["a"] = ("pat", 1.0)
    tokens["b"] = ("pat", 2.0)
    tokens["c"] = ("quinn", 3.0)  # the least recently used ("a") goes
    assert dict(tokens) == {"b": ("pat", 2.0), "c": ("quinn", 3.0)}
    assert tokens.of == {"pat": {"b"}, "quinn": {"c"}}
    tokens.forget_owner("pat")
    assert dict(tokens) == {"c": ("quinn", 3.0)} and tokens.of == {"quinn": {"c"}}
    tokens.forget_owner("nobody")
    tokens.clear()
    assert not tokens and tokens.of == {}
