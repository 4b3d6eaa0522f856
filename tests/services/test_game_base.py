"""What every game use case shares (app/services/game_base.py): a game's status from its legal
moves, loading a game row, the owner check, and the view of a game, with what a finished game
shows besides its board (its log and verdict, unless its deal's seal masks them)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import cast

import pytest
from sqlalchemy import insert

from app.db.models import DealVerdict
from app.engine import Move, Ruleset, State, Status, get_ruleset
from app.services.errors import Forbidden, NotFound
from app.services.game_base import GameBase, initial_status, status_of
from app.services.game_views import GameView
from tests.services.svc1_support import KEY, Db, open_db, start_rated


@pytest.fixture(scope="module")
def sqlite(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Db]:
    yield from open_db(tmp_path_factory, "game_base")


@pytest.fixture()
def svc(sqlite: Db) -> Db:
    sqlite.empty()
    return sqlite


def base(svc: Db, max_moves: int = 2000, idle_cap_ms: int = 120_000) -> GameBase:
    sealer = svc.games().sealer
    return GameBase(svc.sessions, KEY, max_moves, idle_cap_ms, store=svc.store, sealer=sealer)


class Rules:
    """Stands in for a ruleset: only whether a position is won, and its legal moves."""

    def __init__(self, won: bool, legal: list[Move]) -> None:
        self.won, self.legal = won, legal

    def is_won(self, state: State) -> bool:
        return self.won

    def legal_moves(self, state: State) -> list[Move]:
        return self.legal


def rules(won: bool = False, legal: list[Move] | None = None) -> Ruleset:
    return cast(Ruleset, Rules(won, legal or []))


STATE = cast(State, None)
MOVE = Move.parse("t1-t2")


def test_a_won_position_is_won_whatever_is_left_to_play() -> None:
    assert status_of(rules(won=True), STATE, [MOVE], True) == Status.WON
    assert status_of(rules(won=True), STATE, [], False) == Status.WON


def test_no_legal_move_is_lost_unless_the_last_step_can_be_undone() -> None:
    assert status_of(rules(), STATE, [MOVE], False) == Status.PLAYING
    assert status_of(rules(), STATE, [], True) == Status.PLAYING  # contract v2, "No moves left"
    assert status_of(rules(), STATE, [], False) == Status.LOST


def test_a_deal_is_in_play_or_lost_at_once() -> None:
    assert initial_status(rules(legal=[MOVE]), STATE) == Status.PLAYING
    assert initial_status(rules(), STATE) == Status.LOST  # nothing to undo yet
    quadrangle = get_ruleset("quadrangle")
    assert initial_status(quadrangle, quadrangle.deal(1, KEY)) == Status.PLAYING


def test_a_game_row_is_loaded_with_its_players_name(svc: Db) -> None:
    me = svc.player("Loader")
    started = svc.games().start(me, "corners", 3)
    with svc.sessions() as db:
        record, name = base(svc)._load(db, started.record.id)
    assert name == "Loader"
    assert record.id == started.record.id and record.player_id == me
    assert (record.game, record.deal, record.version, record.status) == (
        "corners", 3, 0, Status.PLAYING
    )  # fmt: skip
    assert record.state == started.record.state


@pytest.mark.parametrize("game_id", ["no-such-game", "bad\x00id", "x" * 200])
def test_no_game_is_not_found(svc: Db, game_id: str) -> None:
    with svc.sessions() as db, pytest.raises(NotFound):
        base(svc)._load(db, game_id)


def test_only_the_owner_passes_the_owner_check(svc: Db) -> None:
    me = svc.player()
    record = svc.games().start(me, "corners", 3).record
    GameBase._check_owner(record, me)
    for other in ("someone-else", None):
        with pytest.raises(Forbidden):
            GameBase._check_owner(record, other)


def test_a_view_carries_the_services_caps(svc: Db) -> None:
    me = svc.player()
    game_id = svc.games().start(me, "quadrangle", 5).record.id
    games = base(svc, max_moves=300, idle_cap_ms=9_000)
    with svc.sessions() as db:
        record, name = games._load(db, game_id)
        view = games._view(db, record, name)
    assert (view.max_moves, view.idle_cap_ms) == (300, 9_000)
    assert view.legal_moves == view.rules.legal_moves(view.state) != []
    assert view.log is None and view.seal is None and not view.masked


def finished_view(svc: Db, game_id: str) -> GameView:
    games = base(svc)
    with svc.sessions() as db:
        record, name = games._load(db, game_id)
        return games._view(db, record, name)


def test_a_finished_game_shows_its_log_and_its_deals_verdict(svc: Db) -> None:
    me = svc.player()
    games = svc.games()
    view = games.start(me, "quadrangle", 5)
    first = view.legal_moves[0]
    games.move(view.record.id, me, first, 0)
    games.resign(view.record.id, me)
    with svc.sessions.begin() as db:
        db.execute(
            insert(DealVerdict).values(
                game="quadrangle", deal=5, outcome="lost", solution=None, positions=10,
                certified=False, created_at=datetime(2026, 1, 1, tzinfo=UTC),
            )
        )  # fmt: skip
    shown = finished_view(svc, view.record.id)
    assert shown.legal_moves == []
    assert shown.log == [str(first)]
    assert shown.deal_winnable is False
    assert shown.seal is None and shown.shows_everything


def test_a_finished_game_of_a_sealed_deal_is_masked(svc: Db) -> None:
    me, rival = svc.player(), svc.player()
    games = svc.games()
    mine = games.start(me, "quadrangle", 8)
    games.resign(mine.record.id, me)
    start_rated(games, rival, "quadrangle", 8)  # a rated game of the deal is in play
    shown = finished_view(svc, mine.record.id)
    assert shown.seal is not None and shown.seal.kind == "rated"
    assert shown.masked and not shown.shows_everything
    assert shown.log is None and shown.deal_winnable is None


def test_answers_must_be_wired_by_the_bootstrap(svc: Db) -> None:
    me = svc.player()
    view = svc.games().start(me, "corners", 3)
    with pytest.raises(RuntimeError, match="bootstrap"):
        base(svc).answer_json(view)
