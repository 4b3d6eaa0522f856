"""The searches (app/solver/searches.py) on a toy model, a small directed graph of positions:
each finds a line to a win, proves a loss only after entering every reachable position, enters
a position once, respects dead ends, budgets and the out-of-time check, and searches in its own
order (best-first by score, priced by cost, limited-discrepancy by the model's first choice)."""

from __future__ import annotations

from collections.abc import Callable, Hashable

import pytest

from app.solver.position import Child, Mv, Piles
from app.solver.result import Budget, Outcome, Result
from app.solver.searches import best_first, dfs, lds, priced

Search = Callable[["Graph", Piles, int, Budget], Result]


def at(node: int) -> Piles:
    return ((node,),)


class Graph:
    """Positions are nodes (``((node,),)``); a move ``(a, b, 1)`` goes from node a to node b,
    children in the order the edges list them."""

    slug = "toy"
    pile_ids: tuple[str, ...] = ("node",)

    def __init__(
        self, edges: dict[int, list[int]], goal: set[int], dead: set[int] | None = None
    ) -> None:
        self.edges, self.goal, self.dead_nodes = edges, goal, dead or set()
        self.expanded: list[int] = []
        self.dead_asked: list[int] = []
        self.notes: dict[int, Hashable | None] = {}  # the note each priced position came with
        self.costly: set[int] = set()

    def children(self, piles: Piles, redeals: int) -> list[Child]:
        node = piles[0][0]
        self.expanded.append(node)
        return [((node, m, 1), at(m), redeals) for m in self.edges.get(node, [])]

    def key(self, piles: Piles, redeals: int) -> Hashable:
        return piles[0][0]

    def won(self, piles: Piles) -> bool:
        return piles[0][0] in self.goal

    def dead(self, piles: Piles, redeals: int) -> bool:
        self.dead_asked.append(piles[0][0])
        return piles[0][0] in self.dead_nodes

    # best-first: higher is nearer a win (here: the higher node)
    def score(self, piles: Piles) -> int:
        return piles[0][0]

    # priced: a move to a node in ``costly`` costs one, any other is free; notes count moves
    def price(
        self, piles: Piles, redeals: int, kids: list[Child], note: Hashable | None
    ) -> list[tuple[int, Hashable | None]]:
        self.notes[piles[0][0]] = note
        depth = note if isinstance(note, int) else 0
        return [(int(mv[1] in self.costly), depth + 1) for mv, _, _ in kids]


def _best_first(model: Graph, piles: Piles, redeals: int, budget: Budget) -> Result:
    return best_first(model, piles, redeals, budget)


SEARCHES: dict[str, Search] = {
    "dfs": dfs,
    "lds": lds,
    "best_first": _best_first,
    "priced": priced,
}

# 0 → 1 → 3 → 5 (won); 0 → 2 → 3; 2 → 4 (nothing further); 3 → 0 (a cycle)
EDGES = {0: [1, 2], 1: [3], 2: [3, 4], 3: [0, 5]}


def walks(path: tuple[Mv, ...], start: int, graph: Graph) -> int:
    """The node a path ends on, checking every step is an edge from where it stands."""
    node = start
    for a, b, count in path:
        assert (a, count) == (node, 1) and b in graph.edges.get(a, [])
        node = b
    return node


@pytest.mark.parametrize("search", SEARCHES)
def test_a_win_comes_with_a_line_of_the_models_moves_to_it(search: str) -> None:
    graph = Graph(EDGES, goal={5})
    found = SEARCHES[search](graph, at(0), 0, Budget())
    assert found.outcome is Outcome.WINNABLE and not found.out_of_time
    assert walks(found.path, 0, graph) == 5
    assert found.moves == ()  # engine moves are the portfolio's business (search.py)


@pytest.mark.parametrize("search", SEARCHES)
def test_a_won_position_needs_no_search(search: str) -> None:
    graph = Graph(EDGES, goal={0})
    found = SEARCHES[search](graph, at(0), 0, Budget())
    assert found == Result(Outcome.WINNABLE)
    assert graph.expanded == []


@pytest.mark.parametrize("search", SEARCHES)
def test_lost_only_once_every_reachable_position_was_searched(search: str) -> None:
    graph = Graph(EDGES, goal={99})
    found = SEARCHES[search](graph, at(0), 0, Budget())
    assert found.outcome is Outcome.LOST and found.path == ()
    assert set(graph.expanded) == {0, 1, 2, 3, 4, 5}


@pytest.mark.parametrize("search", ["dfs", "best_first", "priced"])
def test_a_position_met_again_is_entered_once(search: str) -> None:
    # 3 is reached from 1 and from 2, and 0 again from 3: each position is searched once.
    graph = Graph(EDGES, goal={99})
    found = SEARCHES[search](graph, at(0), 0, Budget())
    assert sorted(graph.expanded) == [0, 1, 2, 3, 4, 5]
    assert found.nodes == 6
    assert found.generated == sum(len(v) for v in EDGES.values())


