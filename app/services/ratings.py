"""Race ratings (contract v3, Competition): a per-game rating for rated races, with the
``openskill`` library's Plackett-Luce model (Weng-Lin): each racer has ``mu`` and ``sigma``,
shown as ``rating = mu - 3 sigma``.

A rated race's order: winners by finishing time, then racers who ran out of moves by cards on
foundations and moves (the standings of app/services/rooms/events.py), then every racer who
**forfeited** (resigned, or was forfeited for silence: the game ended lost while it still had
legal moves), all sharing the last place. The change of every racer is stored with its race
(``rating_change``), so each rating can be traced and recounted (``python -m app.cli recount``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from openskill.models import PlackettLuce
from sqlalchemy import Connection, insert, select, update
from sqlalchemy.orm import Session

from app.db.models import Game, Player, RaceRating, RatingChange
from app.engine import Status, get_ruleset, loads

MODEL = PlackettLuce()
START_MU = MODEL.mu
START_SIGMA = MODEL.sigma


def shown(mu: float, sigma: float) -> float:
    return mu - 3 * sigma


@dataclass(frozen=True)
class Finisher:
    """A racer at the end of a rated race, in the order the rating counts."""

    player_id: str
    status: str
    finished_at: datetime | None
    foundation_cards: int
    moves: int
    forfeit: bool


def forfeited(slug: str, status: str, state_text: str) -> bool:
    """Lost with legal moves left: the racer resigned or was forfeited, not stuck."""
    if status != Status.LOST:
        return False
    rules = get_ruleset(slug)
    return bool(rules.legal_moves(loads(state_text)))


def places(finishers: Sequence[Finisher]) -> list[int]:
    """Each racer's place (1 = best): winners by time, then the rest by cards on foundations
    and moves; forfeits all share the place after everyone else."""

    def key(f: Finisher) -> tuple[Any, ...]:
        won = f.status == Status.WON
        at = f.finished_at.timestamp() if won and f.finished_at else 0.0
        return (0 if won else 1, at, -f.foundation_cards, f.moves)

    ranked = sorted((f for f in finishers if not f.forfeit), key=key)
    place_of: dict[str, int] = {}
    previous: tuple[Any, ...] | None = None
    place = 0
    for i, f in enumerate(ranked, 1):
        k = key(f)
        if k != previous:
            place, previous = i, k
        place_of[f.player_id] = place
    last = len(ranked) + 1
    return [place_of.get(f.player_id, last) for f in finishers]


def finishers(
    db: Session | Connection, race_id: int, overrides: Iterable[Any] = ()
) -> list[Finisher]:
    """The racers of a race as they ended, from their stored games (``overrides``: rows being
    written in this transaction, in place of their stored versions)."""
    current = {o.id: o for o in overrides}
    rows = db.execute(
        select(
            Game.id, Game.player_id, Game.game, Game.status, Game.state, Game.moves,
            Game.finished_at,
        ).where(Game.race_id == race_id).order_by(Game.player_id)
    ).all()  # fmt: skip
    out = []
    for gid, pid, slug, status, state, moves, finished_at in rows:
        if gid in current:
            o = current[gid]
            status, state, moves, finished_at = o.status, o.state, o.moves, o.finished_at
        on = get_ruleset(slug).on_foundations(loads(state))
        out.append(Finisher(pid, status, finished_at, on, moves, forfeited(slug, status, state)))
    return out


def rate(
    ratings: dict[str, tuple[float, float]], racers: Sequence[Finisher]
) -> dict[str, tuple[float, float]]:
    """The racers' new (mu, sigma) after the race, from their ratings before it."""
    teams = [[MODEL.rating(*ratings.get(f.player_id, (START_MU, START_SIGMA)))] for f in racers]
    after = MODEL.rate(teams, ranks=[float(p) for p in places(racers)])
    return {f.player_id: (team[0].mu, team[0].sigma) for f, team in zip(racers, after, strict=True)}


def rate_race(
    db: Session | Connection,
    race_id: int,
    slug: str,
    stamp: datetime,
    overrides: Iterable[Any] = (),
) -> None:
    """Updates the racers' ratings for a rated race that has just ended, and stores each
    change with the race. In the transaction that ends the race (its row is locked)."""
    racers = finishers(db, race_id, overrides)
    if len(racers) < 2:
        return
    ids = [f.player_id for f in racers]
    before = {
        pid: (mu, sigma, races)
        for pid, mu, sigma, races in db.execute(
            select(RaceRating.player_id, RaceRating.mu, RaceRating.sigma, RaceRating.races)
            .where(RaceRating.game == slug, RaceRating.player_id.in_(ids))
            .with_for_update()
        ).all()
    }
    after = rate({pid: (b[0], b[1]) for pid, b in before.items()}, racers)
    for f, place in zip(racers, places(racers), strict=True):
        mu0, sigma0, races = before.get(f.player_id, (START_MU, START_SIGMA, 0))
        mu1, sigma1 = after[f.player_id]
        values = {
            "mu": mu1,
            "sigma": sigma1,
            "rating": shown(mu1, sigma1),
            "races": races + 1,
            "updated_at": stamp,
        }
        if f.player_id in before:
            db.execute(
                update(RaceRating)
                .where(RaceRating.player_id == f.player_id, RaceRating.game == slug)
                .values(**values)
            )
        else:
            db.execute(insert(RaceRating).values(player_id=f.player_id, game=slug, **values))
        db.execute(
            insert(RatingChange).values(
                race_id=race_id,
                player_id=f.player_id,
                game=slug,
                place=place,
                forfeit=f.forfeit,
                mu_before=mu0,
                sigma_before=sigma0,
                mu_after=mu1,
                sigma_after=sigma1,
                created_at=stamp,
            )
        )


@dataclass(frozen=True)
class RatingOut:
    rating: float
    mu: float
    sigma: float
    races: int


def ratings_of(db: Session, player_id: str) -> dict[str, RatingOut]:
    rows = db.execute(
        select(RaceRating.game, RaceRating.mu, RaceRating.sigma, RaceRating.races).where(
            RaceRating.player_id == player_id
        )
    ).all()
    return {g: RatingOut(shown(mu, s), mu, s, n) for g, mu, s, n in rows}


@dataclass(frozen=True)
class RatingRow:
    rank: int
    player: str
    rating: float
    mu: float
    sigma: float
    races: int


def board(db: Session, slug: str, limit: int = 100) -> list[RatingRow]:
    """The race leaderboard of a game: by rating (mu - 3 sigma), banned players left out."""
    rows = db.execute(
        select(Player.name, RaceRating.mu, RaceRating.sigma, RaceRating.races)
        .join(Player, Player.id == RaceRating.player_id)
        .where(RaceRating.game == slug, Player.banned_at.is_(None))
        .order_by(RaceRating.rating.desc(), Player.name)
        .limit(limit)
    ).all()
    return [
        RatingRow(i, name, shown(mu, s), mu, s, n) for i, (name, mu, s, n) in enumerate(rows, 1)
    ]
