"""The shared conventions of rules.md §0, for every game.

Most are also shown game by game in the per-game modules; here a deterministic walk through a
real deal of each game checks them on every step it takes.
"""

from __future__ import annotations

import random

import pytest

from app.engine import GAMES, Move, ShownPile, State, Status, Step, get_ruleset
from app.engine.layout import PileKind
from tests.engine.builders import moves, play, position, refuse, show

SLUGS = sorted(GAMES)
WITH_STOCK = [slug for slug in SLUGS if "stock" in GAMES[slug].pile_ids]
DEAL = Move("stock", "waste")


def walk(slug: str, number: int, steps: int = 400) -> list[Step]:
    """Play seeded random legal moves from a deal, preferring anything to dealing."""
    rules = get_ruleset(slug)
    chooser = random.Random(f"{slug}:{number}")
    state, taken = rules.deal(number), []
    for _ in range(steps):
        legal = rules.legal_moves(state)
        if not legal:
            break
        others = [m for m in legal if m != DEAL]
        move = chooser.choice(others if others and chooser.random() < 0.7 else legal)
        step = rules.step(state, move)
        taken.append(step)
        state = step.after
    return taken


def face_down(state: State) -> int:
    return sum(1 for pile in state.piles for c in pile if c < 0)


@pytest.fixture(scope="module", params=SLUGS)
def steps(request: pytest.FixtureRequest) -> list[Step]:
    """Walks from deals 1…8 (Castle's End walks are short: random bases stall quickly)."""
    return [step for number in range(1, 9) for step in walk(request.param, number, 150)]


def test_no_card_ever_leaves_a_foundation_except_patriarchs_transfers(steps: list[Step]) -> None:
    rules = get_ruleset(steps[0].before.game)
    for step in steps:
        if rules.kind(rules.pile_index(step.move.source)) is PileKind.FOUNDATION:
            assert rules.slug == "patriarchs"
            assert rules.kind(rules.pile_index(step.move.target)) is PileKind.FOUNDATION
        for f in rules.foundations:
            assert len(step.after.piles[f]) >= len(step.before.piles[f]) or (
                rules.slug == "patriarchs" and rules.pile_ids[f] == step.move.source
            )


@pytest.mark.parametrize("slug", SLUGS)
def test_foundation_cards_are_refused_everywhere_else(slug: str) -> None:
    rules = get_ruleset(slug)
    state = rules.deal(3)
    if slug in ("quadruple-interchange", "castles-end"):
        state = rules.apply(state, next(m for m in rules.legal_moves(state) if "f" in m.target))
    source = next(f for f in rules.foundations if state.piles[f])
    for target in rules.pile_ids:
        move = Move(rules.pile_ids[source], target)
        if target == move.source or (slug == "patriarchs" and target.startswith("f")):
            continue
        assert move not in rules.legal_moves(state)
        words = "own suit" if slug == "patriarchs" else "no card ever leaves a foundation"
        refuse(state, str(move), words)


def test_nothing_goes_to_a_foundation_automatically(steps: list[Step]) -> None:
    rules = get_ruleset(steps[0].before.game)
    for step in steps:
        moved = {step.move.source, step.move.target}
        for f in rules.foundations:
            if step.before.piles[f] != step.after.piles[f]:
                assert rules.pile_ids[f] in moved, step.move


def test_every_step_changes_exactly_the_piles_it_reports(steps: list[Step]) -> None:
    rules = get_ruleset(steps[0].before.game)
    for step in steps:
        changed = tuple(
            pid for pid, a, b in zip(rules.pile_ids, step.before.piles, step.after.piles) if a != b
        )
        assert step.changed == changed
        assert {step.move.source, step.move.target} <= set(changed)


def test_revealed_only_for_dealing_refilling_from_the_stock_or_turning_a_card_up(
    steps: list[Step],
) -> None:
    rules = get_ruleset(steps[0].before.game)
    seen = set()
    for step in steps:
        before, after, move = step.before, step.after, step.move
        flipped = face_down(after) < face_down(before)
        if rules.stock < 0:
            from_stock = False
        elif move == Move("waste", "stock", move.count):  # the redeal may fill reserves
            from_stock = len(after.piles[rules.stock]) < move.count
        else:
            from_stock = len(after.piles[rules.stock]) < len(before.piles[rules.stock])
        assert step.revealed is (flipped or from_stock), step.move
        seen.add(step.revealed)
    assert seen == {True, False} or rules.slug == "castles-end"


@pytest.mark.parametrize("slug", WITH_STOCK)
def test_dealing_is_always_allowed_while_the_stock_has_cards(slug: str) -> None:
    rules = get_ruleset(slug)
    for step in walk(slug, 4):
        if step.before.piles[rules.stock]:
            assert DEAL in rules.legal_moves(step.before)
    state = rules.deal(4)
    assert DEAL in rules.legal_moves(state)
    dealt = play(state, "stock-waste")
    assert dealt.revealed is True
    assert dealt.changed == ("stock", "waste")


