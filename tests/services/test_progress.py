"""What a player's games add up to (app/services/progress.py): runs of wins, each game kind's
finished rated games oldest first, and the mean of the player's other wins."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import insert

from app.db.game_rows import GAME, GameRow
from app.db.session import make_engine, make_sessionmaker
from app.engine import RULES_VERSION
from app.services import progress as progress_module
from app.services.players import create_player
from app.services.progress import GameHistory, OwnAverage, Progress
from tests.migrated import migrated_sqlite

START = datetime(2026, 11, 1, tzinfo=UTC)


@pytest.mark.parametrize(
    ("won", "streaks"),
    [
        ((), ()),
        ((False, False), ()),
        ((True,), (1,)),
        ((True, True, False, True, False, False, True, True, True), (2, 1, 3)),
    ],
)
def test_streaks_are_the_runs_of_wins_in_order(
    won: tuple[bool, ...], streaks: tuple[int, ...]
) -> None:
    assert GameHistory("corners", won, ()).streaks == streaks


@pytest.fixture(scope="module")
def progress(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Progress, str, str]]:
    """Ann's games, oldest first: corners won (30 moves), lost, won (50), one in play and a
    casual win; quadrangle lost. Bob won a corners game too."""
    url = migrated_sqlite(tmp_path_factory, "progress")
    engine = make_engine(url)
    sessions = make_sessionmaker(engine)
    with sessions.begin() as db:
        ann, bob = create_player(db, "ann")[0].id, create_player(db, "bob")[0].id
        games = [
            (ann, "corners", "won", 30, True, 60_000),
            (ann, "quadrangle", "lost", 12, True, None),
            (ann, "corners", "lost", 9, True, None),
            (ann, "corners", "won", 50, True, 120_000),
            (ann, "corners", "playing", 4, True, None),
            (ann, "corners", "won", 10, False, 30_000),
            (bob, "corners", "won", 99, True, 1_000),
        ]
        for n, (owner, slug, status, moves, rated, duration) in enumerate(games):
            stamp = START + timedelta(minutes=n)
            row = GameRow.dealt(f"game-{n}", owner, slug, n + 1, "{}", status, stamp,
                                rules=RULES_VERSION, rated=rated)  # fmt: skip
            row.moves, row.duration_ms = moves, duration
            db.execute(insert(GAME).values(**vars(row)))
    yield Progress(sessions), ann, bob
    engine.dispose()


def test_histories_per_game_of_finished_rated_games_oldest_first(
    progress: tuple[Progress, str, str],
) -> None:
    service, _, _ = progress
    assert service.histories("ANN") == [
        GameHistory("corners", (True, False, True), (30, 50)),
        GameHistory("quadrangle", (False,), ()),
    ]
    assert service.histories("bob") == [GameHistory("corners", (True,), (99,))]
    assert service.histories("nobody") == []


def test_own_average_is_of_the_players_other_wins(progress: tuple[Progress, str, str]) -> None:
    service, ann, bob = progress
    # Ann's corners wins: game-0 (30 moves, 60 s), game-3 (50, 120 s), game-5 (10, 30 s).
    assert service.own_average(ann, "corners", besides="game-3") == OwnAverage(2, 20.0, 45_000.0)
    assert service.own_average(ann, "corners", besides="none") == OwnAverage(3, 30.0, 70_000.0)
    assert service.own_average(bob, "corners", besides="game-6") == OwnAverage(0, None, None)
    assert service.own_average(ann, "quadrangle", besides="x") == OwnAverage(0, None, None)


def test_a_history_holds_the_newest_games_only(
    progress: tuple[Progress, str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    service, _, _ = progress
    monkeypatch.setattr(progress_module, "HISTORY_LIMIT", 2)
    assert service.histories("ann")[0] == GameHistory("corners", (False, True), (50,))
