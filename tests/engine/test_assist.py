"""The engine's public help for the interface: game facts, the Deal button, moves in words."""

from __future__ import annotations

import pytest

from app.engine import GAMES, InvalidMove, Move, get_ruleset


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
