"""``python -m app.cli recount``: standings, streaks and ratings recomputed from the stored
games and their move logs must equal the ones the app shows.

Each competition game (challenge, event, rated race) is replayed from its deal and its move
log: its result (won, lost, in play), its moves and its active time (the pauses between logged
actions, each up to the idle cap) are recomputed and compared with the game's row. The day's
challenge standings, the streaks, the events' standings and the race ratings are then computed
again from those recounted games (ratings: every rated race replayed through openskill in the
order the races ended) and compared with what the services read from the rows.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date
from itertools import pairwise
from typing import TYPE_CHECKING, Any

from sqlalchemy import select

from app.db.models import (
    Arena,
    ArenaGame,
    Challenge,
    Game,
    MoveRecord,
    Player,
    Race,
    RaceRating,
    RatingChange,
    as_utc,
)
from app.engine import Move, Status, dumps, get_ruleset
from app.services.arena_standings import score
from app.services.challenge import rank_key, streak_of
from app.services.move_log import active_moves
from app.services.ratings import Finisher, forfeited, rate
from app.services.statuses import RaceStatus

if TYPE_CHECKING:
    from app.bootstrap import Services

TOLERANCE = 1e-9


@dataclass
class Recounted:
    status: str
    moves: int
    active_ms: int | None
    on_foundations: int
    state_text: str


@dataclass
class Report:
    games: int = 0
    challenge_days: int = 0
    streaks: int = 0
    events: int = 0
    races: int = 0
    problems: list[str] = field(default_factory=list)


def recount_game(services: Services, game: Game, log: list[Any]) -> Recounted:
    """A game's result, moves and active time from its deal and move log alone."""
    rules = get_ruleset(game.game)
    games = services.games
    start = rules.deal(game.deal, games.deal_key)
    in_force = [n for n, _ in active_moves(log)]
    state = rules.replay(start, [Move.parse(n) for n in in_force])
    actions = [r.action for r in log]
    if rules.is_won(state):
        status = Status.WON
    elif actions and actions[-1] == "resign":
        status = Status.LOST
    elif not rules.legal_moves(state) or len(in_force) >= games.max_moves:
        status = Status.LOST if game.status != Status.PLAYING else Status.PLAYING
    else:
        status = Status.PLAYING
    stamps = [as_utc(r.created_at) for r in log]
    active = 0
    for before, after in pairwise(stamps):
        assert before is not None and after is not None
        pause = int((after - before).total_seconds() * 1000)
        active += max(0, min(pause, games.idle_cap_ms))
    return Recounted(
        status,
        sum(1 for a in actions if a == "move") - sum(1 for a in actions if a == "undo"),
        active if log else None,
        rules.on_foundations(state),
        dumps(state),
    )


def recount(services: Services) -> Report:
    report = Report()
    with services.sessions() as db:
        wanted = db.scalars(
            select(Game).where((Game.competition.is_not(None)) | Game.race_id.in_(
                select(Race.id).where(Race.rated)
            ))
        ).all()  # fmt: skip
        logs: dict[str, list[Any]] = defaultdict(list)
        ids = [g.id for g in wanted]
        for i in range(0, len(ids), 500):
            for row in db.scalars(
                select(MoveRecord)
                .where(MoveRecord.game_id.in_(ids[i : i + 500]))
                .order_by(MoveRecord.game_id, MoveRecord.seq)
            ):
                logs[row.game_id].append(row)
        names = dict(db.execute(select(Player.id, Player.name)).all())
        counted: dict[str, Recounted] = {}
        for g in wanted:
            r = recount_game(services, g, logs[g.id])
            counted[g.id] = r
            report.games += 1
            if r.status != g.status or r.moves != g.moves:
                report.problems.append(
                    f"game {g.id}: the log says {r.status} in {r.moves} moves, the row "
                    f"{g.status} in {g.moves}"
                )
            if (
                g.duration_ms is not None
                and r.active_ms is not None
                and r.active_ms != g.duration_ms
            ):
                report.problems.append(
                    f"game {g.id}: active time {r.active_ms} ms from the log, "
                    f"{g.duration_ms} stored"
                )
        by_id = {g.id: g for g in wanted}
        data = Stored(
            challenges=list(db.scalars(select(Challenge))),
            arena_games=[
                tuple(r)
                for r in db.execute(
                    select(ArenaGame.arena_id, ArenaGame.player_id, ArenaGame.game_id).order_by(
                        ArenaGame.arena_id, ArenaGame.player_id, ArenaGame.seq
                    )
                )
            ],
            arenas=list(db.scalars(select(Arena.id))),
            races=list(
                db.scalars(
                    select(Race)
                    .where(Race.rated, Race.status == RaceStatus.FINISHED)
                    .order_by(Race.finished_at, Race.id)
                )
            ),
            changes=list(db.scalars(select(RatingChange))),
            ratings=list(db.scalars(select(RaceRating))),
        )
        db.expunge_all()
    # The services read with sessions of their own (on SQLite one at a time): compared here,
    # with this one closed.
    _challenges(services, data, report, by_id, counted, names)
    _events(services, data, report, by_id, counted, names)
    _ratings(data, report, by_id, counted)
    return report


