"""rated games, and every statistic recounted under the fair-play rules (contract v2)

Adds ``game.rated`` and an index on a player's games of one deal, then recounts every counter
table from the games themselves:

- v2 (upgrade): only rated games count toward players' records (played from the moment the
  game was dealt, by the UTC day it was dealt); a deal's counts and records take each player's
  first finished game of the deal only, rated or casual.
- v1 (downgrade): every game counts from its first move, by the day of its first move; a deal
  counts every game played.

**Which existing games are rated.** The database never recorded whether the server drew a
game's deal, so it is decided from the deal number: a game is rated when its number is above
2^32, it is the first game of that deal on this server, and the number is not the deal of the day
(v1's unkeyed daily hash) of the UTC day it was started or the day before. The server draws
uniformly from 1..2^53-1, so a drawn number is above 2^32 but for a chance of 1 in 2 million,
while people type, share and link much smaller numbers; later games of a drawn number came from
a shared link, and the daily deal is a chosen number. A mistaken "casual" only leaves a game out
of a record; a mistaken "rated" is a link game of a drawn deal whose first game was deleted,
which cannot happen here.

The recount replays every game's start and end in time order, so streaks come out as the live
counters would have kept them. It is frozen code on purpose (no import from ``app``).

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-23 19:00:00.000000
"""

import hashlib
import math
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

DRAWN_ABOVE = 2**32
MAX_DEAL = 2**53 - 1
ALL = "all"
Z_95 = 1.959963984540054

_GAME = sa.table(
    "game",
    sa.column("id", sa.String),
    sa.column("player_id", sa.String),
    sa.column("game", sa.String),
    sa.column("deal", sa.BigInteger),
    sa.column("status", sa.String),
    sa.column("moves", sa.Integer),
    sa.column("duration_ms", sa.BigInteger),
    sa.column("rated", sa.Boolean),
    sa.column("created_at", sa.DateTime(timezone=True)),
    sa.column("first_move_at", sa.DateTime(timezone=True)),
    sa.column("finished_at", sa.DateTime(timezone=True)),
)
_PLAYER_STATS = sa.table(
    "player_stats",
    *(sa.column(n) for n in ("player_id", "game", "played", "won", "wilson", "best_ms")),
    *(sa.column(n) for n in ("fewest_moves", "current_streak", "longest_streak")),
    sa.column("last_played_at", sa.DateTime(timezone=True)),
)
_DAILY = sa.table("daily_stats", *(sa.column(n) for n in ("player_id", "game", "played", "won")),
                  sa.column("day", sa.Date))  # fmt: skip
_GAME_DAILY = sa.table("game_daily_stats", *(sa.column(n) for n in ("game", "played", "won")),
                       sa.column("day", sa.Date))  # fmt: skip
_DEAL = sa.table(
    "deal_stats",
    *(sa.column(n) for n in ("game", "deal", "played", "won", "fewest_moves", "fewest_game_id")),
    *(sa.column(n) for n in ("fastest_ms", "fastest_game_id")),
)


def upgrade() -> None:
    # Not batch mode: rebuilding ``game`` on SQLite would trip the foreign keys that point at
    # it, and both databases add a column with a constant default in place.
    op.add_column(
        "game", sa.Column("rated", sa.Boolean(), server_default=sa.false(), nullable=False)
    )
    op.create_index("ix_game_player_deal", "game", ["player_id", "game", "deal"], unique=False)
    bind = op.get_bind()
    games = _games(bind)
    rated = _drawn_games(games)
    for chunk in _chunks(sorted(rated)):
        bind.execute(sa.update(_GAME).where(_GAME.c.id.in_(chunk)).values(rated=True))
    for g in games:
        g.rated = g.id in rated
    _write(bind, _count(games, fair=True))


def downgrade() -> None:
    bind = op.get_bind()
    games = _games(bind)
    op.drop_index("ix_game_player_deal", table_name="game")
    # As in upgrade(): SQLite (3.35+) drops a plain column in place.
    op.execute("ALTER TABLE game DROP COLUMN rated")
    _write(bind, _count(games, fair=False))


