"""Solver benchmark: how many deals of each game the solver decides, and how fast.

    .venv/bin/python bench/solver.py [--deals 200] [--qi-deals 30] [--nodes 100000]
                                     [--seconds 5] [--hints 40] [--games SLUG ...]

For each game it solves deals 1..N (Quadruple Interchange: 1..``--qi-deals``) with every card
known, each within ``--nodes`` positions and ``--seconds`` of wall time (whichever ends
first), and reports won / lost / unknown %, the median and p95 time per deal, and positions
per second (entered: positions the search expanded; generated: positions the move generator
produced). Every winning line is shortened and replayed through the real engine to a win; the
run fails if one does not. Then it times Castle's End hints (``--hints`` deals, a hint at the
deal and after every 10th move of a winning line) against the target p95 ≤ 0.3 s. It prints
Markdown tables for bench/RESULTS.md.

With ``--follow N`` it plays deals ``--first``..N of each game three ways (issue #22): by
following hints (visible cards only; exact hints continue their kept winning line, as the
service does) from the deal to the end, by a greedy player, and it gives the full-knowledge
verdict; it reports each win rate, the hints' share of the winnable deals they win, the cards
each put home, and on how many deals the hints did better and worse than greedy play, with a
two-sided sign test: by wins, or by cards home in a game where neither wins a deal.
``--follow-nodes`` is the hint's node budget where cards are hidden (the service's is larger:
see RESULTS.md).
``--analysis N`` times the analysis of N greedy games per game (Castle's End and Corners).

Targets (issue #11): Castle's End and Corners fully decided, Patriarchs ≥ 90% decided, Castle's
End hint p95 ≤ 0.3 s, ≥ 100k positions/s for every game but Quadruple Interchange.
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from app.engine import GAMES, Move, State, get_ruleset
from app.solver import Budget, Outcome, follow, hint, model_for, solve
from app.solver.analysis import analyse
from app.solver.lines import shorten, to_moves

QI = "quadruple-interchange"


@dataclass
class GameResult:
    slug: str
    outcomes: dict[Outcome, int] = field(default_factory=lambda: dict.fromkeys(Outcome, 0))
    seconds: list[float] = field(default_factory=list)
    entered: int = 0
    generated: int = 0
    solution_moves: list[int] = field(default_factory=list)

    @property
    def deals(self) -> int:
        return len(self.seconds)

    def pct(self, outcome: Outcome) -> float:
        return 100.0 * self.outcomes[outcome] / max(1, self.deals)


def p95(values: Sequence[float]) -> float:
    ordered = sorted(values)
    return ordered[int(0.95 * (len(ordered) - 1))]


def _past(deadline: float) -> bool:
    return time.perf_counter() > deadline


def bench_game(slug: str, deals: int, nodes: int, seconds: float, first: int = 1) -> GameResult:
    rules = get_ruleset(slug)
    result = GameResult(slug)
    for number in range(first, first + deals):
        deal = rules.deal(number)
        deadline = time.perf_counter() + seconds
        budget = Budget(nodes=nodes, out_of_time=partial(_past, deadline))
        start = time.perf_counter()
        answer = solve(deal, budget, short=False)
        result.seconds.append(time.perf_counter() - start)
        result.entered += answer.nodes
        result.generated += answer.generated
        result.outcomes[answer.outcome] += 1
        if answer.outcome is Outcome.WINNABLE:
            model = model_for(slug)
            line = to_moves(model, shorten(model, deal.piles, deal.redeals, answer.path))
            if not rules.is_won(rules.replay(deal, line)):
                raise SystemExit(f"{slug} deal {number}: the winning line does not replay")
            result.solution_moves.append(len(line))
        print(
            f"{slug} {number}: {answer.outcome.value} {answer.nodes} positions "
            f"{result.seconds[-1] * 1000:.0f} ms",
            file=sys.stderr,
        )
    return result


def bench_hints(deals: int, nodes: int) -> list[float]:
    rules = get_ruleset("castles-end")
    times: list[float] = []
    for number in range(1, deals + 1):
        deal = rules.deal(number)
        line = solve(deal, Budget(nodes=nodes)).moves
        positions = [deal]
        state = deal
        for i, move in enumerate(line, 1):
            state = rules.apply(state, move)
            if i % 10 == 0 and not rules.is_won(state):
                positions.append(state)
        for state in positions:
            start = time.perf_counter()
            hint(state, Budget(nodes=nodes))
            times.append(time.perf_counter() - start)
    return times


@dataclass(frozen=True)
class Played:
    """How a game played from the deal ended: won or not, and how many cards went home
    (what tells two players apart in a game that neither wins)."""

    won: bool
    home: int
    searched: int = 0  # hints that needed a search


def _played(state: State, searched: int = 0) -> Played:
    rules = get_ruleset(state.game)
    return Played(rules.is_won(state), rules.on_foundations(state), searched)


def sign_test(more: int, fewer: int) -> float:
    """Two-sided exact sign test: the chance of a split at least this uneven between ``more``
    and ``fewer`` if either player were as likely to come out ahead on a deal (ties left out)."""
    n = more + fewer
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, k) for k in range(min(more, fewer) + 1)) / (1 << n)
    return min(1.0, 2 * tail)


def greedy_game(state: State, cap: int = 1_000) -> Played:
    """A simple greedy player: a card to a foundation (never off one), else a tableau or
    reserve move to a position not seen before, else a deal, else a redeal."""
    rules = get_ruleset(state.game)
    seen = {state}
    for _ in range(cap):
        if rules.is_won(state):
            break
        legal = rules.legal_moves(state)
        home = [m for m in legal if m.target.startswith("f") and not m.source.startswith("f")]
        other = [m for m in legal if not m.target.startswith("f") and m.source != "stock"]
        other = [m for m in other if m.target != "stock"]
        deal = [m for m in legal if m.source == "stock" or m.target == "stock"]
        for move in home + other + deal:
            after = rules.apply(state, move)
            if after not in seen:
                seen.add(after)
                state = after
                break
        else:
            break
    return _played(state)


def hint_game(state: State, nodes: int, cap: int = 600) -> Played:
    """Plays by hints from ``state`` to the end, as the service gives them: the kept line is
    continued while the position is on it.

    A game that comes back to a position it was in, with no kept line either time, is lost:
    its hints depend only on the position (and the node budget), so it would go round the
    same circle up to ``cap``; it stops there instead (the outcome is the same)."""
    rules = get_ruleset(state.game)
    kept: tuple[State, tuple[Move, ...]] | None = None
    searched = 0
    seen: set[State] = set()
    for _ in range(cap):
        if rules.is_won(state):
            break
        rest = follow(kept[0], kept[1], state) if kept else None
        if kept is None:
            if state in seen:
                break
            seen.add(state)
        if rest:
            move = rest[0]
        else:
            given = hint(state, Budget(nodes=nodes))
            searched += 1
            if given.move is None:
                break
            if given.line:
                kept = (state, given.line)
            move = given.move
        state = rules.apply(state, move)
    return _played(state, searched)


def bench_follow(slug: str, deals: int, nodes: int, exact_nodes: int, first: int = 1) -> str:
    """One table row: deals ``first``.. played by hints and by the greedy player, beside the
    full-knowledge verdict. The hints beat greedy play by wins where either wins a deal; where
    neither does (Quadruple Interchange: no search has won one of its deals, docs/solver.md),
    by cards home, deal by deal, with a sign test."""
    rules = get_ruleset(slug)
    winnable = winnable_by_hints = searched = 0
    hints: list[Played] = []
    greedy: list[Played] = []
    start = time.perf_counter()
    for number in range(first, first + deals):
        deal = rules.deal(number)
        verdict = solve(deal, Budget(nodes=exact_nodes), short=False).outcome
        by_hints = hint_game(deal, nodes if slug != "castles-end" else exact_nodes)
        by_greedy = greedy_game(deal)
        hints.append(by_hints)
        greedy.append(by_greedy)
        winnable += verdict is Outcome.WINNABLE
        winnable_by_hints += by_hints.won and verdict is Outcome.WINNABLE
        searched += by_hints.searched
        print(
            f"{slug} {number}: verdict {verdict.value}, hints {'won' if by_hints.won else 'lost'} "
            f"({by_hints.searched} searched, {by_hints.home} home), greedy "
            f"{'won' if by_greedy.won else 'lost'} ({by_greedy.home} home)",
            file=sys.stderr,
        )
    won_h, won_g = sum(p.won for p in hints), sum(p.won for p in greedy)
    if won_h or won_g:
        more = sum(h.won and not g.won for h, g in zip(hints, greedy, strict=True))
        fewer = sum(g.won and not h.won for h, g in zip(hints, greedy, strict=True))
        measure = "wins"
    else:
        more = sum(h.home > g.home for h, g in zip(hints, greedy, strict=True))
        fewer = sum(h.home < g.home for h, g in zip(hints, greedy, strict=True))
        measure = "cards home"
    share = f"{winnable_by_hints}/{winnable}" if winnable else "-"
    home_h = statistics.mean(p.home for p in hints)
    home_g = statistics.mean(p.home for p in greedy)
    return (
        f"| {GAMES[slug].name} | {first}..{first + deals - 1} | {100 * winnable / deals:.0f}% | "
        f"{100 * won_h / deals:.0f}% | {share} | {100 * won_g / deals:.0f}% | "
        f"{home_h:.1f} / {home_g:.1f} | {measure}: {more} / {fewer} | "
        f"{sign_test(more, fewer):.2g} | {searched} | {time.perf_counter() - start:.0f} s |"
    )


def bench_analysis(slug: str, games: int, nodes: int, seconds: float) -> str:
    """Times the analysis of greedy games (most of them lost) of deals 1..games: wall time,
    and CPU time (what a quiet machine's wall time would be: the search is one thread)."""
    rules = get_ruleset(slug)
    times: list[float] = []
    cpu: list[float] = []
    slips = undecided = 0
    for number in range(1, games + 1):
        state = rules.deal(number)
        moves: list[Move] = []
        seen = {state}
        for _ in range(1_000):
            legal = [m for m in rules.legal_moves(state) if rules.apply(state, m) not in seen]
            if not legal or rules.is_won(state):
                break
            home = [m for m in legal if m.target.startswith("f")]
            move = (home or legal)[0]
            state = rules.apply(state, move)
            seen.add(state)
            moves.append(move)
        deadline = time.perf_counter() + seconds
        begun, begun_cpu = time.perf_counter(), time.process_time()
        found = analyse(
            rules.deal(number), moves, Budget(nodes=nodes, out_of_time=partial(_past, deadline))
        )
        times.append(time.perf_counter() - begun)
        cpu.append(time.process_time() - begun_cpu)
        slips += found.slip is not None
        undecided += not found.decided
    return (
        f"| {GAMES[slug].name} | {games} | {slips} | {undecided} | "
        f"{statistics.median(times) * 1000:.0f} | {p95(times) * 1000:.0f} | "
        f"{max(times) * 1000:.0f} | {statistics.median(cpu) * 1000:.0f} | "
        f"{p95(cpu) * 1000:.0f} | {max(cpu) * 1000:.0f} |"
    )


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def table(results: Sequence[GameResult]) -> str:
    rows = [
        "| Game | Deals | Won % | Lost % | Unknown % | Median ms | p95 ms | Entered/s | "
        "Generated/s | Median moves (shortened) |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in results:
        total = sum(r.seconds) or 1e-9
        moves = statistics.median(r.solution_moves) if r.solution_moves else 0
        rows.append(
            f"| {GAMES[r.slug].name} | {r.deals} | {r.pct(Outcome.WINNABLE):.1f} | "
            f"{r.pct(Outcome.LOST):.1f} | {r.pct(Outcome.UNKNOWN):.1f} | "
            f"{statistics.median(r.seconds) * 1000:.0f} | {p95(r.seconds) * 1000:.0f} | "
            f"{r.entered / total:,.0f} | {r.generated / total:,.0f} | {moves:.0f} |"
        )
    return "\n".join(rows)


def winnability(results: Sequence[GameResult]) -> str:
    rows = [
        "| Game | Deals | Can be won | Proved lost | Undecided | About |",
        "| --- | ---: | ---: | ---: | ---: | --- |",
    ]
    for r in results:
        won, lost = r.pct(Outcome.WINNABLE), r.pct(Outcome.LOST)
        unknown = r.pct(Outcome.UNKNOWN)
        about = f"about {won:.0f}%" if unknown < 1 else f"at least {won:.0f}%"
        rows.append(
            f"| {GAMES[r.slug].name} | {r.deals} | {won:.1f}% | {lost:.1f}% | {unknown:.1f}% "
            f"| {about} |"
        )
    return "\n".join(rows)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--deals", type=int, default=200)
    # A run split in parts (each part under one exclusive hold of the CPU lock) starts later.
    parser.add_argument("--first", type=int, default=1, help="first deal number")
    parser.add_argument("--qi-deals", type=int, default=30)
    parser.add_argument("--nodes", type=int, default=100_000, help="positions per deal")
    parser.add_argument("--seconds", type=float, default=5.0, help="wall time per deal")
    parser.add_argument("--hints", type=int, default=40, help="Castle's End deals for hints")
    parser.add_argument("--games", nargs="*", choices=sorted(GAMES), help="default: all")
    parser.add_argument("--follow", type=int, default=0, help="deals played by hints per game")
    parser.add_argument("--follow-deals", nargs="*", default=[], help="per game: SLUG=N")
    parser.add_argument("--follow-nodes", type=int, default=16_000, help="hidden-card hints")
    parser.add_argument("--analysis", type=int, default=0, help="games analysed per game")
    args = parser.parse_args(argv)
    if args.follow or args.analysis:
        return coach(args)
    print(
        f"nproc {os.cpu_count()}, CPU {cpu_model()}, Python {platform.python_version()}, "
        f"deals {args.first}..{args.first + args.deals - 1} (Quadruple Interchange "
        f"{args.first}..{args.first + args.qi_deals - 1}), "
        f"{args.nodes:,} positions and {args.seconds:g} s per deal"
    )
    results = []
    for slug in args.games or GAMES:
        deals = args.qi_deals if slug == QI else args.deals
        results.append(bench_game(slug, deals, args.nodes, args.seconds, args.first))
    print()
    print(table(results))
    print()
    print(winnability(results))
    if args.hints and (not args.games or "castles-end" in args.games):
        times = bench_hints(args.hints, args.nodes)
        print()
        print(
            f"Castle's End hints: {len(times)} positions, median "
            f"{statistics.median(times) * 1000:.0f} ms, p95 {p95(times) * 1000:.0f} ms, "
            f"max {max(times) * 1000:.0f} ms (target p95 ≤ 300 ms)"
        )
    return 0


def coach(args: argparse.Namespace) -> int:
    print(
        f"nproc {os.cpu_count()}, CPU {cpu_model()}, Python {platform.python_version()}, "
        f"hints: {args.follow_nodes:,} positions where cards are hidden, {args.nodes:,} exact"
    )
    slugs = args.games or list(GAMES)
    if args.follow:
        each = dict(item.split("=") for item in args.follow_deals)
        print()
        print(
            "| Game | Deals | Winnable (all cards known) | Won by hints | Winnable deals won "
            "by hints | Won by greedy | Cards home, hints / greedy (mean) | Hints ahead / "
            "behind, by | Sign test p (two-sided) | Hint searches | Time |"
        )
        print("| --- | --- | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: |")
        for slug in slugs:
            deals = int(each.get(slug, args.follow))
            row = bench_follow(slug, deals, args.follow_nodes, args.nodes, args.first)
            print(row, flush=True)
    if args.analysis:
        print()
        print(
            "| Game | Games | Slips named | Undecided | Median ms | p95 ms | Max ms "
            "| CPU median ms | CPU p95 ms | CPU max ms |"
        )
        print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        for slug in [s for s in slugs if s in ("castles-end", "corners")]:
            print(bench_analysis(slug, args.analysis, args.nodes, args.seconds), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