@dataclass
class Stored:
    challenges: list[Challenge]
    arena_games: list[tuple[Any, ...]]
    arenas: list[int]
    races: list[Race]
    changes: list[RatingChange]
    ratings: list[RaceRating]


def _time(g: Game, r: Recounted) -> int:
    return (r.active_ms if r.status != Status.PLAYING else g.active_ms) or 0


def _challenges(services: Services, data: Stored, report: Report, by_id: dict[str, Game],
                counted: dict[str, Recounted], names: dict[str, str]) -> None:  # fmt: skip
    rows = data.challenges
    days: dict[tuple[str, date], list[Challenge]] = defaultdict(list)
    won: dict[tuple[str, str], set[date]] = defaultdict(set)
    for c in rows:
        days[(c.game, c.day)].append(c)
        if counted[c.game_id].status == Status.WON:
            won[(c.player_id, c.game)].add(c.day)
    challenges = services.challenges
    for (slug, day), entries in days.items():
        report.challenge_days += 1
        mine = sorted(
            entries,
            key=lambda c: (
                *rank_key(counted[c.game_id].status, counted[c.game_id].moves, c.par,
                          _time(by_id[c.game_id], counted[c.game_id])),
                names[c.player_id],
            ),
        )  # fmt: skip
        shown = challenges.standings_of(slug, day, closed=False).rows
        if [names[c.player_id] for c in mine] != [r.player for r in shown]:
            report.problems.append(f"challenge {slug} {day}: the standings differ from a recount")
    today = challenges.today()
    for (pid, slug), days_won in won.items():
        report.streaks += 1
        if streak_of(days_won, today) != challenges.streaks(pid)[slug]:
            report.problems.append(f"streak of {names[pid]} in {slug}: differs from a recount")


def _events(services: Services, data: Stored, report: Report, by_id: dict[str, Game],
            counted: dict[str, Recounted], names: dict[str, str]) -> None:  # fmt: skip
    for arena_id in data.arenas:
        report.events += 1
        games = [(pid, gid) for aid, pid, gid in data.arena_games if aid == arena_id]
        per: dict[str, list[str]] = defaultdict(list)
        active: dict[str, int] = defaultdict(int)
        for pid, gid in games:
            per[pid].append(counted[gid].status)
            if counted[gid].status != Status.PLAYING:
                active[pid] += _time(by_id[gid], counted[gid])
        _, shown = services.arenas.standings(arena_id)
        for s in shown:
            pid = next((p for p, n in names.items() if n == s.player), None)
            points, wins, _streak = score(per.get(pid or "", []))
            if (points, wins, active.get(pid or "", 0)) != (s.points, s.wins, s.active_ms):
                report.problems.append(
                    f"event {arena_id}, {s.player}: {points} points, {wins} wins from a "
                    f"recount; {s.points}, {s.wins} shown"
                )


def _ratings(data: Stored, report: Report, by_id: dict[str, Game],
             counted: dict[str, Recounted]) -> None:  # fmt: skip
    races = data.races
    current: dict[tuple[str, str], tuple[float, float]] = {}
    races_run: dict[tuple[str, str], int] = defaultdict(int)
    for race in races:
        report.races += 1
        racers = []
        for g in sorted(
            (g for g in by_id.values() if g.race_id == race.id), key=lambda g: g.player_id
        ):
            r = counted[g.id]
            racers.append(
                Finisher(g.player_id, r.status, as_utc(g.finished_at), r.on_foundations, r.moves,
                         forfeited(g.game, r.status, r.state_text))
            )  # fmt: skip
        if len(racers) < 2:
            continue
        before = {f.player_id: current[(f.player_id, race.game)] for f in racers
                  if (f.player_id, race.game) in current}  # fmt: skip
        after = rate(before, racers)
        stored = {c.player_id: c for c in data.changes if c.race_id == race.id}
        for pid, (mu, sigma) in after.items():
            current[(pid, race.game)] = (mu, sigma)
            races_run[(pid, race.game)] += 1
            change = stored.get(pid)
            if (
                change is None
                or abs(change.mu_after - mu) > TOLERANCE
                or abs(change.sigma_after - sigma) > TOLERANCE
            ):
                report.problems.append(f"race {race.id}: {pid}'s rating change differs")
    for row in data.ratings:
        key = (row.player_id, row.game)
        found = current.get(key)
        if (
            found is None
            or abs(row.mu - found[0]) > TOLERANCE
            or abs(row.sigma - found[1]) > TOLERANCE
        ):
            report.problems.append(
                f"rating of {row.player_id} in {row.game}: differs from a recount"
            )
        elif row.races != races_run[key]:
            report.problems.append(f"rating of {row.player_id} in {row.game}: race count differs")
