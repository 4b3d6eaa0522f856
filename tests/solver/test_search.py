"""The solver's answers: winning lines replay through the engine, "lost" agrees with an
exhaustive search, and budgets are honoured."""

from __future__ import annotations

import itertools
from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, given, note, reject, settings
from hypothesis import strategies as st

from app.engine import GAMES, Move, State, get_ruleset
from app.solver import Budget, Outcome, model_for, solve
from app.solver.lines import line_positions, shorten, to_moves
from app.solver.patriarchs import PatriarchsModel
from app.solver.position import Piles
from app.solver.quadrangle import QuadrangleModel
from app.solver.search import solve_piles
from tests.engine.builders import position
from tests.solver.positions import POSITIONS, exhaustive, rest_empty


def replays_to_a_win(state: State, moves: tuple[Move, ...]) -> bool:
    rules = get_ruleset(state.game)
    return rest_empty(rules, rules.replay(state, moves))


@pytest.mark.slow
@pytest.mark.parametrize("game", sorted(POSITIONS))
@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(data=st.data())
def test_answers_agree_with_exhaustive_search(game: str, data: st.DataObject) -> None:
    state = data.draw(POSITIONS[game])
    truth = exhaustive(state)
    if truth is None:
        reject()
    result = solve(state, Budget(nodes=2_000_000))
    note(f"{result}")
    assert result.outcome is (Outcome.WINNABLE if truth else Outcome.LOST)
    if truth:
        assert replays_to_a_win(state, result.moves)


DEALS = {
    "castles-end": range(1, 13),
    "corners": range(1, 13),
    "patriarchs": range(1, 4),
    "quadrangle": range(1, 4),
    "quadruple-interchange": range(1, 3),
}


@pytest.mark.slow
@pytest.mark.parametrize("game", sorted(DEALS))
def test_every_solution_of_a_deal_replays_through_the_engine_to_a_win(game: str) -> None:
    rules = get_ruleset(game)
    decided = 0
    for number in DEALS[game]:
        deal = rules.deal(number)
        result = solve(deal, Budget(nodes=20_000))
        if result.outcome is Outcome.WINNABLE:
            assert rules.is_won(rules.replay(deal, result.moves)), number
            decided += 1
        elif result.outcome is Outcome.LOST:
            decided += 1
    if game == "castles-end":  # every Castle's End deal is decided within this budget
        assert decided == len(DEALS[game])


@pytest.mark.slow
def test_castles_end_has_won_and_lost_deals_and_lost_ones_are_exhaustively_lost() -> None:
    rules = get_ruleset("castles-end")
    outcomes = {}
    for number in range(1, 13):
        outcomes[number] = solve(rules.deal(number), Budget(nodes=200_000)).outcome
    assert set(outcomes.values()) == {Outcome.WINNABLE, Outcome.LOST}
    # A lost deal's whole tree is small: the engine alone, exactly, agrees.
    lost = [n for n, o in outcomes.items() if o is Outcome.LOST]
    checked = 0
    for number in lost:
        truth = exhaustive(rules.deal(number), limit=60_000)
        if truth is not None:
            assert truth is False, number
            checked += 1
    assert checked >= 1


@pytest.mark.slow
def test_shortened_lines_still_win_and_are_no_longer() -> None:
    model = model_for("castles-end")
    rules = get_ruleset("castles-end")
    for number in range(1, 13):
        deal = rules.deal(number)
        raw = solve(deal, Budget(nodes=200_000), short=False)
        if raw.outcome is not Outcome.WINNABLE:
            continue
        short = shorten(model, deal.piles, deal.redeals, raw.path)
        assert len(short) <= len(raw.path)
        end, _ = line_positions(model, deal.piles, deal.redeals, short)[-1]
        assert model.won(end)
        assert solve(deal, Budget(nodes=200_000)).path == short


