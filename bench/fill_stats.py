"""Fills a PostgreSQL database with statistics at scale, for bench/stats.py.

    .venv/bin/python bench/fill_stats.py         # ph_stats_bench: 100,000 players, 1,000,000 games
    .venv/bin/python bench/fill_stats.py --players 1000 --games 10000    # a quick small run

It drops and recreates the database it is given (default ``ph_stats_bench`` on 127.0.0.1; it
refuses any other host and any database whose name does not contain ``stats_bench``, so it can
never touch another database), brings it up to date with ``alembic upgrade head``, and loads:

- players, each playing a number of games drawn from a heavy-tailed (log-normal) distribution:
  most play a handful, a few play hundreds or thousands;
- games spread over the last 365 days (each player active for a while, 15% of them now, so
  that about 11% of the games fall in the last 30 days and 3.6% in the last 7), across the five
  games (each player has a favourite), with wins, losses, resignations, abandoned games and
  a few started but never played; 40% of the games are the deal of the day of their day (so
  every past daily deal is played hundreds of times), 10% are "famous" deals (a Zipf law over
  200 numbers per game, the most shared played thousands of times), the rest random numbers;
- every statistics table derived from those games exactly as the app keeps it while games are
  played (app/services/stats.py): ``player_stats`` per player and game plus the ``all`` rows
  (Wilson bound from the app's own ``wilson_lower_bound``, streaks by the app's rule),
  ``daily_stats``, and, where the schema has them, the per-deal and per-game-day counters.

Loading uses COPY (psycopg), with the foreign keys and secondary indexes of the loaded tables
dropped during the load and rebuilt afterwards; then ``VACUUM ANALYZE``. The games carry a real
dealt state of their game (the same for every game of a kind) and no move log: the statistics
pages never read either.
"""

from __future__ import annotations

import argparse
import bisect
import io
import math
import random
import secrets
import sys
import time
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from common import local_postgres, recreate_database  # noqa: E402

from app.engine import DEVELOPMENT_KEY, GAMES, MAX_DEAL, dumps  # noqa: E402
from app.services.daily import daily_deal  # noqa: E402
from app.services.stats import wilson_lower_bound  # noqa: E402

DEFAULT_DB = "postgresql+psycopg://postgres@127.0.0.1:5432/ph_stats_bench"
SLUGS = tuple(GAMES)
ALL = "all"
# Chance to win for an average player, share of all games, and a typical number of moves.
WIN = {"quadrangle": 0.30, "quadruple-interchange": 0.22, "corners": 0.07,
       "castles-end": 0.14, "patriarchs": 0.35}  # fmt: skip
SHARE = {"quadrangle": 0.28, "quadruple-interchange": 0.14, "corners": 0.22,
         "castles-end": 0.16, "patriarchs": 0.20}  # fmt: skip
MOVES = {"quadrangle": 190, "quadruple-interchange": 330, "corners": 120,
         "castles-end": 210, "patriarchs": 170}  # fmt: skip
DAILY_SHARE, FAMOUS_SHARE, FAMOUS_DEALS = 0.40, 0.10, 200
NEVER_PLAYED, ABANDONED, ACTIVE_NOW = 0.02, 0.07, 0.15
ADJECTIVES = ("Amber", "Bold", "Brisk", "Calm", "Clever", "Deft", "Eager", "Golden", "Jolly",
              "Keen", "Lucky", "Merry", "Nimble", "Quiet", "Royal", "Swift")  # fmt: skip
NOUNS = ("Ace", "Badger", "Crane", "Deuce", "Falcon", "Fox", "Heron", "Jack", "King", "Lark",
         "Otter", "Owl", "Queen", "Raven", "Wren", "Lynx")  # fmt: skip


@dataclass(slots=True)
class G:
    id: str
    player: int
    game: str
    deal: int
    status: str
    moves: int
    undos: int
    created: datetime
    first: datetime | None
    finished: datetime | None
    duration_ms: int | None