@pytest.mark.parametrize("search", SEARCHES)
def test_a_dead_end_is_not_searched_beyond_unless_the_model_turns_the_rules_off(
    search: str,
) -> None:
    # The only way to the win passes 3, which the model calls dead.
    graph = Graph(EDGES, goal={5}, dead={3})
    assert SEARCHES[search](graph, at(0), 0, Budget()).outcome is Outcome.LOST
    assert 3 in graph.dead_asked and 3 not in graph.expanded
    plain = Graph(EDGES, goal={5}, dead={3})
    plain.dead_ends = False  # type: ignore[attr-defined]
    assert SEARCHES[search](plain, at(0), 0, Budget()).outcome is Outcome.WINNABLE
    assert plain.dead_asked == []


def chain(length: int) -> dict[int, list[int]]:
    return {n: [n + 1] for n in range(length)}


@pytest.mark.parametrize("search", SEARCHES)
def test_a_search_cut_short_by_its_budget_is_unknown(search: str) -> None:
    graph = Graph(chain(1_000), goal={1_000})
    found = SEARCHES[search](graph, at(0), 0, Budget(nodes=50))
    assert found.outcome is Outcome.UNKNOWN and not found.out_of_time
    assert found.nodes <= 50 and len(graph.expanded) <= 51
    assert found.path == ()


@pytest.mark.parametrize("search", SEARCHES)
def test_the_out_of_time_check_is_read_every_so_many_positions(search: str) -> None:
    calls: list[int] = []

    def out_of_time() -> bool:
        calls.append(1)
        return len(calls) == 3

    graph = Graph(chain(1_000), goal={1_000})
    found = SEARCHES[search](graph, at(0), 0, Budget(10**9, out_of_time, check_every=10))
    assert found.outcome is Outcome.UNKNOWN and found.out_of_time
    assert len(calls) == 3
    assert found.nodes == 30


def test_best_first_enters_the_best_scored_position_next() -> None:
    # Two ways to the win: 0 → 1 → 9 and 0 → 2 → 9; the score prefers 2 (the higher node),
    # though the model lists 1 first.
    graph = Graph({0: [1, 2], 1: [9], 2: [9]}, goal={9})
    found = best_first(graph, at(0), 0, Budget())
    assert found.path == ((0, 2, 1), (2, 9, 1))
    by_lowest = best_first(graph, at(0), 0, Budget(), score=lambda piles: -piles[0][0])
    assert by_lowest.path == ((0, 1, 1), (1, 9, 1))


def test_the_priced_search_enters_every_cheaper_position_first() -> None:
    # The model lists 1 first, but the move there costs one: the free line through 5 and 6
    # is searched first, to its end, and 1 only after it.
    graph = Graph({0: [1, 5], 1: [9], 5: [6], 6: [7]}, goal={9})
    graph.costly = {1}
    found = priced(graph, at(0), 0, Budget())
    assert found.path == ((0, 1, 1), (1, 9, 1))
    assert graph.expanded == [0, 5, 6, 7, 1]
    # Costs order the search, they cut nothing: with the free line a dead end, 5 comes next.
    graph = Graph({0: [1, 5], 1: [2], 5: [9]}, goal={9})
    graph.costly = {5}
    assert priced(graph, at(0), 0, Budget()).path == ((0, 5, 1), (5, 9, 1))
    assert graph.expanded == [0, 1, 2, 5]
    # A child that is won ends the search at once, whatever it costs.
    graph = Graph({0: [1, 9], 1: [2], 2: [3]}, goal={9})
    graph.costly = {9}
    assert priced(graph, at(0), 0, Budget()).path == ((0, 9, 1),)
    assert graph.expanded == [0]


def test_the_priced_search_hands_each_position_the_note_its_move_was_priced_with() -> None:
    graph = Graph({0: [1, 2], 1: [3], 2: [4]}, goal={99})
    priced(graph, at(0), 0, Budget())
    assert graph.notes == {0: None, 1: 1, 2: 1, 3: 2, 4: 2}


def test_the_priced_search_asks_about_dead_ends_only_after_moves_that_may_end() -> None:
    graph = Graph({0: [1], 1: [2], 2: [3]}, goal={99}, dead={2})
    graph.may_end = lambda move: move[1] != 2  # type: ignore[attr-defined]
    assert priced(graph, at(0), 0, Budget()).outcome is Outcome.LOST
    assert 2 not in graph.dead_asked and graph.expanded == [0, 1, 2, 3]


def test_the_discrepancy_search_tries_the_first_choices_before_any_other() -> None:
    # The model's first choice at 0 leads to a long dead line; the win is one discrepancy away
    # and found in the second round, after the first round searched only first choices.
    graph = Graph({0: [1, 9], 1: [2], 2: [3]}, goal={9})
    found = lds(graph, at(0), 0, Budget())
    assert found.path == ((0, 9, 1),)
    assert graph.expanded[:4] == [0, 1, 2, 3]  # round 0: first choices only