def test_moves_that_cancel_out_are_dropped() -> None:
    state = position("castles-end", f1="5S", t1="6S", t2="7S 4S", t3="9H 8H", t4="2D")
    model = model_for("castles-end")
    rules = get_ruleset("castles-end")
    # 8♥ goes across and back (cancelling out), then two spades go home.
    line = ["t3-t5", "t5-t3", "t1-f1", "t2-t1", "t2-f1"]
    path = [
        (rules.pile_index(m.source), rules.pile_index(m.target), 1) for m in map(Move.parse, line)
    ]
    end = rules.replay(state, [Move.parse(m) for m in line])
    short = shorten(model, state.piles, 0, path)
    assert len(short) == 3
    positions = line_positions(model, state.piles, 0, short)
    assert model.key(*positions[-1]) == model.key(end.piles, 0)


def test_a_node_budget_is_honoured() -> None:
    deal = get_ruleset("quadruple-interchange").deal(1)
    result = solve(deal, Budget(nodes=500))
    assert result.outcome is Outcome.UNKNOWN
    assert result.nodes <= 500
    assert result.moves == ()


def test_the_out_of_time_check_stops_the_search() -> None:
    calls = []

    def out_of_time() -> bool:
        calls.append(1)
        return len(calls) >= 3

    deal = get_ruleset("quadruple-interchange").deal(1)
    result = solve(deal, Budget(nodes=10**9, out_of_time=out_of_time, check_every=100))
    assert result.outcome is Outcome.UNKNOWN and result.out_of_time
    assert len(calls) == 3
    assert result.nodes <= 300


def test_a_won_position_needs_no_moves() -> None:
    state = position("castles-end", f1="AS 2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS")
    assert solve(state).outcome is Outcome.WINNABLE
    assert solve(state).moves == ()


def test_every_game_has_a_model() -> None:
    assert {model_for(g).slug for g in GAMES} == set(GAMES)


def test_patriarchs_slides_a_meeting_point_to_play_a_card() -> None:
    ranks = "A23456789TJQK"
    full = {
        **{f"f{i + 1}": " ".join(r + s for r in ranks) for i, s in enumerate("CDH")},
        **{f"f{i + 5}": " ".join(r + s for r in reversed(ranks)) for i, s in enumerate("CDH")},
    }
    state = position(
        "patriarchs",
        full,
        f4="AS 2S 3S 4S 5S 6S",
        f8="KS QS JS TS 9S 8S 7S",
        r1="4S",
    )
    result = solve(state)
    assert result.outcome is Outcome.WINNABLE
    assert [str(m) for m in result.moves] == ["f4-f8", "f4-f8", "r1-f8"]
    assert replays_to_a_win(state, result.moves)
    # Every meeting point of a suit is one position for the search.
    model = model_for("patriarchs")
    slid = get_ruleset("patriarchs").apply(state, Move.parse("f4-f8"))
    assert model.key(slid.piles, 0) == model.key(state.piles, 0)


@st.composite
def corners_last_pass_with_a_safe_move(draw: st.DrawFn) -> State:
    """A Corners ending in its last two passes where a safe move applies: the waste's top goes
    home (last pass, or stock empty with a redeal left), or (last pass, stock empty) a reserve
    card does."""
    state = draw(POSITIONS["corners"])
    model = model_for("corners")
    rules = get_ruleset("corners")
    redeals = draw(st.sampled_from([1, 2]))
    state = State(state.game, state.piles, redeals)
    kids = model.children(state.piles, redeals)
    every = model.all_children(state.piles, redeals)  # type: ignore[attr-defined]
    if len(kids) != 1 or len(every) == 1:
        reject()
    assert kids[0][0][1] in rules.foundations
    return state


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(state=corners_last_pass_with_a_safe_move())
def test_corners_last_pass_safe_moves_keep_the_answer_of_exhaustive_search(state: State) -> None:
    truth = exhaustive(state)
    if truth is None:
        reject()
    result = solve(state, Budget(nodes=2_000_000))
    assert result.outcome is (Outcome.WINNABLE if truth else Outcome.LOST)
    if truth:
        assert replays_to_a_win(state, result.moves)


