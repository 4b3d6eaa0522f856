"""The JSON API's answers as Pydantic models, and the mapping from the services' values to them.

Every JSON route declares one of these as its ``response_model`` (and its refusals through
:func:`errors_of`), so ``/openapi.json`` and ``/docs`` show every shape a client gets. The
services return dataclasses; only this module knows what the API calls their fields.

Speed: a game state is the answer of every move, so it is built as plain data (a dict shaped as
:class:`GameState`) and written by pydantic-core's ``to_json``: 21 µs a state against 31 µs for
the services' old ``to_json()`` and ``json.dumps``, where building the models would cost 50 µs
validated or 110 µs with ``model_construct`` (bench/state_json.py, bench/RESULTS.md "API
schema"). The route returns those bytes, so FastAPI neither validates nor encodes them again;
that the data matches the model is the tests' job (every state the test clients receive is
validated against it, tests/web/answers.py, and Schemathesis checks every answer against the
schema). The other answers are rarer and are built as validated models.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, get_args

from fastapi.responses import Response
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, WithJsonSchema
from pydantic_core import to_json

from app.engine import GAMES
from app.services.arenas import ArenaStanding, ArenaView
from app.services.challenge import ChallengeStatus, Standings
from app.services.deals import DealSummary, FinishedGame
from app.services.game_views import GameView
from app.services.leaderboard import Board, PlayerRecord
from app.services.race_queue import QueueState
from app.services.ratings import RatingRow
from app.services.rooms import RoomView

GameSlug = Literal["quadrangle", "quadruple-interchange", "corners", "castles-end", "patriarchs"]
"""The five games (contract.md): a request naming any other is refused with 422."""
assert set(get_args(GameSlug)) == set(GAMES), "GameSlug must list exactly the registered games"

# Query parameters that choose a board also take "all" (every game together) and "" (the
# same: an HTML form's empty choice).
BoardGame = Literal[
    "quadrangle", "quadruple-interchange", "corners", "castles-end", "patriarchs", "all", ""
]
BoardPeriod = Literal["all", "30d", "7d", ""]

_RANKS = "A23456789TJQK"


def _whole(value: Any) -> Any:
    """JSON Schema's "integer" is any number with no fraction: 651.0 is one, 651.5, "651" and
    true are not. Pydantic's strict int refuses the first; its lax int takes the last two."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise ValueError("Input should be a whole number")


WholeNumber = Annotated[int, BeforeValidator(_whole)]
"""An integer in a request body, as the schema says it (see :func:`_whole`)."""


def whole_between(low: int, high: int) -> Any:
    """A :data:`WholeNumber` from ``low`` to ``high``. Its schema is spelled out: inside an
    optional field pydantic would write the bounds of a validated type as ``ge``/``le``, which
    JSON Schema does not know (so a client's generator would send 0 for a deal)."""
    return Annotated[
        int,
        BeforeValidator(_whole),
        Field(ge=low, le=high),
        WithJsonSchema({"type": "integer", "minimum": low, "maximum": high}),
    ]


PILE_ID = r"^(stock|waste|[ftr][1-9][0-9]?)$"
"""A pile id as rules.md §0 writes them; one the game does not have is still a 422."""


class Answer(BaseModel):
    """Base of the answers: field names are the JSON names (``from`` needs an alias)."""

    # additionalProperties: false in the schema: an answer has exactly the fields it documents.
    model_config = ConfigDict(populate_by_name=True, extra="forbid")


# -- errors ---------------------------------------------------------------------------------


class ErrorDetail(Answer):
    model_config = ConfigDict(extra="allow")  # a few refusals add facts (deal_in_play: game)

    code: str = Field(description="Machine-readable: illegal_move, stale_version, …")
    message: str = Field(description="Why, in a player's words.")
    game: str | None = Field(
        default=None, description="deal_in_play only: the id of the game of that deal in play."
    )
    opens_at: str | None = Field(
        default=None,
        description="deal_sealed only, when a time is known: when the seal lifts (ISO 8601).",
    )


class ErrorAnswer(Answer):
    """Every refusal under /api: ``{"error": {"code", "message"}}``."""

    error: ErrorDetail