# -- reading the games --------------------------------------------------------------------


@dataclass
class _G:
    id: str
    player_id: str
    game: str
    deal: int
    status: str
    moves: int
    duration_ms: int | None
    rated: bool
    created_at: datetime
    first_move_at: datetime | None
    finished_at: datetime | None


def _utc(value: datetime | None) -> datetime | None:
    if value is None:
        return None
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def _games(bind: Any) -> list[_G]:
    rows = bind.execute(sa.select(_GAME)).mappings().all()
    out = []
    for r in rows:
        values = dict(r)
        for name in ("created_at", "first_move_at", "finished_at"):
            values[name] = _utc(values[name])
        values["rated"] = bool(values["rated"])
        out.append(_G(**values))
    return out


def _v1_daily(slug: str, day: date) -> int:
    digest = hashlib.sha256(f"daily|{slug}|{day.isoformat()}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % MAX_DEAL + 1


def _drawn_games(games: list[_G]) -> set[str]:
    """The ids of the games whose deal the server drew (see the module's docstring)."""
    first: dict[tuple[str, int], _G] = {}
    for g in sorted(games, key=lambda g: (g.created_at, g.id)):
        first.setdefault((g.game, g.deal), g)
    drawn = set()
    for g in first.values():
        day = g.created_at.date()
        daily = {_v1_daily(g.game, day), _v1_daily(g.game, day - timedelta(days=1))}
        if g.deal > DRAWN_ABOVE and g.deal not in daily:
            drawn.add(g.id)
    return drawn


def _chunks(ids: list[str], size: int = 500) -> Iterator[list[str]]:
    for i in range(0, len(ids), size):
        yield ids[i : i + size]


# -- counting -----------------------------------------------------------------------------


def _wilson(won: int, played: int) -> float:
    if played <= 0 or won <= 0:
        return 0.0
    p, z2 = won / played, Z_95 * Z_95
    centre = p + z2 / (2 * played)
    margin = Z_95 * math.sqrt(p * (1 - p) / played + z2 / (4 * played * played))
    return max(0.0, (centre - margin) / (1 + z2 / played))


@dataclass
class _Record:
    played: int = 0
    won: int = 0
    best_ms: int | None = None
    fewest_moves: int | None = None
    current_streak: int = 0
    longest_streak: int = 0
    last_played_at: datetime | None = None


@dataclass
class _Deal:
    played: int = 0
    won: int = 0
    fewest: _G | None = None
    fastest: _G | None = None


@dataclass
class _Counts:
    players: dict[tuple[str, str], _Record] = field(default_factory=lambda: defaultdict(_Record))
    daily: dict[tuple[str, str, date], list[int]] = field(
        default_factory=lambda: defaultdict(lambda: [0, 0])
    )
    game_daily: dict[tuple[str, date], list[int]] = field(
        default_factory=lambda: defaultdict(lambda: [0, 0])
    )
    deals: dict[tuple[str, int], _Deal] = field(default_factory=lambda: defaultdict(_Deal))


def _count(games: list[_G], *, fair: bool) -> _Counts:
    """Every counter as the live service keeps it: v2 rules when ``fair``, else v1's."""
    counts = _Counts()

    def start_of(g: _G) -> datetime | None:
        if fair:
            return g.created_at if g.rated else None
        return g.first_move_at

    # Events in time order: a game starts counting, then (maybe) ends.
    events: list[tuple[datetime, int, str, _G]] = []
    for g in games:
        start = start_of(g)
        if start is None:
            continue
        events.append((start, 0, g.id, g))
        if g.finished_at is not None:
            events.append((max(g.finished_at, start), 1, g.id, g))
    events.sort(key=lambda e: (e[0], e[1], e[2]))
    latest: dict[tuple[str, str], _G] = {}  # the latest game started, per player and kind
    finished: set[str] = set()
    for stamp, kind, _, g in events:
        keys = (g.game, ALL)
        day = start_of(g)
        assert day is not None
        if kind == 0:
            for key in keys:
                rec = counts.players[(g.player_id, key)]
                rec.played += 1
                rec.last_played_at = stamp
                before = latest.get((g.player_id, key))
                if before is not None and before.id not in finished:
                    rec.current_streak = 0
                latest[(g.player_id, key)] = g
                counts.daily[(g.player_id, key, day.date())][0] += 1
            counts.game_daily[(g.game, day.date())][0] += 1
            continue
        finished.add(g.id)
        for key in keys:
            rec = counts.players[(g.player_id, key)]
            if g.status != "won":
                rec.current_streak = 0
                continue
            rec.won += 1
            rec.current_streak += 1
            rec.longest_streak = max(rec.longest_streak, rec.current_streak)
            rec.last_played_at = stamp
            rec.best_ms = _least(rec.best_ms, g.duration_ms)
            rec.fewest_moves = _least(rec.fewest_moves, g.moves)
            counts.daily[(g.player_id, key, day.date())][1] += 1
        if g.status == "won":
            counts.game_daily[(g.game, day.date())][1] += 1

    for g in _deal_games(games, fair=fair):
        deal = counts.deals[(g.game, g.deal)]
        deal.played += 1
        if g.status != "won":
            continue
        deal.won += 1
        if deal.fewest is None or g.moves < deal.fewest.moves:
            deal.fewest = g
        ms = g.duration_ms
        if ms is not None and (deal.fastest is None or ms < (deal.fastest.duration_ms or 0)):
            deal.fastest = g
    return counts


def _least(current: int | None, candidate: int | None) -> int | None:
    if candidate is None:
        return current
    return candidate if current is None else min(current, candidate)


def _deal_games(games: list[_G], *, fair: bool) -> list[_G]:
    """The games a deal's counts take, in the order they were decided (records go to the first
    game that reached them)."""
    if not fair:
        chosen = [g for g in games if g.first_move_at is not None]
        return sorted(chosen, key=lambda g: (g.finished_at is None, g.finished_at or g.created_at,
                                             g.id))  # fmt: skip
    first: dict[tuple[str, str, int], _G] = {}
    for g in sorted((g for g in games if g.finished_at is not None),
                    key=lambda g: (g.finished_at, g.id)):  # fmt: skip
        first.setdefault((g.player_id, g.game, g.deal), g)
    return sorted(first.values(), key=lambda g: (g.finished_at, g.id))


def _write(bind: Any, counts: _Counts) -> None:
    for table in ("player_stats", "daily_stats", "game_daily_stats", "deal_stats"):
        bind.execute(sa.text(f"DELETE FROM {table}"))
    players = [
        {"player_id": pid, "game": key, "played": r.played, "won": r.won,
         "wilson": _wilson(r.won, r.played), "best_ms": r.best_ms,
         "fewest_moves": r.fewest_moves, "current_streak": r.current_streak,
         "longest_streak": r.longest_streak, "last_played_at": r.last_played_at}
        for (pid, key), r in counts.players.items()
    ]  # fmt: skip
    daily = [
        {"player_id": pid, "game": key, "day": day, "played": p, "won": w}
        for (pid, key, day), (p, w) in counts.daily.items()
    ]
    game_daily = [
        {"game": key, "day": day, "played": p, "won": w}
        for (key, day), (p, w) in counts.game_daily.items()
    ]
    deals = [
        {"game": key, "deal": number, "played": d.played, "won": d.won,
         "fewest_moves": d.fewest.moves if d.fewest else None,
         "fewest_game_id": d.fewest.id if d.fewest else None,
         "fastest_ms": d.fastest.duration_ms if d.fastest else None,
         "fastest_game_id": d.fastest.id if d.fastest else None}
        for (key, number), d in counts.deals.items()
    ]  # fmt: skip
    for table, rows in (
        (_PLAYER_STATS, players),
        (_DAILY, daily),
        (_GAME_DAILY, game_daily),
        (_DEAL, deals),
    ):
        for i in range(0, len(rows), 1000):
            bind.execute(sa.insert(table), rows[i : i + 1000])
