"""The engine's public help for the interface: game facts, the Deal button, moves in words."""

from __future__ import annotations

import pytest

from app.engine import GAMES, IllegalMove, InvalidMove, Move, State, get_ruleset
from app.engine.cards import RANKS
from tests.engine.builders import position, show


@pytest.mark.parametrize("slug", sorted(GAMES))
def test_every_game_states_its_facts(slug: str) -> None:
    rules = GAMES[slug]
    assert rules.blurb.strip() and rules.table_note.strip()
    assert isinstance(rules.runs_move, bool) and isinstance(rules.shows_base_rank, bool)


def test_the_facts_match_the_rules() -> None:
    assert [s for s, r in GAMES.items() if r.runs_move] == ["quadruple-interchange"]
    assert [s for s, r in GAMES.items() if r.all_face_up] == ["castles-end"]
    assert {s for s, r in GAMES.items() if r.shows_base_rank} == {"quadrangle", "castles-end"}


def test_the_deal_button_deals_then_redeals() -> None:
    rules = get_ruleset("corners")
    state = rules.deal(3)
    assert rules.deal_move(state) == Move("stock", "waste")
    while state.piles[rules.stock]:
        state = rules.apply(state, rules.deal_move(state))
    redeal = rules.deal_move(state)
    assert (redeal.source, redeal.target) == ("waste", "stock")
    assert redeal in rules.legal_moves(state)


def test_the_deal_button_without_a_stock_is_refused_in_words() -> None:
    rules = get_ruleset("castles-end")
    state = rules.deal(1)
    with pytest.raises(InvalidMove, match="no pile called 'stock'"):
        rules.step(state, rules.deal_move(state))


def test_a_step_in_words_names_only_cards_face_up() -> None:
    rules = get_ruleset("quadrangle")
    step = rules.step(rules.deal(1), Move.parse("t5-t9"))
    text = rules.describe(step)
    assert text.startswith("Moved ") and "from pile t5 to pile t9" in text
    back = rules.step(step.after, Move("stock", "waste"))
    assert rules.describe(back).startswith("Dealt ") and "to the waste" in rules.describe(back)


def test_replay_words_follow_the_log() -> None:
    rules = get_ruleset("quadrangle")
    words = rules.replay_words(rules.deal(1), ["t5-t9", "stock-waste"])
    assert len(words) == 2 and words[1].startswith("Dealt ")


# -- the Deal button -----------------------------------------------------------------------

PATRIARCHS_BASES = {
    **{f"f{i + 1}": "A" + s for i, s in enumerate("CDHS")},
    **{f"f{i + 5}": "K" + s for i, s in enumerate("CDHS")},
}
CORNERS_BASES = {"f1": "KC", "f2": "QD", "f3": "7H", "f4": "5S"}


@pytest.mark.parametrize(
    ("game", "bases", "redeals"),
    [
        ("quadrangle", {"f1": "2C"}, 0),  # Q5: one pass, no redeal at all
        ("corners", CORNERS_BASES, 2),  # C4: both redeals used
        ("patriarchs", PATRIARCHS_BASES, 1),  # P4: the one redeal used
    ],
)
def test_the_deal_button_with_no_redeal_left_is_a_deal_refused_in_words(
    game: str, bases: dict[str, str], redeals: int
) -> None:
    rules = get_ruleset(game)
    state = position(game, bases, redeals=redeals, waste="3C 4D")
    assert rules.redeal_moves(state) == []
    assert rules.deal_move(state) == Move("stock", "waste")
    with pytest.raises(IllegalMove) as refused:
        rules.step(state, rules.deal_move(state))
    assert (str(refused.value), refused.value.code) == ("The stock is empty.", "pile_empty")


def test_the_deal_button_redeals_the_whole_waste_while_a_redeal_is_left() -> None:
    rules = get_ruleset("patriarchs")
    state = position("patriarchs", PATRIARCHS_BASES, r1="9S", waste="3C 4D 8H")
    assert rules.deal_move(state) == Move("waste", "stock", 3)
    after = rules.apply(state, rules.deal_move(state))
    assert show(after, "stock") == "8H 4D 3C" and show(after, "waste") == ""  # 3C dealt next
    assert rules.deal_move(after) == Move("stock", "waste")


# -- auto-move (a preference of the interface, never a rule: rules.md §0) ------------------


def auto(state: State, keep: str = "") -> Move | None:
    rules = get_ruleset(state.game)
    return rules.auto_move(state, rules.legal_moves(state), keep)