# -- generating -----------------------------------------------------------------------------------


def games_per_player(rng: random.Random, players: int, games: int) -> list[int]:
    """A log-normal number of games per player (median ≈ 3), every player at least one, scaled
    to add up to ``games`` exactly."""
    sigma = 1.6
    mu = math.log(games / players) - sigma * sigma / 2
    raw = [max(1.0, rng.lognormvariate(mu, sigma)) for _ in range(players)]
    scale = (games - players) / sum(r - 1 for r in raw)
    counts = [1 + int((r - 1) * scale) for r in raw]
    short = games - sum(counts)
    cumulative = list(_accumulate(raw))
    for _ in range(short):  # hand the rounding remainder out in proportion to appetite
        counts[bisect.bisect(cumulative, rng.random() * cumulative[-1])] += 1
    return counts


def _accumulate(values: Iterable[float]) -> Iterator[float]:
    total = 0.0
    for v in values:
        total += v
        yield total


def zipf_table(n: int, s: float) -> list[float]:
    return list(_accumulate(1 / (k**s) for k in range(1, n + 1)))


def generate(args: argparse.Namespace, now: datetime) -> tuple[list[str], list[str], list[G]]:
    rng = random.Random(args.seed)
    counts = games_per_player(rng, args.players, args.games)
    player_ids = [secrets.token_urlsafe(16) for _ in range(args.players)]
    names = [f"{ADJECTIVES[i % 16]}{NOUNS[(i // 16) % 16]}{i:06d}" for i in range(args.players)]
    span = timedelta(days=args.days)
    start = now - span
    famous = zipf_table(FAMOUS_DEALS, 1.1)
    kinds, shares = list(SHARE), list(_accumulate(SHARE.values()))
    daily_cache: dict[tuple[str, date], int] = {}
    out: list[G] = []
    for p, count in enumerate(counts):
        favourite = rng.choices(kinds, weights=list(SHARE.values()))[0]
        # Better players play more (and a few are very good).
        skill = rng.betavariate(2.5, 2.5) * 2 * (1 + 0.15 * math.log10(count))
        # Each player is active for a while (heavy players longer): 15% are active now, the
        # others were at some earlier time, a little more often recently.
        days = min(args.days, rng.expovariate(1 / (40 * (1 + math.log10(count)))))
        since = args.days - days
        if rng.random() >= ACTIVE_NOW:
            since *= rng.random() ** 0.8
        times = sorted((since + rng.random() * days) * 86400 for _ in range(count))
        for offset in times:
            slug = (
                favourite
                if rng.random() < 0.55
                else kinds[bisect.bisect(shares, rng.random() * shares[-1])]
            )
            first = start + timedelta(seconds=offset)
            r = rng.random()
            if r < DAILY_SHARE:
                key = (slug, first.date())
                deal = daily_cache.get(key) or daily_cache.setdefault(
                    key, daily_deal(*key, DEVELOPMENT_KEY)
                )
            elif r < DAILY_SHARE + FAMOUS_SHARE:
                deal = 1 + bisect.bisect(famous, rng.random() * famous[-1])
            else:
                deal = rng.randint(1, MAX_DEAL)
            typical = MOVES[slug]
            gid = secrets.token_urlsafe(16)
            undos = int(rng.expovariate(1 / 3)) if rng.random() < 0.5 else 0
            r = rng.random()
            if r < NEVER_PLAYED:
                out.append(G(gid, p, slug, deal, "playing", 0, 0, first, None, None, None))
                continue
            if r < NEVER_PLAYED + ABANDONED:
                moves = rng.randint(1, typical // 2)
                out.append(G(gid, p, slug, deal, "playing", moves, undos, first - timedelta(
                    seconds=5), first, None, None))  # fmt: skip
                continue
            won = rng.random() < min(0.95, WIN[slug] * skill)
            moves = max(52, int(typical * rng.gauss(1, 0.15))) if won else rng.randint(3, typical)
            ms = int(moves * rng.uniform(1200, 5000))
            created = first - timedelta(seconds=rng.uniform(1, 30))
            out.append(
                G(gid, p, slug, deal, "won" if won else "lost", moves, undos, created, first,
                  first + timedelta(milliseconds=ms), ms)
            )  # fmt: skip
    return player_ids, names, out


# -- the statistics, exactly as app/services/stats.py keeps them -----------------------------------


@dataclass(slots=True)
class Rec:
    played: int = 0
    won: int = 0
    best_ms: int | None = None
    fewest: int | None = None
    streak: int = 0
    longest: int = 0
    last: datetime | None = None


def utc_day(t: datetime) -> date:
    return t.astimezone(UTC).date()


def statistics(
    games: list[G],
) -> tuple[dict[tuple[int, str], Rec], dict[tuple[int, str, date], list[int]]]:
    """Replays every player's games in time order through the rules of app/services/stats.py:

    - first move: played + 1 (game and ``all`` rows, and the day of the first move); the streak
      ends if the previous game (same kind for the game row, any kind for ``all``) is unfinished;
    - win: won + 1, streak + 1, best time and fewest moves; loss or resignation: streak ends.
    """
    by_player: dict[int, list[tuple[datetime, int, int]]] = defaultdict(list)
    for i, g in enumerate(games):
        if g.first is None:
            continue
        by_player[g.player].append((g.first, 0, i))
        if g.finished is not None:
            by_player[g.player].append((g.finished, 1, i))
    stats: dict[tuple[int, str], Rec] = {}
    daily: dict[tuple[int, str, date], list[int]] = {}
    for p, events in by_player.items():
        events.sort()
        done: set[int] = set()
        previous: dict[str, int] = {}
        for stamp, kind, i in events:
            g = games[i]
            rows = (g.game, ALL)
            recs = [stats.setdefault((p, k), Rec()) for k in rows]
            if kind == 0:
                for key, rec in zip(rows, recs):
                    rec.played += 1
                    rec.last = stamp
                    before = previous.get(key)
                    if before is not None and before not in done:
                        rec.streak = 0
                    previous[key] = i
                day = utc_day(stamp)
                for key in rows:
                    daily.setdefault((p, key, day), [0, 0])[0] += 1
                continue
            done.add(i)
            if g.status != "won":
                for rec in recs:
                    rec.streak = 0
                continue
            assert g.duration_ms is not None
            for rec in recs:
                rec.won += 1
                rec.last = stamp
                rec.streak += 1
                rec.longest = max(rec.longest, rec.streak)
                best = rec.best_ms
                rec.best_ms = g.duration_ms if best is None else min(best, g.duration_ms)
                rec.fewest = g.moves if rec.fewest is None else min(rec.fewest, g.moves)
            assert g.first is not None
            for key in rows:
                daily[(p, key, utc_day(g.first))][1] += 1
    return stats, daily


# -- loading ---------------------------------------------------------------------------------------


def check_target(url: str) -> Any:
    parsed = local_postgres(url, "fill")
    if not parsed.database or "stats_bench" not in parsed.database:
        sys.exit(
            f"refusing to drop database {parsed.database!r}: its name must contain 'stats_bench'"
        )
    return parsed


def fresh_database(url: str, revision: str) -> None:
    recreate_database(check_target(url), revision)


def libpq_url(url: str) -> str:
    from sqlalchemy.engine import make_url

    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


def ts(t: datetime | None) -> str:
    return "\\N" if t is None else t.isoformat()


def nul(v: Any) -> str:
    return "\\N" if v is None else str(v)


def copy_rows(cur: Any, table: str, columns: str, lines: Iterable[str]) -> None:
    with cur.copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
        buffer = io.StringIO()
        for n, line in enumerate(lines, 1):
            buffer.write(line)
            buffer.write("\n")
            if n % 20_000 == 0:
                copy.write(buffer.getvalue())
                buffer = io.StringIO()
        copy.write(buffer.getvalue())


LOADED = ("player", "game", "player_stats", "daily_stats", "deal_stats", "game_daily_stats")


def drop_secondary(cur: Any) -> list[str]:
    """Drops foreign keys and non-constraint indexes of the loaded tables; returns the DDL that
    puts them back."""
    cur.execute(
        "SELECT conrelid::regclass::text, conname, pg_get_constraintdef(oid) FROM pg_constraint"
        " WHERE contype = 'f' AND conrelid::regclass::text = ANY(%s)",
        (list(LOADED),),
    )
    fks = cur.fetchall()
    cur.execute(
        "SELECT i.indexrelid::regclass::text, pg_get_indexdef(i.indexrelid) FROM pg_index i"
        " WHERE i.indrelid::regclass::text = ANY(%s) AND NOT EXISTS ("
        "   SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid)",
        (list(LOADED),),
    )
    indexes = cur.fetchall()
    for table, name, _ in fks:
        cur.execute(f'ALTER TABLE {table} DROP CONSTRAINT "{name}"')
    for name, _ in indexes:
        cur.execute(f"DROP INDEX {name}")
    return [d for _, d in indexes] + [
        f'ALTER TABLE {table} ADD CONSTRAINT "{name}" {d}' for table, name, d in fks
    ]


def tables(cur: Any) -> set[str]:
    cur.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
    return {r[0] for r in cur.fetchall()}


DEAL_STATS_SQL = """
INSERT INTO deal_stats (game, deal, played, won, fewest_moves, fewest_game_id, fastest_ms,
                        fastest_game_id)
SELECT s.game, s.deal, s.played, s.won, f.moves, f.id, q.duration_ms, q.id
FROM (SELECT game, deal, count(*) AS played, count(*) FILTER (WHERE status = 'won') AS won
      FROM game WHERE first_move_at IS NOT NULL GROUP BY game, deal) s
LEFT JOIN (SELECT DISTINCT ON (game, deal) game, deal, id, moves FROM game
           WHERE status = 'won' AND first_move_at IS NOT NULL
           ORDER BY game, deal, moves, finished_at, id) f USING (game, deal)
LEFT JOIN (SELECT DISTINCT ON (game, deal) game, deal, id, duration_ms FROM game
           WHERE status = 'won' AND first_move_at IS NOT NULL
           ORDER BY game, deal, duration_ms, finished_at, id) q USING (game, deal)
"""
GAME_DAILY_SQL = """
INSERT INTO game_daily_stats (game, day, played, won)
SELECT game, (first_move_at AT TIME ZONE 'UTC')::date, count(*),
       count(*) FILTER (WHERE status = 'won')
FROM game WHERE first_move_at IS NOT NULL GROUP BY 1, 2
"""


def load(args: argparse.Namespace, now: datetime) -> dict[str, float]:
    import psycopg

    timings: dict[str, float] = {}
    t = time.perf_counter()
    player_ids, names, games = generate(args, now)
    timings["generate games"] = time.perf_counter() - t
    t = time.perf_counter()
    stats, daily = statistics(games)
    timings["derive statistics"] = time.perf_counter() - t
    states = {slug: dumps(rules.deal(1)) for slug, rules in GAMES.items()}

    with psycopg.connect(libpq_url(args.database_url)) as conn, conn.cursor() as cur:
        cur.execute("SET maintenance_work_mem = '512MB'")
        present = tables(cur)
        t = time.perf_counter()
        restore = drop_secondary(cur)
        joined = now - timedelta(days=args.days + 1)
        copy_rows(
            cur, "player", "id, name, name_key, created_at",
            (f"{pid}\t{name}\t{name.lower()}\t{ts(joined)}"
             for pid, name in zip(player_ids, names)),
        )  # fmt: skip
        copy_rows(
            cur, "game",
            "id, player_id, game, deal, rules, state, version, status, moves, undos, can_undo,"
            " created_at, updated_at, first_move_at, finished_at, duration_ms",
            (f"{g.id}\t{player_ids[g.player]}\t{g.game}\t{g.deal}\tv1\t{states[g.game]}\t"
             f"{g.moves + g.undos + (g.status == 'lost')}\t{g.status}\t{g.moves}\t{g.undos}\tf\t"
             f"{ts(g.created)}\t{ts(g.finished or g.first or g.created)}\t{ts(g.first)}\t"
             f"{ts(g.finished)}\t{nul(g.duration_ms)}" for g in games),
        )  # fmt: skip
        timings["COPY players and games"] = time.perf_counter() - t
        t = time.perf_counter()
        copy_rows(
            cur, "player_stats",
            "player_id, game, played, won, wilson, best_ms, fewest_moves, current_streak,"
            " longest_streak, last_played_at",
            (f"{player_ids[p]}\t{k}\t{r.played}\t{r.won}\t{wilson_lower_bound(r.won, r.played)!r}"
             f"\t{nul(r.best_ms)}\t{nul(r.fewest)}\t{r.streak}\t{r.longest}\t{ts(r.last)}"
             for (p, k), r in stats.items()),
        )  # fmt: skip
        copy_rows(
            cur, "daily_stats", "player_id, game, day, played, won",
            (f"{player_ids[p]}\t{k}\t{d.isoformat()}\t{v[0]}\t{v[1]}"
             for (p, k, d), v in daily.items()),
        )  # fmt: skip
        if "game_daily_stats" in present:
            cur.execute(GAME_DAILY_SQL)
        if "deal_stats" in present:
            cur.execute(DEAL_STATS_SQL)
        timings["COPY and derive the counters"] = time.perf_counter() - t
        t = time.perf_counter()
        for ddl in restore:
            cur.execute(ddl)
        timings["rebuild indexes and foreign keys"] = time.perf_counter() - t
        conn.commit()
        t = time.perf_counter()
        conn.autocommit = True
        cur.execute("VACUUM ANALYZE")
        timings["VACUUM ANALYZE"] = time.perf_counter() - t
        cur.execute(
            "SELECT relname, n_live_tup, pg_total_relation_size(relid) FROM pg_stat_user_tables"
            " ORDER BY pg_total_relation_size(relid) DESC"
        )
        print("\ntable              rows        total size")
        for name, rows, size in cur.fetchall():
            print(f"{name:<18} {rows:>10,}  {size / 2**20:>8.1f} MiB")
    return timings


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database-url", default=DEFAULT_DB, help="dropped and recreated")
    parser.add_argument("--players", type=int, default=100_000)
    parser.add_argument("--games", type=int, default=1_000_000)
    parser.add_argument("--days", type=int, default=365, help="games spread over this many days")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--revision",
        default="head",
        help="migrate to this Alembic revision (to measure an older schema)",
    )
    args = parser.parse_args(argv)
    if not 1 <= args.players <= args.games or args.days < 1:
        parser.error("need 1 <= players <= games and days >= 1")
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    check_target(args.database_url)
    started = time.perf_counter()
    t = time.perf_counter()
    fresh_database(args.database_url, args.revision)
    migrate = time.perf_counter() - t
    timings = {f"create database, alembic upgrade {args.revision}": migrate}
    timings |= load(args, datetime.now(UTC))
    total = time.perf_counter() - started
    print(f"\nfilled {args.database_url} with {args.players:,} players, {args.games:,} games")
    for step, seconds in timings.items():
        print(f"  {step:<36} {seconds:6.1f} s")
    print(f"  {'total':<36} {total:6.1f} s")


if __name__ == "__main__":
    main()
