"""Leaderboards, player records and deals."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from app.services.deals import DealSummary, FinishedGame
from app.services.leaderboard import Board, PlayerRecord
from app.web.api.schemas.base import Answer, GameSlug, iso_or_none, seconds_or_none

# -- leaderboards and player records --------------------------------------------------------


class BoardRow(Answer):
    rank: int
    player: str
    played: int
    won: int
    win_rate: float
    wilson_lower_bound: float


class GameTotals(Answer):
    played: int
    won: int
    win_rate: float | None


class LeaderboardAnswer(Answer):
    game: GameSlug | None = Field(description="null: all games together")
    period: Literal["all", "30d", "7d"]
    min_games: int
    rows: list[BoardRow]
    games: dict[GameSlug, GameTotals] = Field(description="Each game's win rate, all players.")


def leaderboard(board: Board) -> LeaderboardAnswer:
    return LeaderboardAnswer.model_validate(
        {
            "game": board.game,
            "period": board.period.value,
            "min_games": board.min_games,
            "rows": [
                {
                    "rank": r.rank,
                    "player": r.player,
                    "played": r.played,
                    "won": r.won,
                    "win_rate": round(r.win_rate, 6),
                    "wilson_lower_bound": round(r.wilson, 6),
                }
                for r in board.rows
            ],
            "games": {
                slug: {"played": t.played, "won": t.won, "win_rate": t.win_rate}
                for slug, t in board.totals.items()
            },
        }
    )


class GameRecordOut(Answer):
    game: GameSlug | Literal["all"] = Field(description="A game slug, or `all` together.")
    played: int
    won: int
    win_rate: float | None
    best_seconds: float | None
    fewest_moves: int | None
    current_streak: int
    longest_streak: int


class CasualRecordOut(Answer):
    game: GameSlug
    played: int
    won: int


class RecentGameOut(Answer):
    id: str
    game: GameSlug
    deal: int | None = Field(description="null while sealed (a rated or race game in play).")
    rated: bool
    status: Literal["playing", "won", "lost"]
    moves: int
    seconds: float | None
    started_at: str | None
    link: str | None = Field(description="What the caller may open of it, if anything.")


class RaceRatingOut(Answer):
    rating: float = Field(description="mu - 3 sigma.")
    mu: float
    sigma: float
    races: int


class PlayerAnswer(Answer):
    player: str
    games: list[GameRecordOut] = Field(description="Rated games, per game and `all`.")
    casual: list[CasualRecordOut]
    recent: list[RecentGameOut]
    race_ratings: dict[GameSlug, RaceRatingOut] = Field(
        default_factory=dict, description="Race ratings from rated races, per game."
    )


def player_answer(record: PlayerRecord) -> PlayerAnswer:
    return PlayerAnswer.model_validate(
        {
            "player": record.name,
            "games": [
                {
                    "game": g.game,
                    "played": g.played,
                    "won": g.won,
                    "win_rate": g.win_rate,
                    "best_seconds": seconds_or_none(g.best_ms),
                    "fewest_moves": g.fewest_moves,
                    "current_streak": g.current_streak,
                    "longest_streak": g.longest_streak,
                }
                for g in record.games
            ],
            "casual": [{"game": c.game, "played": c.played, "won": c.won} for c in record.casual],
            "race_ratings": {slug: vars(r) for slug, r in record.race_ratings.items()},
            "recent": [
                {
                    "id": r.id,
                    "game": r.game,
                    "deal": r.deal,
                    "rated": r.rated,
                    "status": r.status,
                    "moves": r.moves,
                    "seconds": seconds_or_none(r.duration_ms),
                    "started_at": iso_or_none(r.when),
                    "link": r.link,
                }
                for r in record.recent
            ],
        }
    )


# -- deals ----------------------------------------------------------------------------------


class FinishedGameOut(Answer):
    id: str
    player: str
    status: Literal["won", "lost"]
    moves: int
    seconds: float | None
    finished_at: str | None
    replay: str | None = Field(description="The replay page, when the caller may open it.")


class Sealed(Answer):
    kind: Literal["rated", "race", "daily", "challenge", "event"] = Field(
        description="What keeps the deal sealed."
    )
    opens_at: str | None = Field(description="ISO 8601 when known; null: when it ends.")
    message: str


class DealAnswer(Answer):
    """A deal's record (contract.md, Statistics). ``winnable`` and ``solution`` only for a
    caller who has finished a game of the deal."""

    game: GameSlug
    deal: int
    played: int
    won: int
    win_rate: float | None
    fewest_moves: FinishedGameOut | None
    fastest: FinishedGameOut | None
    finished: list[FinishedGameOut]
    daily: str | None = Field(description="The date, when this is the deal of the day.")
    daily_results: list[FinishedGameOut] | None
    replays_open: bool
    your_game: str | None = Field(description="The caller's unfinished game of this deal.")
    sealed: Sealed | None = Field(
        default=None,
        description="While a competition on the deal is open: counts only, until it opens.",
    )
    winnable: bool | None = None
    solution: list[str] | None = None


def _finished(g: FinishedGame) -> dict[str, Any]:
    return {
        "id": g.id,
        "player": g.player,
        "status": g.status,
        "moves": g.moves,
        "seconds": seconds_or_none(g.duration_ms),
        "finished_at": iso_or_none(g.finished_at),
        "replay": g.replay_url,
    }


def deal_answer(summary: DealSummary) -> DealAnswer:
    data: dict[str, Any] = {
        "game": summary.rules.slug,
        "deal": summary.number,
        "played": summary.played,
        "won": summary.won,
        "win_rate": summary.win_rate,
        "fewest_moves": _finished(summary.fewest_moves) if summary.fewest_moves else None,
        "fastest": _finished(summary.fastest) if summary.fastest else None,
        "finished": [_finished(g) for g in summary.finished],
        "daily": iso_or_none(summary.daily),
        "daily_results": (
            None if summary.daily_results is None else [_finished(g) for g in summary.daily_results]
        ),
        "replays_open": summary.replays_open,
        "your_game": summary.viewer_game,
    }
    if summary.sealed is not None:
        until = summary.sealed.until
        data["sealed"] = {
            "kind": summary.sealed.kind.value,
            "opens_at": None if until is None else until.isoformat(),
            "message": summary.sealed.message,
        }
    if summary.replays_open:  # the verdict is a spoiler (the same-deal rule)
        data |= {"winnable": summary.winnable, "solution": summary.solution}
    return DealAnswer.model_validate(data)


def deal_json(summary: DealSummary) -> dict[str, Any]:
    """The deal's JSON as sent: the verdict's keys only when the caller may see them."""
    return deal_answer(summary).model_dump(mode="json", by_alias=True, exclude_unset=True)
