"""Properties every game keeps in play, and the engine's purity rules.

Playouts: each hypothesis example deals one game and plays up to ``MAX_MOVES`` moves; at each
step it takes the next drawn number and uses it as an index into ``legal_moves`` (in "greedy"
examples, into the moves that put a card on a foundation, when there are any, so that play gets
further: foundations fill and wrap, the stock runs out, Patriarchs' foundations meet). Random
play from a deal seldom empties a tableau pile or lasts long in Castle's End, so the same checks
also run from *scrambled* positions: valid foundations of random lengths, the other cards spread
at random, the refill rules respected. Along the way it checks:

(a) the multiset of card faces never changes;
(b) every foundation is a valid sequence for its game — checked by an independent reading of
    rules.md, not by the engine's own refusal functions — and cards leave foundations only by
    Patriarchs' transfers;
(c) every listed legal move is accepted, and none is listed twice;
(d) of all (source, target, 1–3 cards / whole waste / whole pile) moves, exactly the listed ones
    are accepted; the rest are refused with ``IllegalMove``/``InvalidMove`` and change nothing;
(e) ``loads(dumps(state)) == state``;
(f) replaying the move log (as text) from the deal reproduces the state;
(g) the public view hides every hidden card;
(h) ``Step.revealed`` is True exactly when a card left the stock or a face-down card
    was turned up;
(i) ``Step.changed`` names exactly the piles whose contents differ;
and that ``status`` agrees with the foundations and ``legal_moves``.

Purity: every module under app/engine imports only the standard library and ``app.engine.*``,
and nothing that reads a clock, randomness, the environment or files.

``pytest --hypothesis-show-statistics`` shows how often playouts reached each milestone.
"""

from __future__ import annotations

import ast
import random
import sys
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, note, settings
from hypothesis import strategies as st

import app.engine
from app.engine import (
    GAMES,
    MAX_DEAL,
    IllegalMove,
    InvalidMove,
    Move,
    Ruleset,
    ShownPile,
    State,
    Status,
    Step,
    dumps,
    get_ruleset,
    loads,
)

SLUGS = ("quadrangle", "quadruple-interchange", "corners", "castles-end", "patriarchs")
MAX_MOVES = 150
CHOICE_MAX = 1023  # a drawn choice picks legal[choice % len(legal)]
REFUSAL_EVERY = 10  # (d) is costly (~2,000 candidate moves a position): check every 10th step

PLAY_SETTINGS = settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
SCRAMBLED_SETTINGS = settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
REFUSAL_SETTINGS = settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)

Pile = tuple[int, ...]


# -- independent card arithmetic (rules.md §0), deliberately not imported from the engine ------


def rank(card: int) -> int:
    return card % 13 + 1


def suit(card: int) -> int:
    return card // 13


def face(card: int) -> int:
    """The face of a card, whether it lies face up or face down (``~face``)."""
    return card if card >= 0 else ~card


