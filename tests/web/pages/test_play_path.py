"""The browser move path reads top to bottom (issue 12): each board action of app/web/pages/play.py
makes one call to the game service; the rest (which card goes up by itself, what the Deal
button means, the words) is the service's and the engine's. The layers themselves are import
rules in pyproject.toml, checked by lint-imports."""

from __future__ import annotations

import ast
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio.to_thread
import pytest
from fastapi.testclient import TestClient

from tests.web.support import new_game, post

PLAY = Path(__file__).resolve().parents[3] / "app" / "web" / "pages" / "play.py"
# Move, undo and resign await the service on the event loop (issue 26).
ACTIONS = {"move": "play_async", "undo": "undo_async", "resign": "resign_async"}
ACTIONS.update(finish="finish", restart="restart")
Handler = ast.FunctionDef | ast.AsyncFunctionDef


def _functions() -> dict[str, Handler]:
    tree = ast.parse(PLAY.read_text(encoding="utf-8"))
    return {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}


def _service_calls(function: Handler) -> list[str]:
    """The ``games.<method>(…)`` calls a handler makes itself (not those of the helpers that
    answer a refusal by reading the board again)."""
    return [
        node.func.attr
        for node in ast.walk(function)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "games"
    ]


@pytest.mark.parametrize(("handler", "service"), sorted(ACTIONS.items()))
def test_each_board_action_is_one_service_call(handler: str, service: str) -> None:
    assert _service_calls(_functions()[handler]) == [service]


def test_the_web_layer_never_reads_the_engine_state_in_play() -> None:
    """The handlers work from what the service returns; ``.state`` (the unmasked engine
    state) is not read anywhere in play.py."""
    source = PLAY.read_text(encoding="utf-8")
    assert ".state" not in source.replace("request.state", "").replace("app.web.state", "")


def test_browser_moves_on_postgres_take_no_thread(
    client: TestClient, backend: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 26: the board's move (with its auto-moves), undo and resign wait for PostgreSQL
    on the event loop, their dependencies too; only a refusal's board and a won game's records
    are read in a thread."""
    if backend != "postgres":
        pytest.skip("SQLite's moves stay in the thread pool")
    game_id = new_game(client, "quadrangle", 1)
    assert client.get(f"/games/{game_id}").status_code == 200
    hops: list[str] = []
    original = anyio.to_thread.run_sync

    async def hopping(func: Callable[..., Any], *args: Any, **kw: Any) -> Any:
        named = getattr(func, "func", func)  # starlette's run_in_threadpool: a partial
        hops.append(getattr(named, "__qualname__", repr(named)))
        return await original(func, *args, **kw)

    monkeypatch.setattr(anyio.to_thread, "run_sync", hopping)
    players = client.app.state.services.players  # type: ignore[attr-defined]
    players._session_versions.clear()  # the session check reads the database again
    moved = post(client, f"/games/{game_id}/moves", {"move": "t5-t9", "version": "0"})
    assert moved.status_code == 200
    assert players._session_versions  # it did
    assert post(client, f"/games/{game_id}/undo", {"version": "1"}).status_code == 200
    assert hops == []
    stale = post(client, f"/games/{game_id}/moves", {"move": "t5-t9", "version": "0"})
    assert stale.status_code == 409 and 'id="game-status"' in stale.text
    assert hops == ["_refused"]  # the current board, read again to show the truth