@pytest.mark.parametrize("slug", ["corners", "patriarchs"])
def test_dealing_is_allowed_after_the_last_redeal(slug: str) -> None:
    foundations = {"f1": "AC", "f2": "AD", "f3": "AH", "f4": "AS"}
    if slug == "patriarchs":
        foundations.update({"f5": "KC", "f6": "KD", "f7": "KH", "f8": "KS"})
    rules = get_ruleset(slug)
    state = position(slug, redeals=rules.max_redeals or 0, stock="9S 9D", **foundations)
    assert rules.redeals_left(state) == 0
    assert show(play(state, "stock-waste").after, "waste") == "9D"


@pytest.mark.parametrize("slug", SLUGS)
def test_a_move_onto_its_own_pile_or_from_an_empty_pile_is_refused(slug: str) -> None:
    rules = get_ruleset(slug)
    state = rules.deal(1)
    top = next(p.id for p in rules.layout.piles if rules.pile(state, p.id))
    refuse(state, f"{top}-{top}", "already on")
    empty = next(p.id for p in rules.layout.piles if not rules.pile(state, p.id))
    message = refuse(state, f"{empty}-{top}", "is empty")
    assert empty in message


@pytest.mark.parametrize("slug", SLUGS)
def test_a_fresh_deal_is_in_play(slug: str) -> None:
    rules = get_ruleset(slug)
    state = rules.deal(1)
    assert rules.status(state) is Status.PLAYING
    assert moves(state)


def test_won_when_every_card_is_on_a_foundation() -> None:
    rules = get_ruleset("castles-end")
    suits = {f"f{i + 1}": " ".join(r + s for r in "89TJQKA234567") for i, s in enumerate("CDHS")}
    won = position("castles-end", suits)
    assert rules.status(won) is Status.WON
    assert rules.on_foundations(won) == 52


def test_won_in_patriarchs_with_both_foundations_of_each_suit_full() -> None:
    rules = get_ruleset("patriarchs")
    up = {f"f{i + 1}": " ".join(r + s for r in "A23456789TJQK") for i, s in enumerate("CDHS")}
    down = {f"f{i + 5}": " ".join(r + s for r in "KQJT98765432A") for i, s in enumerate("CDHS")}
    assert rules.status(position("patriarchs", {**up, **down})) is Status.WON


def test_lost_when_no_legal_move_exists() -> None:
    rules = get_ruleset("corners")
    stuck = position(
        "corners",
        redeals=2,
        f1="KC",
        f2="QD",
        f3="7H",
        f4="5S",
        r1="3C",
        r2="3D",
        r3="3H",
        r4="3S",
        waste="4C",
    )
    assert rules.legal_moves(stuck) == []
    assert rules.status(stuck) is Status.LOST
    assert rules.status(stuck, can_undo=False) is Status.LOST
    # No moves left, but the last step can be taken back: the game is still in play.
    assert rules.status(stuck, can_undo=True) is Status.PLAYING
    # With a redeal left, the same table is still in play.
    assert rules.status(State(stuck.game, stuck.piles, 1)) is Status.PLAYING


def test_public_view_hides_face_down_cards_and_the_stock_order() -> None:
    rules = get_ruleset("quadruple-interchange")
    state = rules.deal(1)
    view = rules.public_view(state)
    assert view["stock"] == ShownPile(None, 87)
    assert view["t1"] == ShownPile(
        ("5C", None, "6H", None, "7S", None, "8S", None, "JC", None, "TS"), 11
    )
    assert view["waste"] == ShownPile((), 0)
    full = rules.full_view(state)
    assert full["t1"][1] == "AC" and len(full["stock"]) == 87


def test_public_view_of_only_some_piles_shows_just_those() -> None:
    # The fragment for the piles a move changed: the same view of each, and nothing else.
    rules = get_ruleset("quadruple-interchange")
    state = rules.deal(1)
    part = rules.public_view(state, only={"t1", "stock"})
    assert set(part) == {"t1", "stock"}
    assert part == {pid: rules.public_view(state)[pid] for pid in ("t1", "stock")}
    assert part["stock"].cards is None and None in (part["t1"].cards or ())


@pytest.mark.parametrize(
    ("slug", "base"),
    [
        ("quadrangle", 2),  # §2: the rank of the card dealt to f1 (deal 1: 2♥)
        ("quadruple-interchange", 1),  # I1: every foundation starts from an Ace
        ("castles-end", None),  # E1: none until the player chooses it
        ("corners", None),  # C1: each foundation from its own base card
        ("patriarchs", None),  # P1: Aces up and Kings down, no one rank for all
    ],
)
def test_the_base_rank_shared_by_every_foundation(slug: str, base: int | None) -> None:
    rules = get_ruleset(slug)
    assert rules.base_rank(rules.deal(1)) == base
