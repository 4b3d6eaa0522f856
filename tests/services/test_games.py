"""Games.play, finish and restart: one service call per browser action (issue 12)."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from app.engine import Move
from app.services.errors import IllegalMoveError, NothingToFinish, StaleVersion
from app.services.games import Games
from tests.web.support import log_rows


def _games(app: FastAPI) -> Games:
    games: Games = app.state.services.games
    return games


def _me(api: TestClient) -> str:
    player: dict[str, Any] = api.player  # type: ignore[attr-defined]
    return str(player["id"])


def test_play_with_auto_moves_logs_each_card_as_a_move(app: FastAPI, api: TestClient) -> None:
    games, me = _games(app), _me(api)
    game_id = games.start(me, "corners", 3).record.id
    played = games.play(game_id, me, Move.parse("r3-f3"), 0, auto=True)
    assert str(played.steps[0].move) == "r3-f3"
    assert len(played.steps) == 5  # the player's move and four cards that went up by themselves
    assert played.view.record.version == played.view.record.moves == 5
    assert [row[1] for row in log_rows(app, game_id)] == ["move"] * 5
    touched = {pid for step in played.steps for pid in step.changed}
    assert set(played.changed) == touched
    assert list(played.changed) == [p for p in played.view.rules.pile_ids if p in touched]


def test_play_without_auto_is_one_move(app: FastAPI, api: TestClient) -> None:
    games, me = _games(app), _me(api)
    game_id = games.start(me, "corners", 3).record.id
    played = games.play(game_id, me, Move.parse("r3-f3"), 0, auto=False)
    assert len(played.steps) == 1 and played.view.record.version == 1


def test_the_deal_button_is_decided_on_the_locked_game(app: FastAPI, api: TestClient) -> None:
    games, me = _games(app), _me(api)
    game_id = games.start(me, "corners", 3).record.id
    view = games.play(game_id, me, None, 0, auto=False).view
    assert view.step is not None and str(view.step.move) == "stock-waste"
    # Deal the stock out; then the Deal button turns the waste over.
    while view.stock_count:
        view = games.play(game_id, me, None, view.record.version, auto=False).view
    view = games.play(game_id, me, None, view.record.version, auto=False).view
    assert view.step is not None and view.step.move.source == "waste"
    assert view.step.move.target == "stock" and view.stock_count > 0


def test_play_refuses_as_move_does(app: FastAPI, api: TestClient) -> None:
    games, me = _games(app), _me(api)
    game_id = games.start(me, "corners", 3).record.id
    with pytest.raises(StaleVersion):
        games.play(game_id, me, Move.parse("r3-f3"), 7, auto=True)
    with pytest.raises(IllegalMoveError):
        games.play(game_id, me, Move.parse("r1-r2"), 0, auto=True)
    assert log_rows(app, game_id) == []


def test_finish_refuses_while_a_card_is_hidden(app: FastAPI, api: TestClient) -> None:
    games, me = _games(app), _me(api)
    game_id = games.start(me, "quadrangle", 1).record.id
    with pytest.raises(NothingToFinish):
        games.finish(game_id, me)


def test_restart_resigns_and_deals_the_same_deal_again(app: FastAPI, api: TestClient) -> None:
    games, me = _games(app), _me(api)
    old = games.start(me, "quadrangle", 5).record.id
    new = games.restart(old, me)
    assert new.record.deal == 5 and new.record.id != old
    assert games.get(old, me).record.status == "lost"
