"""A deal's public record: how everyone has fared on the same cards.

The counts and the records (fewest moves, fastest time among wins, with who did it) come from
the deal's ``deal_stats`` row, kept current as games are played: each player's first finished
game of the deal counts, rated or casual (stats.py). The finished games are read newest first
through the (game, deal, finished_at) index. However often a deal was played, its page reads one
row and a few dozen games.

The same-deal rule decides what a viewer sees: the finished games and their replays only once
they have finished a game of the deal themselves; everyone sees the counts and the records.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from sqlalchemy import Select, and_, exists, or_, select
from sqlalchemy.orm import Session, aliased, sessionmaker

from app.db.models import DealStats, Game, Player
from app.engine import GAMES, MAX_DEAL, Ruleset, Status
from app.services import daily, same_deal
from app.services.errors import NotFound
from app.services.same_deal import Relation
from app.services.seal import Seal, Sealer
from app.services.verdicts import analysed_deal_winnable, deal_solution, deal_winnable

FINISHED_LISTED = 50
DAILY_RESULTS = 50


@dataclass(frozen=True)
class FinishedGame:
    id: str
    player: str
    status: str
    moves: int
    duration_ms: int | None
    finished_at: datetime | None
    replayable: bool = True  # whether the viewer may open its replay (the same-deal rule)

    @property
    def replay_url(self) -> str | None:
        return f"/games/{self.id}/replay" if self.replayable else None


@dataclass(frozen=True)
class DealSummary:
    rules: Ruleset
    number: int
    played: int
    won: int
    fewest_moves: FinishedGame | None
    fastest: FinishedGame | None
    finished: list[FinishedGame]  # newest first
    # When this is a deal of the day (today's, or of a recent day): the date, and once that day
    # is over, the day's wins ranked by fewest moves, then fastest time, then who finished
    # first (while it lasts the deal is sealed: app/services/seal.py).
    daily: date | None = None
    daily_results: list[FinishedGame] | None = None
    # The viewer's own games of the deal: none, one in play, or finished (replays open).
    viewer: Relation = Relation.NONE
    viewer_game: str | None = None  # the viewer's unfinished game of the deal, to resume
    # The solver's verdict (True, False or None: undecided or not judged) and, for a winnable
    # deal, its shortened winning line: only for a viewer who has finished the deal.
    winnable: bool | None = None
    solution: list[str] | None = None
    # While a competition on the deal is open (app/services/seal.py) the page shows its counts
    # only: no records, no finished games, no verdict.
    sealed: Seal | None = None

    @property
    def replays_open(self) -> bool:
        return self.viewer is Relation.FINISHED and self.sealed is None

    @property
    def win_rate(self) -> float | None:
        return self.won / self.played if self.played else None


def parse_deal(slug: str, number: str | int) -> tuple[Ruleset, int]:
    """The ruleset and deal number of a deal address, or NotFound for anything else."""
    rules = GAMES.get(slug)
    text = str(number)
    # isascii: str.isdigit() also accepts digits like "²" that int() refuses.
    digits = text.isascii() and text.isdigit() and len(text) <= 16
    if rules is None or not digits or not 1 <= int(text) <= MAX_DEAL:
        raise NotFound("There is no such deal: check the game name and the deal number.")
    return rules, int(text)


_FinishedQuery = Select[str, str, str, int, int | None, datetime | None]
_FINISHED: _FinishedQuery = select(
    Game.id, Player.name, Game.status, Game.moves, Game.duration_ms, Game.finished_at
).join(Player, Player.id == Game.player_id)
_EARLIER = aliased(Game)


def _first_finished() -> Any:
    """The game is its player's first finished game of its deal: the one that counts."""
    return ~exists().where(
        _EARLIER.player_id == Game.player_id,
        _EARLIER.game == Game.game,
        _EARLIER.deal == Game.deal,
        _EARLIER.finished_at.is_not(None),
        or_(
            _EARLIER.finished_at < Game.finished_at,
            and_(_EARLIER.finished_at == Game.finished_at, _EARLIER.id < Game.id),
        ),
    )


def _first_dealt() -> Any:
    """The game is its player's first game of its deal (the deal of the day ranks only that)."""
    return ~exists().where(
        _EARLIER.player_id == Game.player_id,
        _EARLIER.game == Game.game,
        _EARLIER.deal == Game.deal,
        or_(
            _EARLIER.created_at < Game.created_at,
            and_(_EARLIER.created_at == Game.created_at, _EARLIER.id < Game.id),
        ),
    )


class Deals:
    def __init__(
        self,
        sessions: sessionmaker[Session],
        deal_key: bytes,
        sealer: Sealer,
    ) -> None:
        self.sessions = sessions
        self.deal_key = deal_key
        self.sealer = sealer

    def summary(self, slug: str, number: str | int, viewer: str | None = None) -> DealSummary:
        rules, deal = parse_deal(slug, number)
        today = self.sealer.today()
        day = daily.day_of(slug, deal, today, self.deal_key)
        with self.sessions() as db:
            related = same_deal.relation(db, viewer, slug, deal)
            sealed = self.sealer.of(db, slug, deal)
            open_ = related is Relation.FINISHED and sealed is None
            counts = db.get(DealStats, (slug, deal))
            best_ids = (
                [i for i in (counts.fewest_game_id, counts.fastest_game_id) if i]
                if counts and sealed is None
                else []
            )
            best = (
                {g.id: g for g in _games(db, _FINISHED.where(Game.id.in_(best_ids)), open_)}
                if best_ids
                else {}
            )
            here = (Game.game == slug, Game.deal == deal)
            finished = (
                _games(
                    db,
                    _FINISHED.where(*here, Game.finished_at.is_not(None), _first_finished())
                    .order_by(Game.finished_at.desc(), Game.id)
                    .limit(FINISHED_LISTED),
                    open_,
                )
                if open_
                else []
            )
            results = None
            if day is not None and sealed is None:  # ranked once its day is over
                midnight = datetime.combine(day, time(), tzinfo=UTC)
                results = _games(
                    db,
                    _FINISHED.where(
                        *here,
                        Game.status == Status.WON,
                        Game.finished_at >= midnight,
                        Game.finished_at < midnight + timedelta(days=1),
                        _first_dealt(),
                    )
                    .order_by(Game.moves, Game.duration_ms, Game.finished_at, Game.id)
                    .limit(DAILY_RESULTS),
                    open_,
                )
            winnable, solution = (None, None)
            if open_:  # the solver's verdict is a spoiler too: only after finishing the deal
                winnable = deal_winnable(db, slug, deal)
                solution = deal_solution(db, slug, deal)
                if winnable is None:  # not judged: a finished game's analysis may have decided it
                    winnable = analysed_deal_winnable(db, slug, deal)
            mine = None
            if related is Relation.IN_PLAY:
                mine = db.scalar(
                    select(Game.id).where(
                        *here, Game.player_id == viewer, Game.status == Status.PLAYING
                    )
                )
        return DealSummary(
            rules,
            deal,
            counts.played if counts else 0,
            counts.won if counts else 0,
            best.get(counts.fewest_game_id or "") if counts else None,
            best.get(counts.fastest_game_id or "") if counts else None,
            finished,
            day,
            results,
            related,
            mine,
            winnable,
            solution,
            sealed,
        )


def _games(db: Session, query: _FinishedQuery, replayable: bool) -> list[FinishedGame]:
    return [FinishedGame(*row, replayable=replayable) for row in db.execute(query).all()]
