"""Engine benchmark: the time of ``legal_moves(state)`` + ``apply(state, move)`` per move.

    .venv/bin/python bench/engine.py [--moves N] [--seed S] [--games SLUG ...]

For every game it plays random playouts from random deals — at each step, with probability
``GREEDY`` a move that puts a card on a foundation when there is one, otherwise any legal move,
at most ``MAX_PLIES`` moves a game — and times, for each move, listing the legal moves and
applying the chosen one (the work of validating and playing one move on the server). Dealing
and choosing are not timed. It prints a Markdown table of the median, p95 and mean per move
against the target from design.md: a median of at most 100 µs for every game.

The playouts use a seeded ``random.Random``: this is benchmark code, not engine code.
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import random
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from app.engine import GAMES, MAX_DEAL, Move, Ruleset

TARGET_US = 100.0
GREEDY = 0.5
MAX_PLIES = 300
WARMUP_MOVES = 500


@dataclass(frozen=True)
class Result:
    slug: str
    moves: int
    games: int
    median_us: float
    p95_us: float
    mean_us: float

    @property
    def ok(self) -> bool:
        return self.median_us <= TARGET_US


def choose(moves: Sequence[Move], rng: random.Random) -> Move:
    if rng.random() < GREEDY:
        home = [m for m in moves if m.target[0] == "f" and m.source[0] != "f"]
        if home:
            return rng.choice(home)
    return rng.choice(moves)


def measure(rules: Ruleset, moves: int, rng: random.Random) -> tuple[list[int], int]:
    """Nanoseconds of legal_moves + apply for each of ``moves`` moves, and the games played."""
    samples: list[int] = []
    games = 0
    clock = time.perf_counter_ns
    while len(samples) < moves:
        state = rules.deal(rng.randrange(1, MAX_DEAL + 1))
        games += 1
        for _ in range(MAX_PLIES):
            t0 = clock()
            legal = rules.legal_moves(state)
            t1 = clock()
            if not legal:
                samples.append(t1 - t0)  # finding that the game is over is work too
                break
            move = choose(legal, rng)
            t2 = clock()
            state = rules.apply(state, move)
            t3 = clock()
            samples.append((t1 - t0) + (t3 - t2))
            if len(samples) >= moves:
                break
    return samples, games


def bench(slug: str, moves: int, seed: int) -> Result:
    rules = GAMES[slug]
    rng = random.Random(f"{seed}:{slug}")
    measure(rules, WARMUP_MOVES, rng)
    gc.collect()
    samples, games = measure(rules, moves, rng)
    ordered = sorted(samples)
    return Result(
        slug=slug,
        moves=len(samples),
        games=games,
        median_us=statistics.median(ordered) / 1000,
        p95_us=ordered[int(0.95 * (len(ordered) - 1))] / 1000,
        mean_us=statistics.fmean(ordered) / 1000,
    )


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def table(results: Sequence[Result]) -> str:
    rows = [
        "| Game | Moves timed | Games | Median µs | p95 µs | Mean µs | Target (median) | Met |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | :---: |",
    ]
    for r in results:
        rows.append(
            f"| {GAMES[r.slug].name} | {r.moves:,} | {r.games:,} | {r.median_us:.1f} | "
            f"{r.p95_us:.1f} | {r.mean_us:.1f} | ≤ {TARGET_US:.0f} µs | "
            f"{'yes' if r.ok else '**no**'} |"
        )
    return "\n".join(rows)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--moves", type=int, default=20_000, help="moves timed per game")
    parser.add_argument("--seed", type=int, default=1, help="seed of the random playouts")
    parser.add_argument("--games", nargs="*", choices=sorted(GAMES), help="default: all")
    args = parser.parse_args(argv)
    print(
        f"nproc {os.cpu_count()}, CPU {cpu_model()}, Python {platform.python_version()} "
        f"({platform.python_implementation()}), {args.moves:,} moves a game, seed {args.seed}"
    )
    print()
    results = [bench(slug, args.moves, args.seed) for slug in args.games or GAMES]
    print(table(results))
    return 0 if all(r.ok for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