def test_auto_move_sends_up_a_card_with_exactly_one_foundation_to_go_to() -> None:
    # Q1: 6♠ goes on 5♠ only; 9♥ goes nowhere; dealing is never an auto-move.
    state = position("quadrangle", f1="5S", f2="5D", t1="TH 9H", waste="6S", stock="KC")
    assert auto(state) == Move("waste", "f1")
    assert auto(position("quadrangle", f1="5S", f2="5D", t1="TH 6S", stock="KC")) == (
        Move("t1", "f1")
    )
    assert auto(position("quadrangle", f1="5S", f2="5D", t1="TH 9H", stock="KC")) is None


def test_auto_move_leaves_the_card_just_placed_but_not_the_others() -> None:
    # The player just put 6♠ on 7♠ in t3; the 6♠ on the waste still goes up.
    state = position("quadrangle", f1="5S", t3="7S 6S", waste="6S", stock="KC")
    assert auto(state, keep="t3") == Move("waste", "f1")
    assert auto(position("quadrangle", f1="5S", t3="7S 6S", stock="KC"), keep="t3") is None


def test_auto_move_leaves_a_choice_of_foundations_to_the_player() -> None:
    # Two decks: both 5♠ foundations take the 6♠, so the player says which.
    state = position("quadrangle", f1="5S", f2="5S", t1="6S", stock="KC")
    assert {Move("t1", "f1"), Move("t1", "f2")} <= set(get_ruleset("quadrangle").legal_moves(state))
    assert auto(state) is None


def test_auto_move_never_starts_an_empty_foundation() -> None:
    # Q1: further base-rank cards are moved by the player, even to the only foundation left.
    full = {f"f{i + 1}": f"5{s}" for i, s in enumerate("CDHSCDH")}  # f1…f7 started, f8 empty
    state = position("quadrangle", full, t1="5S", stock="KC")
    legal = get_ruleset("quadrangle").legal_moves(state)
    assert [m for m in legal if m.target.startswith("f")] == [Move("t1", "f8")]
    assert auto(state) is None


def test_auto_move_never_routes_a_patriarchs_card_or_transfers_one() -> None:
    clubs_up, clubs_down = "AC 2C 3C 4C 5C 6C", "KC QC JC TC 9C 8C 7C"
    # P5: ♣ meet at 6/7, so both transfers are legal, and neither is an auto-move.
    met = position("patriarchs", {**PATRIARCHS_BASES, "f1": clubs_up, "f5": clubs_down})
    legal = get_ruleset("patriarchs").legal_moves(met)
    assert {Move("f1", "f5"), Move("f5", "f1")} <= set(legal)
    assert auto(met) is None
    # P6: 7♣ fits on 6♣ and under 8♣: the player chooses; 2♦ fits only on A♦ and goes up.
    both = {**PATRIARCHS_BASES, "f1": clubs_up, "f5": clubs_down[:-3]}
    assert auto(position("patriarchs", both, r1="7C", stock="9S")) is None
    assert auto(position("patriarchs", both, r1="7C", r2="2D", stock="9S")) == Move("r2", "f2")


def test_auto_move_ignores_a_redeal_of_several_cards() -> None:
    state = position("corners", CORNERS_BASES, r1="9S", waste="3C 4D AC")
    assert Move("waste", "stock", 3) in get_ruleset("corners").legal_moves(state)
    assert auto(state) == Move("waste", "f1")  # A♣ on K♣ (C1 wraps)


# -- auto-finish ---------------------------------------------------------------------------

SUITS_DONE = {f"f{i + 1}": " ".join(f"{r}{s}" for r in RANKS) for i, s in enumerate("CDH")}
SPADES_TO_JACK = " ".join(f"{r}S" for r in RANKS[:11])


def finish(state: State) -> list[str] | None:
    rules = get_ruleset(state.game)
    plan = rules.finish_moves(state, rules.legal_moves(state))
    return None if plan is None else [str(m) for m in plan]


def test_finish_plays_every_card_left_up_in_order() -> None:
    rules = get_ruleset("castles-end")
    ready = position("castles-end", SUITS_DONE, f4=SPADES_TO_JACK, t1="QS", t2="KS")
    plan = finish(ready)
    assert plan == ["t1-f4", "t2-f4"]
    assert rules.is_won(rules.replay(ready, [Move.parse(m) for m in plan]))


def test_finish_from_a_whole_deck_on_the_tableau() -> None:
    # Each suit K (bottom) … A (top): every base choice is an Ace (E1), then all go up.
    rules = get_ruleset("castles-end")
    piles = {f"t{i + 1}": " ".join(f"{r}{s}" for r in RANKS[::-1]) for i, s in enumerate("CDHS")}
    state = position("castles-end", piles)
    plan = rules.finish_moves(state, rules.legal_moves(state))
    assert plan is not None and len(plan) == 52
    assert all(m.target.startswith("f") for m in plan)
    assert rules.base_rank(rules.apply(state, plan[0])) == 1
    assert rules.is_won(rules.replay(state, plan))