def code(card: int) -> str:
    return "A23456789TJQK"[card % 13] + "CDHS"[card // 13]


def show(pile: Pile) -> str:
    return " ".join(code(c) if c >= 0 else f"({code(~c)})" for c in pile) or "(empty)"


# -- drawing a playout --------------------------------------------------------------------------


@dataclass(frozen=True)
class Plan:
    number: int
    choices: tuple[int, ...]
    greedy: bool


@st.composite
def plans(draw: st.DrawFn, max_moves: int = MAX_MOVES) -> Plan:
    number = draw(st.sampled_from((1, 2, 1_000_000, MAX_DEAL)) | st.integers(1, MAX_DEAL))
    length = draw(st.integers(0, max_moves) | st.just(max_moves))
    choices = draw(st.lists(st.integers(0, CHOICE_MAX), min_size=length, max_size=length))
    return Plan(number, tuple(choices), draw(st.booleans()))


def pick(legal: Sequence[Move], choice: int, greedy: bool) -> Move:
    if greedy:
        home = [m for m in legal if m.target[0] == "f" and m.source[0] != "f"]
        if home:
            return home[choice % len(home)]
    return legal[choice % len(legal)]


def piles_of(rules: Ruleset, state: State) -> dict[str, Pile]:
    return dict(zip(rules.pile_ids, state.piles))


# -- (a) the cards ------------------------------------------------------------------------------


DECKS = {
    "quadrangle": 2,
    "quadruple-interchange": 4,
    "corners": 1,
    "castles-end": 1,
    "patriarchs": 2,
}


def check_cards(rules: Ruleset, state: State) -> None:
    faces = Counter(face(c) for pile in state.piles for c in pile)
    deck = Counter(dict.fromkeys(range(52), DECKS[state.game]))
    assert faces == deck, (
        f"cards appeared: {sorted((faces - deck).elements())}, "
        f"vanished: {sorted((deck - faces).elements())}"
    )


# -- (b) the foundations, read from rules.md ----------------------------------------------------

FOUNDATIONS = {
    "quadrangle": 8,
    "quadruple-interchange": 16,
    "corners": 4,
    "castles-end": 4,
    "patriarchs": 8,
}


def builds_up(pile: Pile, *, wrap: bool) -> bool:
    """At most 13 face-up cards, each one rank above the one below it, in one suit."""
    return (
        len(pile) <= 13
        and all(c >= 0 for c in pile)
        and all(
            suit(above) == suit(below)
            and rank(above) == (rank(below) % 13 + 1 if wrap else rank(below) + 1)
            for below, above in pairwise(pile)
        )
    )


def quadrangle_foundations(start: dict[str, Pile], found: list[Pile]) -> None:
    # Q1: f1 keeps its dealt base card; every foundation starts at the base rank, any suit,
    # and builds up in that suit with wrap.
    base = start["f1"][0]
    assert found[0][:1] == (base,), "f1 lost its dealt base card"
    for pile in found:
        assert not pile or rank(pile[0]) == rank(base), f"{show(pile)} starts off the base rank"
        assert builds_up(pile, wrap=True), f"{show(pile)} is not a foundation sequence"


def quadruple_interchange_foundations(start: dict[str, Pile], found: list[Pile]) -> None:
    # I1: A → K in suit, no wrap.
    for pile in found:
        assert not pile or rank(pile[0]) == 1, f"{show(pile)} does not start with an Ace"
        assert builds_up(pile, wrap=False), f"{show(pile)} is not a foundation sequence"


def corners_foundations(start: dict[str, Pile], found: list[Pile]) -> None:
    # C1: f1…f4 are ♣ ♦ ♥ ♠, each from its own dealt base, up with wrap.
    for s, pile in enumerate(found):
        dealt = start[f"f{s + 1}"][:1]
        assert dealt and suit(dealt[0]) == s, f"f{s + 1} started as {show(dealt)}"
        assert pile[:1] == dealt, f"f{s + 1} lost its dealt base card"
        assert builds_up(pile, wrap=True), f"{show(pile)} is not a foundation sequence"


def castles_end_foundations(start: dict[str, Pile], found: list[Pile]) -> None:
    # E1/E2: one base rank for all foundations, chosen by the first card; up in suit with wrap.
    assert len({rank(pile[0]) for pile in found if pile}) <= 1, "two different base ranks"
    for pile in found:
        assert builds_up(pile, wrap=True), f"{show(pile)} is not a foundation sequence"


def patriarchs_foundations(start: dict[str, Pile], found: list[Pile]) -> None:
    # P1: f1…f4 the Aces of C D H S up to K; f5…f8 the Kings of C D H S down to A; no wrap.
    for s in range(4):
        up, down = found[s], found[4 + s]
        assert 1 <= len(up) <= 13 and up == tuple(range(13 * s, 13 * s + len(up))), show(up)
        assert 1 <= len(down) <= 13 and down == tuple(
            range(13 * s + 12, 13 * s + 12 - len(down), -1)
        ), show(down)


FOUNDATION_CHECKS: dict[str, Callable[[dict[str, Pile], list[Pile]], None]] = {
    "quadrangle": quadrangle_foundations,
    "quadruple-interchange": quadruple_interchange_foundations,
    "corners": corners_foundations,
    "castles-end": castles_end_foundations,
    "patriarchs": patriarchs_foundations,
}


def check_foundations(rules: Ruleset, start: State, state: State) -> None:
    piles = piles_of(rules, state)
    found = [piles[f"f{i + 1}"] for i in range(FOUNDATIONS[state.game])]
    FOUNDATION_CHECKS[state.game](piles_of(rules, start), found)


def check_nothing_leaves_foundations(rules: Ruleset, step: Step) -> None:
    """§0: no card leaves a foundation, except by a Patriarchs transfer (one card, §6 P5)."""
    before, after = piles_of(rules, step.before), piles_of(rules, step.after)
    for pid in before:
        if pid[0] != "f":
            continue
        if step.before.game == "patriarchs" and pid == step.move.source:
            assert after[pid] == before[pid][:-1], f"{step.move} took more than one card"
        else:
            assert after[pid][: len(before[pid])] == before[pid], f"a card left {pid}"


# -- (c) and (d): what legal_moves lists is exactly what apply accepts --------------------------


def check_legal_moves(rules: Ruleset, state: State, legal: list[Move]) -> None:
    assert len(set(legal)) == len(legal), (
        f"listed twice: {[m for m in legal if legal.count(m) > 1]}"
    )
    for move in legal:
        rules.apply(state, move)  # raises if a listed move is refused


def candidates(rules: Ruleset, state: State) -> Iterator[Move]:
    """Every (source, target) pair of the layout with 1, 2, 3 cards, the whole waste and the
    whole source pile, and a few moves that cannot even be asked for."""
    piles = piles_of(rules, state)
    counts = {1, 2, 3}
    if piles.get("waste"):
        counts.add(len(piles["waste"]))
    for source, pile in piles.items():
        for target in piles:
            for count in counts | {len(pile) or 1}:
                yield Move(source, target, count)
    first, last = rules.pile_ids[0], rules.pile_ids[-1]
    yield from (Move(first, last, 0), Move(last, first, -1), Move("x1", last), Move(first, "t99"))


def check_refusals(rules: Ruleset, state: State, legal: list[Move]) -> None:
    """(d): of all candidate moves, ``apply`` accepts exactly the listed ones; it refuses the
    others with a domain error and a message, and a refusal leaves the state as it was."""
    listed, text = set(legal), dumps(state)
    wrongly_accepted, wrongly_refused = [], []
    for move in candidates(rules, state):
        try:
            rules.apply(state, move)
        except (IllegalMove, InvalidMove) as exc:
            assert str(exc), f"{move} was refused without a message"
            if move in listed:
                wrongly_refused.append(f"{move}: {exc}")
        else:
            if move not in listed:
                wrongly_accepted.append(str(move))
    assert not wrongly_accepted, f"accepted but not in legal_moves: {wrongly_accepted}"
    assert not wrongly_refused, f"in legal_moves but refused: {wrongly_refused}"
    assert dumps(state) == text, "a refused move changed the state"


# -- (g) the public view ------------------------------------------------------------------------


def check_public_view(rules: Ruleset, state: State) -> None:
    view = rules.public_view(state)
    assert list(view) == list(rules.pile_ids)
    hidden = nones = 0
    for pid, pile in piles_of(rules, state).items():
        if pid == "stock":
            assert view[pid] == ShownPile(None, len(pile)), "the stock must show only its size"
            continue
        cards = view[pid].cards
        assert cards is not None and len(cards) == len(pile) == view[pid].count
        for card, seen in zip(pile, cards):
            if card < 0:
                assert seen is None, f"{pid} shows a face-down card"
            else:
                assert seen == code(card), f"{pid} shows {seen} for {code(card)}"
        hidden += sum(c < 0 for c in pile)
        nones += cards.count(None)
    assert nones == hidden


# -- (h) and (i): the step record ---------------------------------------------------------------


def is_redeal(move: Move) -> bool:
    return move.source == "waste" and move.target == "stock"


def expected_revealed(rules: Ruleset, step: Step) -> bool:
    """A step reveals when a card leaves the stock (counted after a redeal has turned the waste
    over, so a Corners redeal that refills reserves reveals) or a face-down card turns up."""
    before, after = piles_of(rules, step.before), piles_of(rules, step.after)
    if "stock" not in before:
        stock_gave = False
    elif is_redeal(step.move):
        stock_gave = len(after["stock"]) < len(before["waste"])
    else:
        stock_gave = len(after["stock"]) < len(before["stock"])
    face_down_before = sum(c < 0 for pile in step.before.piles for c in pile)
    face_down_after = sum(c < 0 for pile in step.after.piles for c in pile)
    return stock_gave or face_down_after < face_down_before


def check_step(rules: Ruleset, state: State, move: Move, step: Step) -> None:
    assert step.before == state and step.move == move
    assert step.after == rules.apply(state, move)
    assert step.revealed == expected_revealed(rules, step), f"revealed wrong for {move}"
    differ = {
        pid for pid, a, b in zip(rules.pile_ids, step.before.piles, step.after.piles) if a != b
    }
    assert len(set(step.changed)) == len(step.changed), f"changed repeats: {step.changed}"
    assert set(step.changed) == differ, f"changed {step.changed}, but {sorted(differ)} differ"


# -- playing and checking -----------------------------------------------------------------------


def check_position(rules: Ruleset, start: State, state: State) -> None:
    check_cards(rules, state)  # (a)
    check_foundations(rules, start, state)  # (b)
    assert loads(dumps(state)) == state  # (e)
    check_public_view(rules, state)  # (g)


def check_status(rules: Ruleset, state: State) -> None:
    won = sum(len(state.piles[i]) for i in rules.foundations) == 52 * DECKS[state.game]
    status = Status.WON if won else Status.PLAYING if rules.legal_moves(state) else Status.LOST
    assert rules.status(state) == status


def play_checked(
    rules: Ruleset,
    start: State,
    plan: Plan,
    *,
    invariants: bool = True,
    refusal_phase: int | None = None,
) -> tuple[State, list[Move]]:
    """Play ``plan`` from ``start``, checking the invariants at every step (unless told not
    to) and the refusals (d) at every ``REFUSAL_EVERY``-th step and at the end."""
    state, log = start, list[Move]()
    try:
        if invariants:
            check_position(rules, start, state)
        for i, choice in enumerate((*plan.choices, None)):
            legal = rules.legal_moves(state)
            if invariants:
                check_legal_moves(rules, state, legal)  # (c)
            if refusal_phase is not None and (
                i % REFUSAL_EVERY == refusal_phase or choice is None or not legal
            ):
                check_refusals(rules, state, legal)  # (d)
            if choice is None or not legal:
                break
            move = pick(legal, choice, plan.greedy)
            step = rules.step(state, move)
            if invariants:
                check_step(rules, state, move, step)  # (h), (i)
                check_nothing_leaves_foundations(rules, step)  # (b)
                check_position(rules, start, step.after)
            state = step.after
            log.append(move)
        if invariants:
            check_status(rules, state)
            # (f) the move log, stored as text, replays to the same state.
            assert rules.replay(start, [Move.parse(str(m)) for m in log]) == state
    finally:
        note(f"{rules.slug}: {len(log)} moves: {' '.join(map(str, log))}")
    return state, log


def milestones(rules: Ruleset, start: State, state: State, log: list[Move]) -> dict[str, bool]:
    """What a playout reached, for ``pytest --hypothesis-show-statistics``."""
    found = [state.piles[i] for i in rules.foundations]
    return {
        "played 100+ moves": len(log) >= 100,
        "a redeal": any(is_redeal(m) for m in log),
        "a foundation card moved": any(m.source[0] == "f" for m in log),
        "a face-down card turned up": sum(c < 0 for p in state.piles for c in p)
        < sum(c < 0 for p in start.piles for c in p),
        "a foundation wrapped past the King": any(
            rank(a) == 13 and rank(b) == 1 for f in found for a, b in pairwise(f)
        ),
        "a full foundation": any(len(f) == 13 for f in found),
        "an empty tableau pile": any(
            not p for pid, p in piles_of(rules, state).items() if pid[0] == "t"
        ),
    }


def record(rules: Ruleset, start: State, state: State, log: list[Move]) -> None:
    for what, seen in milestones(rules, start, state, log).items():
        event(f"{what}: {'yes' if seen else 'no'}")


# -- positions that random play from a deal rarely reaches --------------------------------------


def cuts(cards: list[int], n: int, rnd: random.Random) -> list[list[int]]:
    """``cards`` cut into ``n`` piles of random sizes (some may be empty)."""
    points = sorted(rnd.randint(0, len(cards)) for _ in range(n - 1))
    return [cards[a:b] for a, b in zip([0, *points], [*points, len(cards)])]


def scrambled(slug: str, rnd: random.Random) -> State:
    """A well-formed position of ``slug``: valid foundations of random lengths, the other cards
    spread at random over the other piles, and the refill rules respected (no pile stays vacant
    while the pile that refills it has cards). Random play from a deal seldom gets far enough to
    empty a tableau pile, complete foundations or meet Patriarchs' foundations in the middle."""
    rules = get_ruleset(slug)
    piles: dict[str, list[int]] = {pid: [] for pid in rules.pile_ids}
    left = Counter(dict.fromkeys(range(52), DECKS[slug]))
    redeals = 0

    def lay(pid: str, first: int, length: int, *, down: bool = False, wrap: bool = True) -> None:
        s, r = suit(first), rank(first) - 1
        offsets = [r - k if down else r + k for k in range(length)]
        piles[pid] = [13 * s + (x % 13 if wrap else x) for x in offsets]
        left.subtract(piles[pid])

    if slug == "quadrangle":  # Q1: all from one base rank; two foundations of each suit
        base, suits = rnd.randint(0, 12), [0, 0, 1, 1, 2, 2, 3, 3]
        rnd.shuffle(suits)
        for i, s in enumerate(suits):
            lay(f"f{i + 1}", 13 * s + base, rnd.randint(1 if i == 0 else 0, 13))
    elif slug == "quadruple-interchange":  # I1: A upward, four foundations of each suit
        for i in range(16):
            lay(f"f{i + 1}", 13 * (i % 4), rnd.randint(0, 13), wrap=False)
    elif slug == "corners":  # C1: fixed suits, each from its own base
        for s in range(4):
            lay(f"f{s + 1}", 13 * s + rnd.randint(0, 12), rnd.randint(1, 13))
        redeals = rnd.randint(0, 2)
    elif slug == "castles-end":  # E1/E2: one base rank (or none yet), one foundation a suit
        base, suits = rnd.randint(0, 12), [0, 1, 2, 3]
        rnd.shuffle(suits)
        for i, s in enumerate(suits):
            lay(f"f{i + 1}", 13 * s + base, rnd.randint(0, 13))
    else:  # P1: Aces up, Kings down; often exactly meeting in the middle (P5)
        for s in range(4):
            up = rnd.randint(1, 12)
            down = 13 - up if rnd.random() < 0.5 else rnd.randint(1, 13)
            lay(f"f{s + 1}", 13 * s, up, wrap=False)
            lay(f"f{s + 5}", 13 * s + 12, down, down=True, wrap=False)
        redeals = rnd.randint(0, 1)

    rest = list(left.elements())
    rnd.shuffle(rest)
    tableau = [pid for pid in rules.pile_ids if pid[0] == "t"]
    reserves = [pid for pid in rules.pile_ids if pid[0] == "r"]
    if slug == "quadrangle" and len(rest) >= 12 and rnd.random() < 0.6:
        for pid in tableau:  # Q4: while the waste or stock has cards, no pile is empty
            piles[pid].append(rest.pop())
        spread = ["stock", "waste", *tableau]
    elif slug in ("quadrangle", "castles-end"):
        spread = tableau
    elif slug == "quadruple-interchange":
        spread = ["stock", "waste", *tableau]
    elif len(rest) >= len(reserves) and (slug == "patriarchs" or rnd.random() < 0.6):
        for pid in reserves:  # C3/P3: while the stock (or waste) has cards, no reserve is vacant
            piles[pid].append(rest.pop())
        spread = ["stock", "waste"]
    else:  # some reserves vacant: so the stock is empty (C3), or stock and waste (P3)
        k = len(rest) if slug == "patriarchs" else rnd.randint(0, min(len(rest), len(reserves)))
        for pid in rnd.sample(reserves, k):
            piles[pid].append(rest.pop())
        spread = ["waste"]
    for pid, cards in zip(spread, cuts(rest, len(spread), rnd)):
        piles[pid].extend(cards)
    if slug == "quadruple-interchange":  # I5: face-down cards anywhere but on top
        for pid in tableau:
            pile = piles[pid]
            piles[pid] = [
                ~c if i < len(pile) - 1 and rnd.random() < 0.4 else c for i, c in enumerate(pile)
            ]
    return State(slug, tuple(tuple(piles[pid]) for pid in rules.pile_ids), redeals)


# -- the tests ----------------------------------------------------------------------------------


def test_the_registry_holds_the_five_games() -> None:
    assert sorted(GAMES) == sorted(SLUGS)


@pytest.mark.slow
@pytest.mark.parametrize("slug", SLUGS)
@PLAY_SETTINGS
@given(plan=plans())
def test_random_play_keeps_every_invariant(slug: str, plan: Plan) -> None:
    rules = get_ruleset(slug)
    start = rules.deal(plan.number)
    state, log = play_checked(rules, start, plan)
    assert rules.replay(rules.deal(plan.number), log) == state  # (f), from the deal itself
    record(rules, start, state, log)


@pytest.mark.slow
@pytest.mark.parametrize("slug", SLUGS)
@REFUSAL_SETTINGS
@given(plan=plans(), phase=st.integers(0, REFUSAL_EVERY - 1))
def test_moves_not_listed_are_refused(slug: str, plan: Plan, phase: int) -> None:
    rules = get_ruleset(slug)
    play_checked(rules, rules.deal(plan.number), plan, invariants=False, refusal_phase=phase)


@pytest.mark.parametrize("slug", SLUGS)
@SCRAMBLED_SETTINGS
@given(
    rnd=st.randoms(use_true_random=False),
    plan=plans(max_moves=30),
    phase=st.integers(0, REFUSAL_EVERY - 1),
)
@pytest.mark.slow
def test_scrambled_positions_keep_every_invariant(
    slug: str, rnd: random.Random, plan: Plan, phase: int
) -> None:
    rules = get_ruleset(slug)
    start = scrambled(slug, rnd)
    note(f"start: {dumps(start)}")
    state, log = play_checked(rules, start, plan, refusal_phase=phase)
    record(rules, start, state, log)


# -- the engine is pure: standard library only, no I/O, no clock, no randomness -----------------

ENGINE_DIR = Path(app.engine.__file__).parent
ENGINE_MODULES = sorted(ENGINE_DIR.rglob("*.py"))
FORBIDDEN_MODULES = frozenset({
    "random", "secrets", "uuid", "time", "datetime", "zoneinfo", "calendar",  # chance, clock
    "os", "sys", "io", "pathlib", "shutil", "tempfile", "glob", "fileinput", "builtins",  # I/O
    "socket", "ssl", "select", "selectors", "subprocess", "signal", "urllib", "http", "email",
    "threading", "multiprocessing", "asyncio", "concurrent", "ctypes", "importlib",
    "sqlite3", "dbm", "pickle", "shelve", "logging",
})  # fmt: skip
FORBIDDEN_BUILTINS = frozenset({
    "open", "print", "input", "eval", "exec", "compile", "__import__", "breakpoint", "globals",
    "vars", "exit", "quit",
})  # fmt: skip
FORBIDDEN_ATTRIBUTES = frozenset({"open", "urandom", "getenv", "environ", "system", "popen"})


def module_name(path: Path) -> str:
    parts = path.relative_to(ENGINE_DIR.parent.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_names(path: Path) -> Iterator[tuple[str, int]]:
    """Every module an engine file imports, relative imports resolved, with its line."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = module_name(path).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from ((alias.name, node.lineno) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                yield ".".join([*base, *([node.module] if node.module else [])]), node.lineno
            else:
                yield node.module or "", node.lineno


def test_the_engine_has_modules_to_check() -> None:
    names = {module_name(p) for p in ENGINE_MODULES}
    assert {"app.engine", "app.engine.ruleset", "app.engine.games.corners"} <= names


@pytest.mark.parametrize("path", ENGINE_MODULES, ids=lambda p: module_name(p))
def test_engine_imports_only_the_standard_library(path: Path) -> None:
    bad = []
    for name, line in imported_names(path):
        top = name.split(".")[0]
        if name == "app.engine" or name.startswith("app.engine."):
            continue
        if top not in sys.stdlib_module_names or top in FORBIDDEN_MODULES:
            bad.append(f"line {line}: {name}")
    assert not bad, f"{module_name(path)} imports {bad}"


@pytest.mark.parametrize("path", ENGINE_MODULES, ids=lambda p: module_name(p))
def test_engine_does_no_io(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    bad = [
        f"line {node.lineno}: {node.id}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Name) and node.id in FORBIDDEN_BUILTINS
    ] + [
        f"line {node.lineno}: .{node.attr}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and node.attr in FORBIDDEN_ATTRIBUTES
    ]
    assert not bad, f"{module_name(path)} uses {bad}"
