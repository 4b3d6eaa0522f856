"""Race ratings (app/services/ratings.py): the places a rated race counts, forfeits, the
openskill update, and the ratings, changes and leaderboard it stores."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import insert, select, update
from sqlalchemy.orm import Session, sessionmaker

from app.db.game_rows import GAME, GameRow
from app.db.models import Player, Race, RaceRating, RatingChange, Room
from app.engine import DEVELOPMENT_KEY, RULES_VERSION, dumps, get_ruleset
from app.services.players import create_player
from app.services.ratings import (
    START_MU,
    START_SIGMA,
    Finisher,
    board,
    finishers,
    forfeited,
    places,
    rate,
    rate_race,
    ratings_of,
    shown,
)
from tests.migrated import sqlite_sessions

START = datetime(2026, 11, 23, 20, 0, tzinfo=UTC)


def at(seconds: float) -> datetime:
    return START + timedelta(seconds=seconds)


def finisher(pid: str, status: str, seconds: float | None = None, cards: int = 0,
             moves: int = 10, *, forfeit: bool = False) -> Finisher:  # fmt: skip
    return Finisher(pid, status, None if seconds is None else at(seconds), cards, moves, forfeit)


def test_shown_rating_is_mu_less_three_sigma() -> None:
    assert shown(25.0, 25 / 3) == pytest.approx(0.0)
    assert shown(30.0, 2.0) == 24.0


def test_places_winners_by_time_then_cards_then_moves() -> None:
    racers = [
        finisher("stuck-more-moves", "lost", cards=20, moves=30),
        finisher("slow-winner", "won", 300),
        finisher("stuck-few-cards", "lost", cards=5),
        finisher("fast-winner", "won", 200),
        finisher("stuck-fewer-moves", "lost", cards=20, moves=25),
    ]
    assert places(racers) == [4, 2, 5, 1, 3]  # in the racers' own order


def test_equal_results_share_a_place_and_forfeits_share_the_last() -> None:
    racers = [
        finisher("a", "lost", cards=10),
        finisher("b", "lost", cards=10),
        finisher("c", "lost", cards=3),
        finisher("d", "lost", cards=40, forfeit=True),  # more cards, but resigned
        finisher("e", "won", 100, forfeit=True),
    ]
    assert places(racers) == [1, 1, 3, 4, 4]


def test_rate_moves_the_winner_up_and_the_loser_down() -> None:
    racers = [finisher("loser", "lost", cards=1), finisher("winner", "won", 100)]
    after = rate({}, racers)  # newcomers start from the model's mu and sigma
    assert after["winner"][0] > START_MU > after["loser"][0]
    assert after["winner"][1] < START_SIGMA and after["loser"][1] < START_SIGMA
    assert rate({}, racers) == after  # no chance in it
    # The stored ratings count: a settled rating (small sigma) moves less than a newcomer's.
    settled = rate({"loser": (START_MU, 2.0)}, racers)
    assert 0 < START_MU - settled["loser"][0] < START_MU - after["loser"][0]


def test_forfeited_is_lost_with_legal_moves_left() -> None:
    rules = get_ruleset("corners")
    dealt = dumps(rules.deal(1, DEVELOPMENT_KEY))
    assert rules.legal_moves(rules.deal(1, DEVELOPMENT_KEY))
    assert forfeited("corners", "lost", dealt)
    assert not forfeited("corners", "playing", dealt)
    assert not forfeited("corners", "won", dealt)


# -- stored ratings ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def sessions(tmp_path_factory: pytest.TempPathFactory) -> Iterator[sessionmaker[Session]]:
    with sqlite_sessions(tmp_path_factory, "ratings") as sessions:
        yield sessions


def race_games(sessions: sessionmaker[Session], race_id: int,
               results: dict[str, tuple[str, int]]) -> dict[str, str]:  # fmt: skip
    """A rated race of deal ``race_id``, and each named player's game of it: (status, moves),
    its state as dealt. The players' ids by name."""
    rules = get_ruleset("corners")
    state = dumps(rules.deal(race_id, DEVELOPMENT_KEY))
    ids = {}
    with sessions.begin() as db:
        for name in results:
            pid = db.scalar(select(Player.id).where(Player.name == name))
            ids[name] = pid if pid is not None else create_player(db, name)[0].id
        code = f"ROOM{race_id:02d}"
        db.add(Room(code=code, game="corners", created_by=ids[name], status="open",
                    created_at=START, active_at=START, rated=True))  # fmt: skip
        db.flush()
        db.add(Race(id=race_id, room_code=code, number=1, game="corners", deal=race_id,
                    starts_at=START, status="finished", finished_at=at(race_id),
                    rated=True))  # fmt: skip
        for name, (status, moves) in results.items():
            pid = ids[name]
            row = GameRow.dealt(
                f"race{race_id}-{name}", pid, "corners", race_id, state, status, START,
                rules=RULES_VERSION, rated=False, race_id=race_id,
            )  # fmt: skip
            row.moves, row.finished_at = moves, at(race_id)
            db.execute(insert(GAME).values(**vars(row)))
    return ids


