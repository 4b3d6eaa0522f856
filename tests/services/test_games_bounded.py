"""Bounded work per request: the cap on moves per game, and replays and undos that start from
the nearest snapshot in the move log, so their cost does not grow with the game's length (the
budget is counted in engine moves replayed, not timed)."""

from __future__ import annotations

import random
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import select

from app.db.models import MoveRecord
from app.engine import Move, Ruleset, State, dumps, get_ruleset
from app.services.errors import UndoUnavailable
from app.services.games import Games
from app.services.move_log import SNAPSHOT_EVERY
from tests.web.support import error_code, move, new_game, post, start


def owner(games: Games, game_id: str) -> str:
    """Who may replay a game without having finished its deal: its owner."""
    return games.get(game_id, None).record.player_id


def _play_long(games: Games, player: str, moves: int, seed: int) -> str:
    """A Quadrangle game of about ``moves`` moves (it shuffles cards between tableau piles for
    ever), with undos here and there."""
    rng = random.Random(seed)
    view = games.start(player, "quadrangle", 11)
    while view.record.moves - view.record.undos < moves and not view.finished:
        if view.record.can_undo and rng.random() < 0.15:
            try:
                view = games.undo(view.record.id, player).view
                continue
            except UndoUnavailable:
                pass
        choices = [
            m for m in view.legal_moves if not m.target.startswith("f") and m.source != "stock"
        ] or list(view.legal_moves)
        step = rng.choice(choices)
        view = games.move(view.record.id, player, step, view.record.version).view
    return view.record.id


@pytest.fixture()
def long_game(api: TestClient, app: FastAPI) -> str:
    games: Games = app.state.services.games
    me: str = api.player["id"]  # type: ignore[attr-defined]  # set by the api fixture
    game_id = _play_long(games, me, 3 * SNAPSHOT_EVERY + 20, seed=5)
    if games.get(game_id, me).record.status == "playing":
        games.resign(game_id, me)
    return game_id


def _from_the_deal(games: Games, game_id: str, n: int) -> State:
    view = games.replay_view(game_id, None, owner(games, game_id))
    rules = get_ruleset(view.view.record.game)
    start_state = rules.deal(view.view.record.deal, games.deal_key)
    return Ruleset.replay(rules, start_state, [Move.parse(m) for m in view.moves[:n]])


def test_snapshots_are_stored_every_64_moves_in_force(app: FastAPI, long_game: str) -> None:
    games: Games = app.state.services.games
    with app.state.services.sessions() as db:
        rows = db.execute(
            select(MoveRecord.seq, MoveRecord.snapshot)
            .where(MoveRecord.game_id == long_game, MoveRecord.snapshot.is_not(None))
            .order_by(MoveRecord.seq)
        ).all()
    assert len(rows) >= 3
    moves = games.replay_view(long_game, None, owner(games, long_game)).moves
    assert len(moves) >= 3 * SNAPSHOT_EVERY
    for d in (SNAPSHOT_EVERY, 2 * SNAPSHOT_EVERY, 3 * SNAPSHOT_EVERY):
        assert dumps(_from_the_deal(games, long_game, d)) in {r.snapshot for r in rows}


def test_any_replay_step_replays_fewer_than_64_moves(
    app: FastAPI, long_game: str, replayed: list[int]
) -> None:
    games: Games = app.state.services.games
    total = len(games.replay_view(long_game, None, owner(games, long_game)).moves)
    for n in [0, 1, 63, 64, 65, 127, 128, 129, total - 1, total]:
        replayed.clear()
        view = games.replay_view(long_game, n, owner(games, long_game))
        assert max(replayed, default=0) < SNAPSHOT_EVERY, (n, replayed)
        assert view.view.state == _from_the_deal(games, long_game, n)
        replayed.clear()
        # A finished game's states are kept.
        again = games.replay_view(long_game, n, owner(games, long_game))
        assert replayed == [] and again.view.state == view.view.state


def test_an_undo_replays_fewer_than_64_moves(
    api: TestClient, app: FastAPI, replayed: list[int]
) -> None:
    games: Games = app.state.services.games
    player = api.player["id"]  # type: ignore[attr-defined]
    rng = random.Random(9)
    game_id = _play_long(games, player, 2 * SNAPSHOT_EVERY + 10, seed=9)
    checked = 0
    view = games.get(game_id, player)
    while not view.finished and checked < 5:
        if view.record.can_undo:
            replayed.clear()
            undone = games.undo(game_id, player).view
            assert max(replayed) < SNAPSHOT_EVERY
            stored, rebuilt = games.replay(game_id)
            assert stored == rebuilt == undone.state
            checked += 1
        legal = games.get(game_id, player).legal_moves
        view = games.move(
            game_id, player, rng.choice(legal), games.get(game_id, player).record.version
        ).view
    assert checked


def test_the_move_cap_ends_the_game_as_lost_and_says_so(api: TestClient, app: FastAPI) -> None:
    games: Games = app.state.services.games
    cap, games.max_moves = games.max_moves, 3
    try:
        game = start(api, "castles-end", 12)
        data: dict[str, Any] = game
        assert data["max_moves"] == 3
        for _ in range(3):
            m = data["legal_moves"][0]
            response = move(api, game["id"], f"{m['from']}-{m['to']}", data["version"])
            assert response.status_code == 200, response.text
            data = response.json()
        assert data["status"] == "lost" and data["ended_by"] == "move_limit"
        assert data["moves"] == 3 and data["legal_moves"] == []
        refused = move(api, game["id"], "t1-t2", data["version"])
        assert error_code(refused, 409) == "game_over"
        assert "limit of 3 moves" in refused.json()["error"]["message"]
        assert api.get(f"/api/games/{game['id']}/replay").status_code == 200
    finally:
        games.max_moves = cap


def test_the_browser_is_told_plainly_about_the_move_cap(client: TestClient, app: FastAPI) -> None:
    games: Games = app.state.services.games
    cap, games.max_moves = games.max_moves, 1
    try:
        game_id = new_game(client, "castles-end", 13)
        first = app.state.services.games.get(game_id, None).legal_moves[0]
        answer = post(client, f"/games/{game_id}/moves", {"move": str(first), "version": "0"})
        assert answer.status_code == 200, answer.text
        assert "the most a game may have: the game is over and counts as lost" in answer.text
    finally:
        games.max_moves = cap