def test_no_finish_when_a_card_must_move_elsewhere_first() -> None:
    # K♠ on Q♠: the Queen cannot go up before the King has moved aside.
    assert finish(position("castles-end", SUITS_DONE, f4=SPADES_TO_JACK, t1="QS KS")) is None


def test_no_finish_for_a_game_with_no_legal_move() -> None:
    stuck = position("patriarchs", PATRIARCHS_BASES, redeals=1, r1="5C")
    assert get_ruleset("patriarchs").legal_moves(stuck) == []
    assert finish(stuck) is None


# Quadruple Interchange with 15 of its 16 foundations full and ♠ at the Jack on f16.
FULL = {f"f{i + 1}": " ".join(f"{r}{'CDHS'[i % 4]}" for r in RANKS) for i in range(15)}
LAST = {**FULL, "f16": SPADES_TO_JACK}


def test_finish_never_looks_at_a_face_down_card_or_the_stock() -> None:
    assert finish(position("quadruple-interchange", LAST, t1="KS QS")) == ["t1-f16", "t1-f16"]
    # The same cards with the King face down, or the King still in the stock: not offered.
    assert finish(position("quadruple-interchange", LAST, t1="(KS) QS")) is None
    assert finish(position("quadruple-interchange", LAST, t1="QS", stock="KS")) is None


def test_finish_never_counts_on_a_refill_from_the_stock() -> None:
    # Q4 would refill t1 with the stock's K♠ once Q♠ goes up, and K♠ would then go up too:
    # planning that would look at a hidden card.
    suits = {f"f{i + 1}": " ".join(f"{r}{'CDHS'[i % 4]}" for r in RANKS) for i in range(7)}
    state = position("quadrangle", {**suits, "f8": SPADES_TO_JACK}, t1="QS", stock="KS")
    assert finish(state) is None
    assert finish(position("quadrangle", {**suits, "f8": SPADES_TO_JACK}, t1="KS QS")) == [
        "t1-f8",
        "t1-f8",
    ]


def test_finish_never_makes_a_patriarchs_transfer() -> None:
    # ♣ meet at 7/8; the waste's 6♣ fits only once 7♣ is moved across (P5), a player's choice.
    done = {f"f{i + 1}": " ".join(f"{r}{s}" for r in RANKS) for i, s in enumerate("DHS", 1)}
    done |= {f"f{i + 5}": " ".join(f"{r}{s}" for r in RANKS[::-1]) for i, s in enumerate("DHS", 1)}
    clubs = {"f1": "AC 2C 3C 4C 5C 6C 7C", "f5": "KC QC JC TC 9C 8C"}
    waste = "KC QC JC TC 9C 8C 7C AC 2C 3C 4C 5C 6C"
    state = position("patriarchs", {**done, **clubs}, redeals=1, waste=waste)
    assert finish(state) is None
    rules = get_ruleset("patriarchs")
    moved = rules.apply(state, Move("f1", "f5"))
    plan = rules.finish_moves(moved, rules.legal_moves(moved))
    assert plan is not None and len(plan) == 13 and rules.is_won(rules.replay(moved, plan))


# -- the warning before a base choice that ends the game (rules.md §5 E1) ------------------


def test_dead_ends_are_the_base_choices_after_which_no_move_is_left() -> None:
    rules = get_ruleset("castles-end")
    state = rules.deal(1)
    legal = rules.legal_moves(state)
    traps = rules.dead_ends(state, legal)
    assert Move("t1", "f1") in traps and Move("t2", "f1") not in traps
    for move in legal:
        assert (move in traps) == (rules.legal_moves(rules.apply(state, move)) == [])


def test_no_dead_end_warning_once_the_base_is_chosen_or_where_cards_are_hidden() -> None:
    # Sending the last card up leaves no move (and does not win).
    chosen = position("castles-end", f1="5C", t1="6C")
    assert rules_after(chosen, Move("t1", "f1")) == []
    # Corners has no base rank either, but its stock is hidden: no looking ahead at all.
    hidden = position("corners", CORNERS_BASES, redeals=2, r1="KD")
    assert rules_after(hidden, Move("r1", "f2")) == []
    for state in (chosen, hidden):
        rules = get_ruleset(state.game)
        assert rules.dead_ends(state, rules.legal_moves(state)) == []


def rules_after(state: State, move: Move) -> list[Move]:
    """The legal moves after ``move``."""
    rules = get_ruleset(state.game)
    assert move in rules.legal_moves(state)
    return rules.legal_moves(rules.apply(state, move))