_WHY = {
    401: "No bearer token, or one that is not valid (`unauthenticated`).",
    403: "Not the caller's to do or see (`forbidden`, `same_deal_in_play`, "
    "`deal_not_finished`, `deal_sealed`, `race_in_play`, `not_a_member`).",
    404: "Nothing by that id or name (`not_found`).",
    409: "A conflict with the game or room as it is now (`stale_version`, `game_over`, "
    "`undo_unavailable`, `race_not_started`, `deal_in_play`, `no_certified_deals`, "
    "`game_in_play`, `room_full`, `room_closed`, `too_many_rooms`, `race_running`, "
    "`already_played`, `not_in_challenge`).",
    413: "The request body is too large (`payload_too_large`).",
    422: "A malformed request (`invalid_request`), an illegal move (`illegal_move`) or a reused "
    "Idempotency-Key (`idempotency_key_reused`).",
    429: "Too many requests (`rate_limited`); wait `Retry-After` seconds.",
    431: "Request headers too large (`headers_too_large`).",
    503: "The database is unavailable or the server busy (`unavailable`); try again after "
    "`Retry-After` seconds.",
}
# Refusals any API route may give: the size and admission checks run before every route.
COMMON = (413, 422, 431, 503)


def errors_of(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """The ``responses`` of a route: its refusals (and the common ones) as ErrorAnswer."""
    return {
        status: {"model": ErrorAnswer, "description": _WHY[status]}
        for status in sorted({*statuses, *COMMON})
    }


# -- players --------------------------------------------------------------------------------


class PlayerRef(Answer):
    id: str
    name: str


class PlayerCreated(Answer):
    id: str
    name: str
    token: str = Field(description="Send it as `Authorization: Bearer <token>`.")


# -- game state -----------------------------------------------------------------------------


class Pile(Answer):
    """A pile, bottom → top. In play the stock is only a count and face-down cards are null;
    a finished game shown whole gives the stock's cards too."""

    count: int | None = Field(default=None, description="stock only: how many cards")
    cards: list[str | None] | None = Field(
        default=None, description="card codes (rules.md §0); null for a face-down card"
    )


class LegalMove(Answer):
    from_: str = Field(alias="from")
    to: str
    count: int


class GameState(Answer):
    """A game as the caller may see it (contract.md, Game state; v2 fields included)."""

    id: str
    game: GameSlug
    deal: int | None = Field(
        description="The deal number; null while it is sealed (a rated game in play, a game of "
        "a race still on: contract v3)."
    )
    rules: str
    rated: bool = Field(description="The server drew the deal: it counts on the leaderboards.")
    player: PlayerRef
    status: Literal["playing", "won", "lost"]
    version: int
    moves: int
    undos: int
    can_undo: bool
    base_rank: str | None
    redeals_left: int | None
    on_foundations: int
    cards: int
    started_at: str | None = Field(description="ISO 8601, the first move")
    active_ms: int
    finished_at: str | None
    piles: dict[str, Pile]
    legal_moves: list[LegalMove]
    max_moves: int | None = Field(default=None, description="The cap on moves per game.")
    ended_by: Literal["move_limit"] | None = Field(
        default=None, description="Only when the move cap ended the game."
    )
    log: list[str] | None = Field(
        default=None, description="A finished game's moves, for those who may see them."
    )
    deal_winnable: bool | None = Field(
        default=None, description="Finished games only: the solver's verdict (null: undecided)."
    )


def game_state_data(view: GameView) -> dict[str, Any]:
    """The state of ``view`` as the API shows it, as :class:`GameState` describes it.

    Built as plain data, not as models: see the module doc (the test clients validate every
    state the suite receives against GameState, tests/web/answers.py)."""
    g, rules = view.record, view.rules
    base = rules.base_rank(view.state)
    data: dict[str, Any] = {
        "id": g.id,
        "game": g.game,
        "deal": view.deal_number,
        "rules": g.rules,
        "rated": g.rated,
        "player": {"id": g.player_id, "name": view.player_name},
        "status": g.status,
        "version": g.version,
        "moves": g.moves,
        "undos": g.undos,
        "can_undo": g.can_undo and not view.finished,
        "base_rank": None if base is None else _RANKS[base - 1],
        "redeals_left": rules.redeals_left(view.state),
        "on_foundations": rules.on_foundations(view.state),
        "cards": rules.cards,
        "started_at": _iso(g.first_move_at),
        "active_ms": g.active_ms,
        "finished_at": _iso(g.finished_at),
        "piles": view.piles(),
        "legal_moves": [
            {"from": m.source, "to": m.target, "count": m.count} for m in view.legal_moves
        ],
    }
    if view.max_moves is not None:
        data["max_moves"] = view.max_moves
        if view.move_limit_reached:
            data["ended_by"] = "move_limit"
    if view.log is not None:
        data["log"] = view.log
    if view.finished:
        data["deal_winnable"] = view.deal_winnable
    return data


def _iso(value: Any) -> str | None:
    return None if value is None else str(value.isoformat())


def _seconds(ms: int | None) -> float | None:
    return None if ms is None else ms / 1000


def game_state_json(view: GameView) -> bytes:
    """The JSON bytes of a game state: what every state answer sends, and what an
    Idempotency-Key's first answer stores."""
    return to_json(game_state_data(view))


def answer_text(view: GameView) -> str:
    """:func:`game_state_json` as text: what the move log stores for an Idempotency-Key."""
    return game_state_json(view).decode()


class JSONBytes(Response):
    """An answer already serialized (by :func:`game_state_json` or stored): sent as it is."""

    media_type = "application/json"


def state_response(view: GameView, status: int = 200) -> JSONBytes:
    return JSONBytes(game_state_json(view), status_code=status)


def answer(model: BaseModel, status: int = 200, *, exclude_unset: bool = False) -> JSONBytes:
    """A model's JSON, written by pydantic-core at once (FastAPI's encoder would walk it
    again in Python: a millisecond or more on a 100-row leaderboard)."""
    body = model.model_dump_json(by_alias=True, exclude_unset=exclude_unset)
    return JSONBytes(body.encode(), status_code=status)


# -- hints ----------------------------------------------------------------------------------


class MoveOut(Answer):
    from_: str = Field(alias="from")
    to: str
    count: int


class HintAnswer(Answer):
    move: MoveOut | None = Field(description="The move to play, or null.")
    outcome: Literal["winnable", "lost", "unknown", "estimate"]
    exact: bool = Field(description="true: nothing is hidden and the outcome is the solver's")
    message: str
    chance: float | None = Field(
        default=None,
        description="estimate only: the share (0.0-1.0) of sampled arrangements of the hidden "
        "cards, consistent with everything the player has seen, that the search wins",
    )
    version: int = Field(description="the game version the hint is for")
    hints_used: int
    casual: bool = Field(description="a hinted game is casual from the first hint on")


class SlipOut(Answer):
    ply: int = Field(description="1-based number of the move (in force) that lost the deal")
    move: MoveOut = Field(description="the move played there")
    better: MoveOut = Field(description="a move from the same position that keeps it winnable")


class AnalysisAnswer(Answer):
    deal_winnable: bool | None = Field(description="the deal, every card known; null: undecided")
    slip: SlipOut | None = Field(
        description="the first move after which the game could no longer be won, from a "
        "position that could; null when won, never winnable, or undecided"
    )
    knowing: Literal["visible", "all"] = Field(description="what the analysis knew: all cards")
    decided: bool = Field(
        description="false: a search was cut short by its budget; the analysis is undecided"
    )


# -- replays and the deal of the day --------------------------------------------------------


class ReplayAnswer(Answer):
    step: int = Field(description="Moves of the log applied.")
    moves: list[str] = Field(description="The whole move log, in notation.")
    game: GameState = Field(description="The game after `step` moves, every card shown.")


class ChallengeOut(Answer):
    date: str = Field(description="The UTC date of the challenge, ISO 8601.")
    starts_at: str = Field(description="ISO 8601: the UTC day's start.")
    ends_at: str = Field(description="ISO 8601: the UTC day's end (the seal lifts then).")
    your_game: str | None = Field(description="The caller's challenge game today, if started.")
    streak: int = Field(description="Consecutive UTC days with a win of this challenge.")


class DailyAnswer(Answer):
    date: str = Field(description="The UTC date, ISO 8601.")
    deals: dict[GameSlug, int] = Field(description="Today's deal number of each game.")
    challenge: dict[GameSlug, ChallengeOut] = Field(
        description="Each game's daily challenge for the caller (a deal of their own)."
    )


class StandingOut(Answer):
    rank: int | None = Field(description="Wins only, by moves over par then active time.")
    player: str
    status: Literal["playing", "won", "lost"]
    moves: int
    par: int
    over_par: int | None = Field(description="Moves over par, for a win.")
    active_ms: int
    game: str | None = Field(
        description="The game's id: once the day is over, for the day's best games (replays)."
    )


class ChallengeStandingsAnswer(Answer):
    game: GameSlug
    date: str
    ends_at: str
    final: bool = Field(description="The day is over: the standings are final.")
    standings: list[StandingOut]


def challenge_out(status: ChallengeStatus) -> dict[str, Any]:
    return {
        "date": status.day.isoformat(),
        "starts_at": status.starts_at.isoformat(),
        "ends_at": status.ends_at.isoformat(),
        "your_game": status.your_game,
        "streak": status.streak,
    }


def challenge_standings(standings: Standings) -> ChallengeStandingsAnswer:
    return ChallengeStandingsAnswer.model_validate(
        {
            "game": standings.game,
            "date": standings.day.isoformat(),
            "ends_at": standings.ends_at.isoformat(),
            "final": standings.closed,
            "standings": [
                {
                    "rank": r.rank,
                    "player": r.player,
                    "status": r.status,
                    "moves": r.moves,
                    "par": r.par,
                    "over_par": r.over_par,
                    "active_ms": r.active_ms,
                    "game": r.game_id,
                }
                for r in standings.rows
            ],
        }
    )


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


class RaceBoardRow(Answer):
    rank: int
    player: str
    rating: float
    mu: float
    sigma: float
    races: int


class RaceBoardAnswer(Answer):
    game: GameSlug
    board: Literal["races"]
    rows: list[RaceBoardRow]


def race_board_answer(slug: str, rows: list[RatingRow]) -> RaceBoardAnswer:
    return RaceBoardAnswer.model_validate(
        {"game": slug, "board": "races", "rows": [vars(r) for r in rows]}
    )


class QueueAnswer(Answer):
    queued: bool = Field(description="Waiting for a race (false once one is formed).")
    game: GameSlug | None
    joined_at: str | None
    waiting: int = Field(description="Players waiting for this game's race now.")
    room: RoomAnswer | None = Field(description="The rated race formed for the caller.")


def queue_answer(state: QueueState) -> QueueAnswer:
    return QueueAnswer.model_validate(
        {
            "queued": state.queued,
            "game": state.game,
            "joined_at": None if state.joined_at is None else state.joined_at.isoformat(),
            "waiting": state.waiting,
            "room": None if state.room is None else room_answer(state.room).model_dump(),
        }
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
                    "best_seconds": _seconds(g.best_ms),
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
                    "seconds": _seconds(r.duration_ms),
                    "started_at": _iso(r.when),
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
        "seconds": _seconds(g.duration_ms),
        "finished_at": _iso(g.finished_at),
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
        "daily": _iso(summary.daily),
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


# -- rooms and races ------------------------------------------------------------------------


class Standing(Answer):
    place: int
    player: str
    game: str = Field(description="The racer's game id.")
    status: Literal["playing", "won", "lost"]
    moves: int
    foundation_cards: int
    time_ms: int | None = Field(description="From the start to the win.")


class RaceOut(Answer):
    number: int = Field(description="The race's number in its room.")
    game: GameSlug
    deal: int | None = Field(description="The deal number: null until the race ends (sealed).")
    starts_at: str = Field(description="ISO 8601: moves before it get 409 race_not_started.")
    status: Literal["running", "finished"]
    finished_at: str | None
    games: dict[str, str] = Field(description="Player name → game id.")
    standings: list[Standing]
    rated: bool = Field(
        default=False, description="Formed by the server from the race queue: it is rated."
    )


class RoomAnswer(Answer):
    code: str
    url: str = Field(description="The shared link, /rooms/{code}.")
    game: GameSlug
    status: Literal["open", "racing", "closed"]
    players: list[PlayerRef] = Field(description="Members, in the order they joined.")
    race: RaceOut | None = Field(description="The latest race, if any.")


def room_answer(room: RoomView) -> RoomAnswer:
    return RoomAnswer.model_validate(
        {
            "code": room.code,
            "url": room.url,
            "game": room.game,
            "status": room.status,
            "players": room.players,
            "race": room.race,
        }
    )


# -- events (arenas) --------------------------------------------------------------------------


class EventOut(Answer):
    id: int
    game: GameSlug
    starts_at: str
    ends_at: str
    status: Literal["scheduled", "running", "finished"]
    players: int


class EventsAnswer(Answer):
    events: list[EventOut]


class EventStandingOut(Answer):
    rank: int
    player: str
    points: int
    wins: int
    games: int = Field(description="Finished games.")
    active_ms: int
    streak: int = Field(description="Wins in a row now: the next win scores double from 2.")


class EventStandingsAnswer(Answer):
    event: EventOut
    standings: list[EventStandingOut]


def event_out(view: ArenaView) -> dict[str, Any]:
    return {
        "id": view.id,
        "game": view.game,
        "starts_at": view.starts_at.isoformat(),
        "ends_at": view.ends_at.isoformat(),
        "status": view.status,
        "players": view.players,
    }


def event_standings_answer(view: ArenaView, rows: list[ArenaStanding]) -> EventStandingsAnswer:
    return EventStandingsAnswer.model_validate(
        {"event": event_out(view), "standings": [vars(r) for r in rows]}
    )
