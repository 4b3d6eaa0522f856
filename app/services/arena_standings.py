"""An event's standings (contract v3, Competition): lichess's Arena scoring, in Python
(:func:`score`, the rule as written, which the recount uses) and in the database
(:func:`standings_of`, what every read and publication uses: one row per player), and the JSON
that is published.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Select, bindparam, case, func, select
from sqlalchemy.orm import Session

from app.db.models import ArenaGame, ArenaPlayer, Game, Player
from app.engine import Status


@dataclass(frozen=True)
class ArenaStanding:
    rank: int
    player: str
    points: int
    wins: int
    games: int  # finished games
    active_ms: int
    streak: int  # wins in a row now (a win on a streak of 2+ scores double)


def score(results: list[str]) -> tuple[int, int, int]:
    """(points, wins, current streak) of a player's games in the order they were dealt."""
    points = wins = streak = 0
    for status in results:
        if status == Status.WON:
            points += 4 if streak >= 2 else 2
            wins += 1
            streak += 1
        elif status == Status.LOST:
            streak = 0
    return points, wins, streak


def standings_of(db: Session, arena_id: int) -> list[ArenaStanding]:
    """The table, from every game of the event: scored by the database, ranked here.

    The database sums each player's games (:data:`_SCORED`), so that a publication reads
    one row per player, not one per game: read and scored in Python, an event of 500
    players was thousands of rows each half second in each worker, CPU that took the GIL
    from the moves on the event loop (bench/RESULTS.md, Events). Ranked here, not by an
    ORDER BY, so that names tie-break as Python compares them whatever the database's
    collation."""
    joined = db.execute(
        select(Player.id, Player.name)
        .join(ArenaPlayer, ArenaPlayer.player_id == Player.id)
        .where(ArenaPlayer.arena_id == arena_id)
    ).all()
    names = dict(joined)
    totals: dict[str, tuple[int, int, int, int, int]] = dict.fromkeys(names, (0, 0, 0, 0, 0))
    for pid, name, finished, active, points, wins, streak in db.execute(
        _SCORED, {"arena_id": arena_id}
    ):
        names.setdefault(pid, name)  # not among the joined: leaving keeps the points made
        totals[pid] = (
            int(points or 0), int(wins or 0), int(active or 0), int(finished or 0),
            int(streak or 0),
        )  # fmt: skip
    table = [
        (points, wins, active, names[pid], finished, streak)
        for pid, (points, wins, active, finished, streak) in totals.items()
    ]
    table.sort(key=lambda t: (-t[0], -t[1], t[2], t[3]))
    return [
        ArenaStanding(i, name, points, wins, finished, act, streak)
        for i, (points, wins, act, name, finished, streak) in enumerate(table, 1)
    ]


def _scored() -> Select[Any]:
    """Per player who has games in the event (``arena_id``, bound): name, finished games,
    their active time, and :func:`score`'s points, wins and current streak, computed by window
    functions (SQLite 3.25+ and PostgreSQL alike).

    A player's games in ``seq`` order fall into runs, each run's games dealt after the same
    number of losses (``run``: losses so far, this game included). A won game is the k-th win
    of its run, so k - 1 wins came right before it (games in play break no run): it scores 4
    when k >= 3, else 2. The current streak is the wins of the last run (``run`` = all the
    player's losses). tests/services/test_arenas.py checks it against :func:`score`."""
    lost = case((Game.status == Status.LOST, 1), else_=0)
    by_player = ArenaGame.player_id
    games = (
        select(
            by_player.label("pid"),
            ArenaGame.seq.label("seq"),
            Game.status.label("status"),
            func.coalesce(Game.duration_ms, Game.active_ms).label("ms"),
            func.sum(lost).over(partition_by=by_player, order_by=ArenaGame.seq).label("run"),
            func.sum(lost).over(partition_by=by_player).label("losses"),
        )
        .join(Game, Game.id == ArenaGame.game_id)
        .where(ArenaGame.arena_id == bindparam("arena_id"))
        .subquery()
    )
    won = (
        select(
            games.c.pid,
            (games.c.run == games.c.losses).label("last_run"),
            func.row_number()
            .over(partition_by=(games.c.pid, games.c.run), order_by=games.c.seq)
            .label("k"),
        )
        .where(games.c.status == Status.WON)
        .subquery()
    )
    wins = (
        select(
            won.c.pid,
            func.sum(case((won.c.k >= 3, 4), else_=2)).label("points"),
            func.count().label("wins"),
            func.sum(case((won.c.last_run, 1), else_=0)).label("streak"),
        )
        .group_by(won.c.pid)
        .subquery()
    )
    ended = games.c.status != Status.PLAYING
    played = (
        select(
            games.c.pid,
            func.sum(case((ended, 1), else_=0)).label("finished"),
            func.sum(case((ended, games.c.ms), else_=0)).label("active"),
        )
        .group_by(games.c.pid)
        .subquery()
    )
    return (
        select(
            played.c.pid,
            Player.name,
            played.c.finished,
            played.c.active,
            wins.c.points,
            wins.c.wins,
            wins.c.streak,
        )
        .join(Player, Player.id == played.c.pid)
        .outerjoin(wins, wins.c.pid == played.c.pid)
    )


# Built once: each publication only binds its event.
_SCORED = _scored()


def standings_json(arena_id: int, standings: list[ArenaStanding]) -> str:
    # vars, not asdict: the same fields in their order, without asdict's deep copy of each.
    return json.dumps(
        {"event": arena_id, "standings": [vars(s) for s in standings]}, separators=(",", ":")
    )
