"""Finished games shown whole (app/services/replay_views.py): a replay at any step, the
solver's winning line, an analysis's moves, and who may see them (the owner, players who have
finished the deal) while nothing seals the deal."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, date, datetime

import pytest
from sqlalchemy.orm import Session, sessionmaker

from app.db.models import DealVerdict
from app.db.move_store import MoveStore
from app.engine import DEVELOPMENT_KEY, Move, get_ruleset
from app.services.daily import daily_deal
from app.services.errors import DealNotFinished, DealSealed, GameInPlay, NotFound, SameDealInPlay
from app.services.games import Games
from app.services.players import create_player
from app.services.seal import Sealer
from tests.migrated import empty_tables, sqlite_sessions

TODAY = date(2026, 11, 23)
SLUG, DEAL = "corners", 5


@pytest.fixture(scope="module")
def sessions(tmp_path_factory: pytest.TempPathFactory) -> Iterator[sessionmaker[Session]]:
    with sqlite_sessions(tmp_path_factory, "replays") as sessions:
        yield sessions


@pytest.fixture()
def games(sessions: sessionmaker[Session]) -> Iterator[Games]:
    empty_tables(sessions)
    store = MoveStore.open(sessions.kw["bind"])
    sealer = Sealer(DEVELOPMENT_KEY, today=lambda: TODAY,
                    clock=lambda: datetime(2026, 11, 23, 12, tzinfo=UTC))  # fmt: skip
    yield Games(sessions, DEVELOPMENT_KEY, store=store, sealer=sealer)
    store.close()


def player(games: Games, name: str) -> str:
    with games.sessions.begin() as db:
        return create_player(db, name)[0].id


def played(games: Games, owner: str, moves: int = 3, *, deal: int = DEAL, end: bool = True) -> str:
    """A casual game of ``deal`` with its first legal move played ``moves`` times, resigned."""
    game_id = games.start(owner, SLUG, deal).record.id
    for _ in range(moves):
        view = games.get(game_id, owner)
        games.move(game_id, owner, view.legal_moves[0], view.record.version)
    if end:
        games.resign(game_id, owner)
    return game_id


def test_a_replay_at_each_step_is_the_deal_with_that_many_moves(games: Games) -> None:
    ann = player(games, "ann")
    game_id = played(games, ann)
    whole = games.replay_view(game_id, None, ann)
    assert whole.step == 3 and len(whole.moves) == 3
    rules = get_ruleset(SLUG)
    start = rules.deal(DEAL, DEVELOPMENT_KEY)
    assert whole.start == start
    for step in (0, 1, 3):
        at = games.replay_view(game_id, step, ann)
        assert at.step == step and at.view.log == whole.moves
        assert at.view.state == rules.replay(start, [Move.parse(m) for m in whole.moves[:step]])
    assert games.replay_view(game_id, -4, ann).step == 0  # clamped to the log
    assert games.replay_view(game_id, 99, ann).step == 3


def test_the_stored_state_agrees_with_its_move_log(games: Games) -> None:
    ann = player(games, "ann")
    game_id = played(games, ann, end=False)
    stored, rebuilt = games.replay(game_id)
    assert stored == rebuilt


def test_a_replay_is_for_the_owner_and_players_who_finished_the_deal(games: Games) -> None:
    ann, bob, cyd, eve = (player(games, n) for n in ("ann", "bob", "cyd", "eve"))
    game_id = played(games, ann)
    with pytest.raises(DealNotFinished):
        games.replay_view(game_id, None, bob)  # never played it: could copy a win
    with pytest.raises(DealNotFinished):
        games.replay_view(game_id, None, None)
    played(games, cyd, 1, end=False)
    with pytest.raises(SameDealInPlay):
        games.replay_view(game_id, None, cyd)  # would show cyd's own hidden cards
    played(games, eve, 1)
    assert (
        games.replay_view(game_id, None, eve).moves == games.replay_view(game_id, None, ann).moves
    )
    assert games.analysis_source(game_id, eve) == (
        SLUG,
        DEAL,
        games.replay_view(game_id, None, ann).moves,
    )


def test_a_game_in_play_has_no_replay_and_no_unknown_game_either(games: Games) -> None:
    ann = player(games, "ann")
    game_id = played(games, ann, 1, end=False)
    with pytest.raises(GameInPlay):
        games.replay_view(game_id, None, ann)
    with pytest.raises(GameInPlay):
        games.analysis_source(game_id, ann)
    with pytest.raises(NotFound):
        games.replay_view("no-such-game", None, ann)


def test_a_sealed_deal_shows_no_replay_even_to_its_owner(games: Games) -> None:
    ann = player(games, "ann")
    daily = daily_deal(SLUG, TODAY, DEVELOPMENT_KEY)
    game_id = played(games, ann, 1, deal=daily)
    with pytest.raises(DealSealed):
        games.replay_view(game_id, None, ann)
    with pytest.raises(DealSealed):
        games.solution_view(game_id, None, ann)


def test_the_solvers_line_is_shown_as_a_replay_once_stored(games: Games) -> None:
    ann = player(games, "ann")
    game_id = played(games, ann)
    with pytest.raises(NotFound):
        games.solution_view(game_id, None, ann)
    rules = get_ruleset(SLUG)
    start = rules.deal(DEAL, DEVELOPMENT_KEY)
    line = [str(m) for m in rules.legal_moves(start)[:1]]  # stands in for a found line
    with games.sessions.begin() as db:
        db.add(DealVerdict(game=SLUG, deal=DEAL, outcome="winnable", solution=" ".join(line),
                           positions=1, certified=False, created_at=datetime.now(UTC)))  # fmt: skip
    shown = games.solution_view(game_id, 0, ann)
    assert (shown.moves, shown.step, shown.start) == (line, 0, start)
    assert shown.view.state == start and shown.view.deal_winnable is True
    assert games.solution_view(game_id, None, ann).view.state == rules.apply(
        start, Move.parse(line[0])
    )
    with pytest.raises(DealNotFinished):
        games.solution_view(game_id, None, player(games, "bob"))