def test_corners_plays_a_safe_move_alone_only_in_the_last_pass() -> None:
    # 9♣ on the waste fits the ♣ foundation (8♣); a stock card and a reserve card are left.
    model = model_for("corners")
    rules = get_ruleset("corners")
    piles = {"f1": "8C", "f2": "KD", "f3": "KH", "f4": "KS", "r1": "AD", "waste": "9C"}
    for redeals, alone in ((0, False), (1, False), (2, True)):
        state = position("corners", redeals=redeals, stock="AH", **piles)
        kids = model.children(state.piles, redeals)
        assert (len(kids) == 1) is alone, (redeals, kids)
        assert kids[0][0] == (rules.waste, rules.foundations[0], 1)
    # The stock empty: forced with one redeal left too, not with two.
    for redeals, alone in ((0, False), (1, True), (2, True)):
        state = position("corners", redeals=redeals, **piles)
        assert (len(model.children(state.piles, redeals)) == 1) is alone, redeals
    # A reserve card going home refills from the stock: forced only once the stock is empty.
    reserve_only = {**piles, "waste": "", "r1": "9C"}
    with_stock = position("corners", redeals=2, stock="AH", **reserve_only)
    assert len(model.children(with_stock.piles, 2)) > 1
    empty = position("corners", redeals=2, **{**reserve_only, "waste": "5H"})
    assert [k[0] for k in model.children(empty.piles, 2)] == [
        (rules.reserves[0], rules.foundations[0], 1)
    ]


@st.composite
def patriarchs_last_pass(draw: st.DrawFn) -> State:
    """A Patriarchs ending in its last pass, often with the stock dealt out (its cards put on
    the waste, in the order dealing would put them there)."""
    state = draw(POSITIONS["patriarchs"])
    rules = get_ruleset("patriarchs")
    piles = list(state.piles)
    stock = piles[rules.stock]
    dealt = draw(st.integers(0, len(stock)))
    piles[rules.waste] = piles[rules.waste] + stock[len(stock) - dealt :][::-1]
    piles[rules.stock] = stock[: len(stock) - dealt]
    return State(state.game, tuple(piles), 1)


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(state=patriarchs_last_pass())
def test_the_patriarchs_dead_end_rule_agrees_with_exhaustive_search(state: State) -> None:
    truth = exhaustive(state)
    if truth is None:
        reject()
    # The rule itself, at every last-pass position (the search checks it once the stock is
    # empty only: see PatriarchsModel.dead_stock_limit).
    model = PatriarchsModel(get_ruleset("patriarchs"))
    model.dead_stock_limit = 1_000
    if model.dead(state.piles, state.redeals):
        assert truth is False  # the rule never calls a winnable position lost
    result = solve(state, Budget(nodes=2_000_000))
    assert result.outcome is (Outcome.WINNABLE if truth else Outcome.LOST)
    if truth:
        assert replays_to_a_win(state, result.moves)


def test_the_patriarchs_dead_end_rule_sees_a_card_buried_for_good() -> None:
    ranks = "A23456789TJQK"
    full = {
        **{f"f{i + 1}": " ".join(r + s for r in ranks) for i, s in enumerate("CDH")},
        **{f"f{i + 5}": " ".join(r + s for r in reversed(ranks)) for i, s in enumerate("CDH")},
        "f4": "AS 2S 3S 4S 5S 6S 7S 8S 9S TS JS",  # the Ace side wants Q♠, then K♠
        "f8": "KS QS JS TS 9S 8S 7S 6S 5S 4S 3S 2S",  # the King side wants A♠
    }
    model = model_for("patriarchs")
    # K♠ on Q♠ in the waste, no reserve card: K♠ can never move, so Q♠ is never seen.
    stuck = position("patriarchs", redeals=1, waste="QS KS", **full)
    assert model.dead(stuck.piles, 1)
    assert exhaustive(stuck) is False
    assert solve(stuck).outcome is Outcome.LOST
    # With A♠ in a reserve, playing it takes K♠ into the reserve and uncovers Q♠: a win.
    freed = position("patriarchs", redeals=1, waste="QS KS", r1="AS", **full)
    assert not model.dead(freed.piles, 1)
    assert exhaustive(freed) is True
    assert solve(freed).outcome is Outcome.WINNABLE
    # Before the last pass the rule says nothing (a redeal may reorder the waste).
    assert not model.dead(stuck.piles, 0)


