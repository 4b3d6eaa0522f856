"""Serialization benchmark: the JSON of a game state, the answer of every API move.

    .venv/bin/python bench/state_json.py [--states N] [--seed S]

Times, per state, four ways of writing the same JSON: the hand-built dict and ``json.dumps``
that the services' ``GameView.to_json`` did until issue 12 (copied here as the reference); the
web layer's :func:`app.web.schemas.game_state_json` (the same dict, written by pydantic-core's
``to_json``); the :class:`GameState` model validated from that dict and dumped (what returning
the dict through ``response_model`` would cost); and the models built without validation
(``model_construct``, nested models too) and dumped. The states are random playouts of every
game, masked as in play. It checks that all four agree on the JSON's content, and prints a
Markdown table of the median per state.

A second table times what the engine does for every move besides the answer, on the same
states: the state's stored text written (``dumps``, the game row's UPDATE) and read back
(``loads``, the move's locked row) and the player's view of every pile (``public_view``). Run
from another checkout (``cd <checkout> && PYTHONPATH=. python <this file>``) it times that
checkout's engine, for before and after.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import statistics
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from app.db.game_rows import GameRow
from app.engine import GAMES, MAX_DEAL, RULES_VERSION, dumps, loads
from app.services.game_views import GameView
from app.web.api.schemas.base import PlayerRef
from app.web.api.schemas.game_state import (
    GameState,
    LegalMove,
    Pile,
    game_state_data,
    game_state_json,
    pile_data,
)

KEY = b"bench-key"


def reference_json(view: GameView) -> bytes:
    """GameView.to_json + json.dumps, as they were before issue 12."""
    g, rules = view.record, view.rules
    base = rules.base_rank(view.state)
    data: dict[str, Any] = {
        "id": g.id,
        "game": g.game,
        "deal": view.deal_number,  # sealed (null) while a rated game is in play: contract v3
        "rules": g.rules,
        "rated": g.rated,
        "player": {"id": g.player_id, "name": view.player_name},
        "status": g.status,
        "version": g.version,
        "moves": g.moves,
        "undos": g.undos,
        "can_undo": g.can_undo and not view.finished,
        "base_rank": None if base is None else "A23456789TJQK"[base - 1],
        "redeals_left": rules.redeals_left(view.state),
        "on_foundations": rules.on_foundations(view.state),
        "cards": rules.cards,
        "started_at": None if g.first_move_at is None else g.first_move_at.isoformat(),
        "active_ms": g.active_ms,
        "finished_at": None if g.finished_at is None else g.finished_at.isoformat(),
        "piles": {pid: pile_data(pid, pile) for pid, pile in view.piles().items()},
        "legal_moves": [
            {"from": m.source, "to": m.target, "count": m.count} for m in view.legal_moves
        ],
    }
    if view.max_moves is not None:
        data["max_moves"] = view.max_moves
    return json.dumps(data).encode()


def validated_json(view: GameView) -> bytes:
    model = GameState.model_validate(game_state_data(view))
    return model.model_dump_json(by_alias=True, exclude_unset=True).encode()


def constructed_json(view: GameView) -> bytes:
    data = game_state_data(view)
    data["player"] = PlayerRef.model_construct(None, **data["player"])
    data["piles"] = {pid: Pile.model_construct(None, **p) for pid, p in data["piles"].items()}
    data["legal_moves"] = [
        LegalMove.model_construct(None, from_=m["from"], to=m["to"], count=m["count"])
        for m in data["legal_moves"]
    ]
    model = GameState.model_construct(None, **data)
    return model.model_dump_json(by_alias=True, exclude_unset=True).encode()


def views(count: int, rng: random.Random) -> list[GameView]:
    out = []
    stamp = datetime.now(UTC)
    slugs = list(GAMES)
    for i in range(count):
        rules = GAMES[slugs[i % len(slugs)]]
        state = rules.deal(rng.randint(1, MAX_DEAL), KEY)
        for _ in range(rng.randint(0, 200)):
            legal = rules.legal_moves(state)
            if not legal:
                break
            state = rules.apply(state, rng.choice(legal))
        row = GameRow.dealt(
            f"g{i}", "p", rules.slug, 1, dumps(state), "playing", stamp,
            rules=RULES_VERSION, rated=True,
        )  # fmt: skip
        row.first_move_at = stamp
        out.append(GameView(row, "Player", rules, state, rules.legal_moves(state), max_moves=2000))
    return out


def timed(encode: Callable[[GameView], Any], states: list[GameView], rounds: int) -> float:
    """The median over the states of the best of ``rounds`` timings, in µs."""
    per_state = []
    for view in states:
        best = float("inf")
        for _ in range(rounds):
            t0 = time.perf_counter_ns()
            encode(view)
            best = min(best, time.perf_counter_ns() - t0)
        per_state.append(best / 1000)
    return statistics.median(per_state)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--states", type=int, default=500)
    parser.add_argument("--seed", type=int, default=12)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    states = views(args.states, random.Random(args.seed))
    for view in states:
        assert json.loads(reference_json(view)) == json.loads(game_state_json(view))
        assert json.loads(validated_json(view)) == json.loads(game_state_json(view))
        assert json.loads(constructed_json(view)) == json.loads(game_state_json(view))
    legal = statistics.median(len(v.legal_moves) for v in states)
    print(f"{platform.node()}, Python {platform.python_version()}, {len(states)} states, "
          f"median {legal} legal moves")  # fmt: skip
    print("| Encoder | Median per state (µs) |\n| --- | ---: |")
    for name, encode in (
        ("dict + json.dumps (before)", reference_json),
        ("dict + pydantic_core.to_json (after)", game_state_json),
        ("model_validate(dict) + model_dump_json", validated_json),
        ("model_construct + model_dump_json", constructed_json),
    ):
        print(f"| {name} | {timed(encode, states, args.rounds):.1f} |")
    print("\n| Engine, every move | Median per state (µs) |\n| --- | ---: |")
    texts = {id(view): dumps(view.state) for view in states}
    for name, work in (
        ("dumps (the row's state text)", lambda view: dumps(view.state)),
        ("loads (read back)", lambda view: loads(texts[id(view)])),
        ("public_view (every pile)", lambda view: view.rules.public_view(view.state)),
    ):
        print(f"| {name} | {timed(work, states, args.rounds):.1f} |")


if __name__ == "__main__":
    main()