def test_finishers_read_the_stored_games_with_rows_being_written_in_their_place(
    sessions: sessionmaker[Session],
) -> None:
    ids = race_games(sessions, 1, {"fin-a": ("won", 40), "fin-b": ("playing", 7)})
    with sessions() as db:
        stored = finishers(db, 1)
        assert {(f.player_id, f.status, f.moves, f.forfeit) for f in stored} == {
            (ids["fin-a"], "won", 40, False),
            (ids["fin-b"], "playing", 7, False),
        }
        rules = get_ruleset("corners")
        dealt = rules.deal(1, DEVELOPMENT_KEY)
        assert {f.foundation_cards for f in stored} == {rules.on_foundations(dealt)}
        writing = GameRow.dealt(
            "race1-fin-b", ids["fin-b"], "corners", 1, dumps(dealt), "lost", START,
            rules=RULES_VERSION, rated=False, race_id=1,
        )  # fmt: skip
        writing.moves = 8
        now = {f.player_id: f for f in finishers(db, 1, [writing])}
    assert (now[ids["fin-b"]].status, now[ids["fin-b"]].moves) == ("lost", 8)
    assert now[ids["fin-b"]].forfeit  # resigned with legal moves left


def test_rate_race_stores_ratings_and_each_change(sessions: sessionmaker[Session]) -> None:
    ids = race_games(sessions, 2, {"rr-win": ("won", 50), "rr-lose": ("playing", 9)})
    with sessions.begin() as db:
        rate_race(db, 2, "corners", at(60))
    with sessions() as db:
        mine = ratings_of(db, ids["rr-win"])["corners"]
        theirs = ratings_of(db, ids["rr-lose"])["corners"]
        changes = {
            c.player_id: c
            for c in db.scalars(select(RatingChange).where(RatingChange.race_id == 2))
        }
    assert mine.races == theirs.races == 1 and mine.rating > theirs.rating
    assert mine.rating == pytest.approx(shown(mine.mu, mine.sigma))
    win = changes[ids["rr-win"]]
    assert (win.place, win.forfeit, win.mu_before, win.sigma_before) == (
        1,
        False,
        START_MU,
        START_SIGMA,
    )
    assert (win.mu_after, win.sigma_after) == (mine.mu, mine.sigma)
    # A second race starts from the stored ratings and counts one more.
    race_games(sessions, 3, {"rr-win": ("won", 50), "rr-lose": ("playing", 9)})
    with sessions.begin() as db:
        rate_race(db, 3, "corners", at(120))
    with sessions() as db:
        again = ratings_of(db, ids["rr-win"])["corners"]
        change = db.get(RatingChange, (3, ids["rr-win"]))
    assert again.races == 2 and again.mu > mine.mu
    assert change is not None and change.mu_before == mine.mu


def test_a_race_of_one_is_not_rated(sessions: sessionmaker[Session]) -> None:
    ids = race_games(sessions, 4, {"alone": ("won", 50)})
    with sessions.begin() as db:
        rate_race(db, 4, "corners", at(60))
    with sessions() as db:
        assert ratings_of(db, ids["alone"]) == {}


def test_the_board_ranks_by_rating_without_banned_players(sessions: sessionmaker[Session]) -> None:
    ids = race_games(
        sessions, 5, {"b-top": ("won", 50), "b-mid": ("won", 60), "b-low": ("playing", 9)}
    )
    with sessions.begin() as db:
        db.execute(update(RaceRating).values(rating=0.0))  # the others' ratings: out of the way
        rate_race(db, 5, "corners", at(10))
    with sessions() as db:
        rows = [r for r in board(db, "corners") if r.player.startswith("b-")]
        assert [(r.player, r.races) for r in rows] == [("b-top", 1), ("b-mid", 1), ("b-low", 1)]
        assert [r.rank for r in board(db, "corners")][:3] == [1, 2, 3]
        assert len(board(db, "corners", limit=2)) == 2
        assert board(db, "quadrangle") == []
    with sessions.begin() as db:
        db.execute(update(Player).where(Player.id == ids["b-top"]).values(banned_at=START))
    with sessions() as db:
        assert "b-top" not in [r.player for r in board(db, "corners")]
