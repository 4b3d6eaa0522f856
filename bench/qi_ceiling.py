"""Quadruple Interchange's ceiling (issue #22): how many deals can be won knowing every card.

    nice -n 19 .venv/bin/python bench/qi_ceiling.py [--first 1] [--deals 40] [--nodes 300000]
        [--search layered|portfolio|best-first] [--width 16] [--per-position 24]
        [--end-factor 8] [--only N ...] [--unforced] [--weights 10,10,10,1,1,2]

Each deal is searched with every card known (face-down cards and the stock order), bounded by
positions only (no clock: the answers are the same at any load). Every win is replayed move by
move through the engine from the deal and must end won; the run fails if one does not. It
prints one line per deal (outcome, positions entered, CPU seconds, moves of the line) and a
summary. ``--search portfolio`` is the service's search (search.solve_piles: a short
depth-first search, then the limited-discrepancy search, then depth-first); with
``--unforced`` on the service's model exactly. Research only: the service's searches are in
app/solver.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from app.engine import Ruleset, get_ruleset
from app.solver import Budget, Outcome, Result
from app.solver.lines import to_moves
from app.solver.position import Child, Piles
from app.solver.quadruple_interchange import QuadrupleInterchangeModel
from app.solver.search import solve_piles
from app.solver.searches import best_first, layered

QI = "quadruple-interchange"


def cpu_model() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


class Watched(QuadrupleInterchangeModel):
    """The solver's model, safe moves forced (``--unforced``: not, as the service's), noting
    how far the positions the search enters got: the most cards home, and with the stock
    dealt out, the fewest face-down cards and waste cards."""

    safe_moves = True

    def __init__(self, rules: Ruleset) -> None:
        super().__init__(rules)
        self.reset()

    def reset(self) -> None:
        self.most_home = 0
        self.fewest_down = self.fewest_waste = 999

    def children(self, piles: Piles, redeals: int) -> list[Child]:
        home = sum(len(piles[f]) for f in self.f)
        self.most_home = max(self.most_home, home)
        if not piles[self.stock]:
            down = sum(1 for t in self.t for c in piles[t] if c < 0)
            self.fewest_down = min(self.fewest_down, down)
            self.fewest_waste = min(self.fewest_waste, len(piles[self.waste]))
        return super().children(piles, redeals)


def search(args: argparse.Namespace, model: Watched, number: int) -> Result:
    deal = get_ruleset(QI).deal(number)
    budget = Budget(nodes=args.nodes)
    if args.search == "layered":
        return layered(
            model,
            deal.piles,
            deal.redeals,
            budget,
            width=args.width,
            per_position=args.per_position,
            end_factor=args.end_factor,
        )
    if args.search == "best-first":
        return best_first(model, deal.piles, deal.redeals, budget, score=model.progress)
    return solve_piles(model, deal.piles, deal.redeals, budget)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--first", type=int, default=1)
    parser.add_argument("--deals", type=int, default=40)
    parser.add_argument("--only", type=int, nargs="*", help="these deals instead")
    parser.add_argument("--nodes", type=int, default=300_000, help="positions per deal")
    parser.add_argument(
        "--search", choices=["layered", "portfolio", "best-first"], default="layered"
    )
    parser.add_argument("--width", type=int, default=16)
    parser.add_argument("--per-position", type=int, default=24)
    parser.add_argument("--end-factor", type=int, default=8)
    parser.add_argument("--unforced", action="store_true", help="no forced safe moves")
    parser.add_argument("--weights", help="home,down,empty,break,buried,waste")
    args = parser.parse_args(argv)
    rules = get_ruleset(QI)
    model = Watched(rules)
    model.safe_moves = not args.unforced
    if args.weights:
        w = [int(x) for x in args.weights.split(",")]
        (model.w_home, model.w_down, model.w_empty, model.w_break, model.w_buried,
         model.w_waste) = w  # fmt: skip
    which = (
        ", ".join(map(str, args.only))
        if args.only
        else f"{args.first}..{args.first + args.deals - 1}"
    )
    print(
        f"nproc {os.cpu_count()}, CPU {cpu_model()}, Python {platform.python_version()}, "
        f"{time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}; deals {which}"
        f", {args.search} search, {args.nodes:,} positions a deal"
        + (
            f", width {args.width}, {args.per_position} per position, end x{args.end_factor}"
            if args.search == "layered"
            else ""
        )
        + (", safe moves not forced" if args.unforced else ", safe moves forced")
        + f", weights {model.w_home},{model.w_down},{model.w_empty},{model.w_break},"
        f"{model.w_buried},{model.w_waste}",
        flush=True,
    )
    won: list[int] = []
    counts = dict.fromkeys(Outcome, 0)
    cpu_total = 0.0
    homes: list[int] = []
    numbers = args.only or list(range(args.first, args.first + args.deals))
    for number in numbers:
        begun = time.process_time()
        model.reset()
        result = search(args, model, number)
        cpu = time.process_time() - begun
        cpu_total += cpu
        counts[result.outcome] += 1
        homes.append(model.most_home)
        moves = 0
        if result.outcome is Outcome.WINNABLE:
            deal = rules.deal(number)
            line = to_moves(model, result.path)
            state = deal
            for move in line:  # each move through the engine's own legality check
                state = rules.apply(state, move)
            if not rules.is_won(state):
                raise SystemExit(f"deal {number}: the winning line does not replay to a win")
            moves = len(line)
            won.append(number)
        print(
            f"deal {number}: {result.outcome.value}, {result.nodes:,} positions, "
            f"{cpu:.1f} s CPU, most cards home {model.most_home}"
            + (
                f", stock out: fewest face down {model.fewest_down}, fewest in the waste "
                f"{model.fewest_waste}"
                if model.fewest_waste < 999
                else ", the stock never dealt out"
            )
            + (f", {moves} moves (replayed: won)" if moves else ""),
            flush=True,
        )
    print(
        f"won {counts[Outcome.WINNABLE]}, lost {counts[Outcome.LOST]}, undecided "
        f"{counts[Outcome.UNKNOWN]} of {len(numbers)}; won deals {won}; most cards home: median "
        f"{statistics.median(homes)}, max {max(homes)}; CPU {cpu_total:.0f} s",
        flush=True,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
