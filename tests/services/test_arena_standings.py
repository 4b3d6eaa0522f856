"""An event's standings (app/services/arena_standings.py): the Arena scoring rule as written,
the table the database scores (who is listed, how ties break), and its published JSON. On
SQLite with made-up games; tests/services/test_arenas.py checks the database's scoring against
the rule on random runs, on both databases."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from sqlalchemy import insert
from sqlalchemy.orm import Session

from app.db.models import Arena, ArenaGame, ArenaPlayer, Game
from app.engine import Status
from app.services.arena_standings import ArenaStanding, score, standings_json, standings_of
from tests.services.svc1_support import Db, open_db

W, L, P = Status.WON, Status.LOST, Status.PLAYING
AT = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def sqlite(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Db]:
    yield from open_db(tmp_path_factory, "arena_standings")


@pytest.fixture()
def svc(sqlite: Db) -> Db:
    sqlite.empty()
    return sqlite


# -- the rule --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("results", "expected"),
    [
        ([], (0, 0, 0)),
        ([W], (2, 1, 1)),
        ([W, W], (4, 2, 2)),
        ([W, W, W], (8, 3, 3)),  # the third win in a row scores double
        ([W, W, W, W], (12, 4, 4)),
        ([W, W, L, W], (6, 3, 1)),  # a loss ends the streak
        ([W, W, W, L, W, W, W], (16, 6, 3)),
        ([W, P, W, W], (8, 3, 3)),  # a game in play breaks no run
        ([L, L, P], (0, 0, 0)),
        ([W, W, L], (4, 2, 0)),
    ],
)
def test_wins_score_two_and_four_on_a_streak(
    results: list[str], expected: tuple[int, int, int]
) -> None:
    assert score(results) == expected


# -- the table -------------------------------------------------------------------------------------


def arena(db: Session) -> int:
    return int(
        db.execute(
            insert(Arena)
            .values(game="corners", starts_at=AT, ends_at=AT, created_at=AT)
            .returning(Arena.id)
        ).scalar_one()
    )


def join(db: Session, event: int, player: str) -> None:
    db.execute(insert(ArenaPlayer).values(arena_id=event, player_id=player, joined_at=AT))


def played(db: Session, event: int, player: str, results: list[tuple[str, int]]) -> None:
    """The player's games of the event, in the order dealt: (status, active ms)."""
    for seq, (status, ms) in enumerate(results, 1):
        game_id = f"{player[:20]}{event}x{seq}"
        ended = status != Status.PLAYING
        db.execute(
            insert(Game).values(
                id=game_id, player_id=player, game="corners", deal=seq, rules="1", state="",
                status=status, created_at=AT, updated_at=AT, active_ms=ms,
                duration_ms=ms if ended else None, competition="event",
            )
        )  # fmt: skip
        db.execute(
            insert(ArenaGame).values(game_id=game_id, arena_id=event, player_id=player, seq=seq)
        )


def test_the_table_ranks_by_points_then_wins_then_less_active_time_then_name(svc: Db) -> None:
    names = ["Zed", "alice", "Bea", "Cid", "Dan"]
    ids = {name: svc.player(name) for name in names}
    with svc.sessions.begin() as db:
        event = arena(db)
        for name in names:
            join(db, event, ids[name])
        played(db, event, ids["Zed"], [(W, 3000)])  # 2 points, 3 s
        played(db, event, ids["alice"], [(W, 3000)])  # the same: by name, as Python orders
        played(db, event, ids["Bea"], [(W, 1000), (L, 500)])  # 2 points, 1.5 s
        played(db, event, ids["Cid"], [(L, 100), (W, 9000), (W, 9000)])  # 4 points
        played(db, event, ids["Dan"], [(L, 100), (P, 50)])  # nothing won
    with svc.sessions() as db:
        table = standings_of(db, event)
    assert [(s.rank, s.player) for s in table] == [
        (1, "Cid"), (2, "Bea"), (3, "Zed"), (4, "alice"), (5, "Dan")
    ]  # fmt: skip
    assert table[0] == ArenaStanding(1, "Cid", 4, 2, 3, 18_100, 2)
    assert table[1] == ArenaStanding(2, "Bea", 2, 1, 2, 1_500, 0)
    # A game in play counts neither as finished nor in the active time.
    assert table[4] == ArenaStanding(5, "Dan", 0, 0, 1, 100, 0)


def test_players_who_joined_without_a_game_and_who_left_are_listed(svc: Db) -> None:
    waiting, gone, outsider = svc.player("Waiting"), svc.player("Gone"), svc.player("Outsider")
    with svc.sessions.begin() as db:
        event, other = arena(db), arena(db)
        join(db, event, waiting)
        played(db, event, gone, [(W, 2000)])  # left the event (no longer a member): keeps it
        join(db, other, outsider)
        played(db, other, outsider, [(W, 10), (W, 10), (W, 10)])  # another event's games
    with svc.sessions() as db:
        table = standings_of(db, event)
        empty = standings_of(db, arena(db))
    assert table == [
        ArenaStanding(1, "Gone", 2, 1, 1, 2000, 1),
        ArenaStanding(2, "Waiting", 0, 0, 0, 0, 0),
    ]
    assert empty == []


def test_the_published_json_is_the_table_compactly() -> None:
    table = [ArenaStanding(1, "Cid", 4, 2, 3, 18_100, 2)]
    text = standings_json(7, table)
    assert " " not in text
    assert json.loads(text) == {
        "event": 7,
        "standings": [
            {
                "rank": 1, "player": "Cid", "points": 4, "wins": 2, "games": 3,
                "active_ms": 18_100, "streak": 2,
            }
        ],
    }  # fmt: skip
    assert list(json.loads(text)["standings"][0]) == [
        "rank", "player", "points", "wins", "games", "active_ms", "streak"
    ]  # fmt: skip