def _playable(counts: list[int], a: int, k: int) -> int:
    """At most how many of a suit's cards (``counts``: copies per rank index) can go home with
    the Ace side topped at rank index ``a`` and the King side at ``k``: the bound of the rule as
    first written (see ``PatriarchsModel.dead``)."""
    up = a + 1
    while up <= 12 and counts[up]:
        up += 1
    down = k - 1
    while down >= 0 and counts[down]:
        down -= 1
    if a < k and up >= down + 1:  # the runs meet (or the sides meet already)
        return sum(counts)
    return (up - a - 1) + (k - 1 - down)


def _dead_reference(model: PatriarchsModel, state: State) -> bool:
    """The Patriarchs last-pass rule computed afresh for every j (as ``dead`` was first
    written): the incremental version must give the same answer."""
    piles = state.piles
    counts = [[0] * 13 for _ in range(4)]
    held = 0
    for i in (*model.r, model.stock):
        for c in piles[i]:
            counts[c // 13][c % 13] += 1
            held += 1
    tops = [(piles[u][-1] % 13, piles[d][-1] % 13) for u, d in zip(model.up, model.down)]
    bound = [_playable(counts[s], *tops[s]) for s in range(4)]
    waste = piles[model.waste]
    n = len(waste)
    for j in range(1, n + 1):
        c = waste[n - j]
        counts[c // 13][c % 13] += 1
        bound[c // 13] = _playable(counts[c // 13], *tops[c // 13])
        if j < n and sum(bound) < j:
            return True
    return sum(bound) < held + n


@st.composite
def patriarchs_dealt_out(draw: st.DrawFn) -> State:
    """A real Patriarchs deal in its last pass after random plays: waste and stock long."""
    rules = get_ruleset("patriarchs")
    model = model_for("patriarchs")
    state = rules.deal(draw(st.integers(1, 10_000)))
    piles, redeals = state.piles, 0
    for _ in range(draw(st.integers(0, 250))):
        kids = model.children(piles, redeals)
        if not kids:
            break
        _, piles, redeals = draw(st.sampled_from(kids))
    return State(state.game, piles, 1)


def _dead_refined_reference(model: PatriarchsModel, state: State) -> bool:
    """The Patriarchs last-pass rule as it is now (only cards of the reserves and the waste
    count as plays, the stock's only enable them), computed afresh for every j."""
    piles = state.piles
    usable = [[0] * 13 for _ in range(4)]
    counted = [[0] * 13 for _ in range(4)]
    for c in piles[model.stock]:
        usable[c // 13][c % 13] += 1
    for r in model.r:
        for c in piles[r]:
            usable[c // 13][c % 13] += 1
            counted[c // 13][c % 13] += 1
    tops = [(piles[u][-1] % 13, piles[d][-1] % 13) for u, d in zip(model.up, model.down)]

    def bound(s: int) -> int:
        a, k = tops[s]
        up_run = list(itertools.takewhile(lambda r: usable[s][r] > 0, range(a + 1, 13)))
        down_run = list(itertools.takewhile(lambda r: usable[s][r] > 0, range(k - 1, -1, -1)))
        # The runs close the gap when the Ace side can reach one below the King side's lowest.
        if a < k and a + len(up_run) + 1 >= k - len(down_run):
            return sum(counted[s])
        return sum(1 for r in up_run + down_run if counted[s][r])

    waste = piles[model.waste]
    n = len(waste)
    for j in range(1, n):
        c = waste[n - j]
        usable[c // 13][c % 13] += 1
        counted[c // 13][c % 13] += 1
        if sum(bound(s) for s in range(4)) < j:
            return True
    return False


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(state=patriarchs_dealt_out())
def test_the_patriarchs_dead_end_rule_is_computed_as_written(state: State) -> None:
    """Positions reached from a deal: the incremental rule gives the answers of the rule
    computed afresh for every j, and says "lost" wherever the rule as first written did."""
    model = PatriarchsModel(get_ruleset("patriarchs"))
    model.dead_stock_limit = 1_000  # the rule at any stock (the search skips long ones)
    dead = model.dead(state.piles, 1)
    assert dead is _dead_refined_reference(model, state)
    if _dead_reference(model, state):
        assert dead


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(state=patriarchs_last_pass())
def test_the_patriarchs_dead_end_rule_is_computed_as_written_on_constructed_positions(
    state: State,
) -> None:
    model = PatriarchsModel(get_ruleset("patriarchs"))
    model.dead_stock_limit = 1_000
    assert model.dead(state.piles, 1) is _dead_refined_reference(model, state)


def test_the_patriarchs_stock_only_enables_plays() -> None:
    """A stock card played home takes no waste card off: the rule as first written counted
    the stock's cards as plays and missed this loss, the rule now does not."""
    ranks = "A23456789TJQK"
    crossed = {
        **{f"f{i + 1}": " ".join(r + s for r in ranks) for i, s in enumerate("CDH")},
        **{f"f{i + 5}": " ".join(r + s for r in reversed(ranks)) for i, s in enumerate("CDH")},
        "f4": "AS 2S 3S 4S 5S 6S 7S 8S 9S TS",  # wants J♠, Q♠, K♠
        "f8": "KS QS JS TS 9S 8S 7S 6S 5S 4S",  # wants 3♠, 2♠, A♠
    }
    model = model_for("patriarchs")
    # K♠ on top of the waste needs J♠ and Q♠, which lie under it; with no reserve card only
    # K♠'s own play could take it off. The stock's 3♠ goes home, but uncovers nothing.
    lost = position("patriarchs", redeals=1, waste="QS JS 2S KS", stock="AS 3S", **crossed)
    assert exhaustive(lost) is False
    assert not _dead_reference(PatriarchsModel(get_ruleset("patriarchs")), lost)
    assert model.dead(lost.piles, 1)
    assert solve(lost).outcome is Outcome.LOST
    # With J♠ and Q♠ in the stock instead, they are dealt and go home, then K♠: a win.
    won = position("patriarchs", redeals=1, waste="2S KS", stock="AS QS JS 3S", **crossed)
    assert exhaustive(won) is True
    assert not model.dead(won.piles, 1)
    assert solve(won).outcome is Outcome.WINNABLE


def test_patriarchs_waiting_past_the_same_plays_costs_once() -> None:
    """The priced search: dealing past a play costs one discrepancy; dealing past the same
    plays again, or taking one of them at last, costs nothing; plays cost nothing, and so do
    dealing onto an empty waste and the redeal."""
    bases = {f"f{i + 1}": "A" + s for i, s in enumerate("CDHS")}
    bases |= {f"f{i + 5}": "K" + s for i, s in enumerate("CDHS")}
    rules = get_ruleset("patriarchs")
    model = PatriarchsModel(rules)
    r1, f1, f2 = rules.reserves[0], rules.foundations[0], rules.foundations[1]
    play = (r1, f1, 1)
    deal = (rules.stock, rules.waste, 1)
    start = position("patriarchs", bases, r1="2C", waste="9S", stock="9D 2D 8D 7D")
    kids = model.children(start.piles, 0)
    assert [mv for mv, _, _ in kids] == [play, deal]
    assert model.price(start.piles, 0, kids, None) == [(0, None), (1, frozenset({play}))]
    # 7♦ dealt: nothing new to play, so dealing on (8♦) is still the same wait.
    waiting = frozenset({play})
    _, after, _ = kids[1]
    kids = model.children(after, 0)
    assert [mv for mv, _, _ in kids] == [play, deal]
    assert model.price(after, 0, kids, waiting) == [(0, None), (0, waiting)]
    # 2♦ dealt: a new play; passing it by is a new choice, and buries 2♦: it costs two.
    _, after, _ = model.children(model.children(after, 0)[1][1], 0)[1]
    kids = model.children(after, 0)
    both = frozenset({play, (rules.waste, f2, 1)})
    assert [mv for mv, _, _ in kids] == [(rules.waste, f2, 1), play, deal]
    assert model.price(after, 0, kids, waiting) == [(0, None), (0, None), (2, both)]
    assert model.price(after, 0, kids, None) == [(0, None), (0, None), (2, both)]
    # Waiting past both: dealing on costs nothing.
    assert model.price(after, 0, kids, both) == [(0, None), (0, None), (0, both)]
    bare = position("patriarchs", bases, stock="9D 8D")
    kids = model.children(bare.piles, 0)
    assert model.price(bare.piles, 0, kids, None) == [(0, None)]
    # Dealing onto an empty waste buries nothing, and the redeal is free: both cost nothing.
    empty = position("patriarchs", bases, r1="2C", stock="9D 8D")
    kids = model.children(empty.piles, 0)
    assert model.price(empty.piles, 0, kids, None) == [(0, None), (0, frozenset({play}))]
    turn = position("patriarchs", bases, r1="2C", waste="9D 8D")
    kids = model.children(turn.piles, 0)
    assert [mv for mv, _, _ in kids] == [play, (rules.waste, rules.stock, 2)]
    assert model.price(turn.piles, 0, kids, None) == [(0, None), (0, None)]


def _no_dead_ends() -> PatriarchsModel:
    model = PatriarchsModel(get_ruleset("patriarchs"))
    model.dead_ends = False  # type: ignore[attr-defined]
    return model


@pytest.mark.slow
@pytest.mark.parametrize("number", [1, 4, 6, 9])
def test_the_patriarchs_dead_end_rule_never_calls_a_position_of_a_winning_line_lost(
    number: int,
) -> None:
    """Every position of a winning line found without the dead-end rule can be won, so the
    rule must let every one of them be."""
    rules = get_ruleset("patriarchs")
    deal = rules.deal(number)
    plain = _no_dead_ends()
    found = solve_piles(plain, deal.piles, 0, Budget(nodes=200_000))
    assert found.outcome is Outcome.WINNABLE, number
    model = PatriarchsModel(get_ruleset("patriarchs"))
    positions = line_positions(plain, deal.piles, 0, found.path)
    assert any(r == 1 for _, r in positions)  # the line goes into the last pass
    for piles, redeals in positions:
        assert not model.dead(piles, redeals)


@pytest.mark.slow
def test_patriarchs_bytes_piles_give_the_keys_and_moves_of_engine_piles() -> None:
    model = model_for("patriarchs")
    rules = get_ruleset("patriarchs")
    deal = rules.deal(3)
    found = solve(deal, Budget(nodes=200_000), short=False)
    state, redeals = deal, 0
    for mv in found.path[:150]:
        as_bytes = model.encode(state.piles)  # type: ignore[attr-defined]
        assert all(type(p) is bytes for p in as_bytes)
        assert model.key(as_bytes, redeals) == model.key(state.piles, redeals)
        kids = model.children(state.piles, redeals)
        assert [k[0] for k in kids] == [k[0] for k in model.children(as_bytes, redeals)]
        for step, child, _ in kids:
            after = rules.replay(state, to_moves(model, [step]))
            assert tuple(map(tuple, child)) == after.piles
        state = rules.replay(state, to_moves(model, [mv]))
        redeals = state.redeals


@pytest.mark.parametrize("game", ["castles-end", "quadrangle"])
def test_models_on_bytes_piles_give_the_keys_and_moves_of_engine_piles(game: str) -> None:
    model = model_for(game)
    rules = get_ruleset(game)
    state = rules.deal(7)
    for _ in range(40):
        as_bytes = model.encode(state.piles)  # type: ignore[attr-defined]
        assert all(type(p) is bytes for p in as_bytes)
        assert model.encode(as_bytes) == as_bytes  # type: ignore[attr-defined]
        assert model.key(as_bytes, 0) == model.key(state.piles, 0)
        kids = model.children(state.piles, 0)
        assert [k[0] for k in kids] == [k[0] for k in model.children(as_bytes, 0)]
        if not kids:
            break
        afters = []
        for mv, child, _ in kids:
            move = Move(rules.pile_ids[mv[0]], rules.pile_ids[mv[1]], mv[2])
            afters.append(rules.apply(state, move))
            assert tuple(map(tuple, child)) == afters[-1].piles
            assert model.key(child, 0) == model.key(afters[-1].piles, 0)
        state = afters[-1]  # a line of last moves: tableau building and dealing


@pytest.mark.slow
def test_best_first_and_depth_first_agree_on_castles_end_deals() -> None:
    """The best-first search (Castle's End has a ``score``) only reorders the search: the
    plain depth-first search over the same model gives the same answers."""
    model = model_for("castles-end")
    rules = get_ruleset("castles-end")

    class DepthFirst:
        slug, pile_ids = model.slug, model.pile_ids
        key, children, won, dead = model.key, model.children, model.won, model.dead
        encode = model.encode  # type: ignore[attr-defined]

    for number in range(1, 21):
        deal = rules.deal(number)
        best = solve(deal, Budget(nodes=200_000))
        plain = solve_piles(DepthFirst(), deal.piles, 0, Budget(nodes=2_000_000))
        assert best.outcome is plain.outcome, number
        assert best.outcome is not Outcome.UNKNOWN
        if best.outcome is Outcome.WINNABLE:
            assert replays_to_a_win(deal, best.moves)


def test_the_best_first_search_honours_its_budgets() -> None:
    deal = get_ruleset("castles-end").deal(80)  # lost: its whole tree takes about 10,000
    result = solve(deal, Budget(nodes=500))
    assert result.outcome is Outcome.UNKNOWN and result.nodes <= 500 and result.moves == ()
    calls = []

    def out_of_time() -> bool:
        calls.append(1)
        return len(calls) >= 2

    timed = solve(deal, Budget(nodes=10**9, out_of_time=out_of_time, check_every=100))
    assert timed.outcome is Outcome.UNKNOWN and timed.out_of_time
    assert len(calls) == 2 and timed.nodes <= 200
    assert solve(deal, Budget(nodes=200_000)).outcome is Outcome.LOST


def test_the_quadrangle_model_refuses_a_layout_its_key_cannot_slice() -> None:
    """The key takes the foundations and the tableau as two slices of the piles."""
    rules = get_ruleset("quadrangle")

    class Shuffled:  # the engine's layout with two tableau piles' places swapped
        slug, pile_ids, stock, waste = rules.slug, rules.pile_ids, rules.stock, rules.waste
        foundations, reserves = rules.foundations, rules.reserves
        tableau = (rules.tableau[1], rules.tableau[0], *rules.tableau[2:])

    with pytest.raises(ValueError, match="contiguous"):
        QuadrangleModel(Shuffled())  # type: ignore[arg-type]


def test_several_scores_take_turns_within_one_budget() -> None:
    """A model with several ``scores`` (Quadrangle's) gets one best-first search per score,
    each with an equal share of the positions left: the budget holds for all of them, every
    score has its turn when none decides, and a loss is still proved by a search that enters
    every reachable position."""
    model = model_for("castles-end")
    used: list[int] = []

    def scoring(i: int) -> Callable[[Piles], int]:
        def score(piles: Piles) -> int:
            if not used or used[-1] != i:
                used.append(i)
            return model.score(piles)  # type: ignore[attr-defined,no-any-return]

        return score

    class InTurn:
        slug, pile_ids = model.slug, model.pile_ids
        key, children, won, dead = model.key, model.children, model.won, model.dead
        encode = model.encode  # type: ignore[attr-defined]
        scores = (scoring(0), scoring(1), scoring(2))

    deal = get_ruleset("castles-end").deal(80)  # lost: its whole tree takes about 10,000
    # (2,000 positions: the portfolio's depth-first search takes 100, each score a third of
    # the rest)
    short = solve_piles(InTurn(), deal.piles, 0, Budget(nodes=2_000))
    assert short.outcome is Outcome.UNKNOWN and short.nodes <= 2_000
    assert used == [0, 1, 2]
    used.clear()
    # 60,000: the depth-first search's 3,000 prove nothing, the first score's 19,000 do
    proved = solve_piles(InTurn(), deal.piles, 0, Budget(nodes=60_000))
    assert proved.outcome is Outcome.LOST and used == [0]


def test_quadrangle_searches_on_three_weights_of_the_waste() -> None:
    model = QuadrangleModel(get_ruleset("quadrangle"))
    piles = model.encode(get_ruleset("quadrangle").deal(1).piles)
    home = 8 * sum(len(piles[f]) for f in model.f)
    waste = len(piles[model.waste])
    assert [s(piles) for s in model.scores] == [home - w * waste for w in (1, 8, 16)]
    assert model.score(piles) == model.scores[0](piles)
