"""A game's state as the API writes it (app/web/api/schemas/game_state.py), built from real
deals without an app: which keys appear when, the stock as a count, ``from`` as the move's
key, and the coach's answers' refusals of values the contract does not know."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import pytest
from pydantic import ValidationError

from app.db.game_rows import GameRow
from app.engine import RULES_VERSION, Move, ShownPile, dumps, get_ruleset
from app.services.game_views import GameView
from app.services.hint_views import HintView
from app.web.api.schemas.game_state import (
    AnalysisAnswer,
    GameState,
    LegalMove,
    ReplayAnswer,
    answer_text,
    game_state_data,
    game_state_json,
    hint_answer,
    pile_data,
    state_response,
)

DEALT = datetime(2026, 3, 4, 5, 6, 7, tzinfo=UTC)


def view_of(slug: str, deal: int = 1, *, rated: bool = False, **changes: Any) -> GameView:
    """A game of ``slug`` just dealt, as the services would hand it to the web."""
    rules = get_ruleset(slug)
    state = rules.deal(deal)
    row = GameRow.dealt(
        "g" * 22, "p" * 22, slug, deal, dumps(state), "playing", DEALT,
        rules=RULES_VERSION, rated=rated,
    )  # fmt: skip
    view = GameView(row, "Ada", rules, state, rules.legal_moves(state))
    return replace(view, **changes) if changes else view


def test_the_stock_in_play_is_a_count_and_other_piles_list_their_cards() -> None:
    assert pile_data("stock", ShownPile(None, 67)) == {"count": 67}
    assert pile_data("stock", ShownPile(("AS", "2S"), 2)) == {"count": 2, "cards": ["AS", "2S"]}
    assert pile_data("t1", ShownPile((None, "KH"), 2)) == {"cards": [None, "KH"]}
    assert pile_data("f1", ShownPile((), 0)) == {"cards": []}


def test_a_dealt_game_has_the_contracts_fields_and_no_finished_ones() -> None:
    view = view_of("quadrangle")
    data = game_state_data(view)
    GameState.model_validate(data)  # the shape the contract fixes
    assert {"max_moves", "ended_by", "log", "deal_winnable"}.isdisjoint(data)
    assert (data["deal"], data["status"], data["version"], data["can_undo"]) == (
        1,
        "playing",
        0,
        False,
    )
    assert data["player"] == {"id": "p" * 22, "name": "Ada"}
    assert data["base_rank"] == "2" and data["cards"] == 104 and data["started_at"] is None
    assert data["piles"]["stock"] == {"count": 67}  # the stock's order is the game's future
    assert all(set(p) == {"cards"} for pid, p in data["piles"].items() if pid != "stock")
    legal = [Move(m["from"], m["to"], m["count"]) for m in data["legal_moves"]]
    assert legal == view.legal_moves


def test_face_down_cards_are_null() -> None:
    data = game_state_data(view_of("quadruple-interchange"))
    assert any(None in p["cards"] for p in data["piles"].values() if "cards" in p)
    GameState.model_validate(data)


def test_a_rated_game_in_play_hides_its_deal_number() -> None:
    data = game_state_data(view_of("corners", 7, rated=True))
    assert data["deal"] is None and data["rated"] is True
    assert data["redeals_left"] == 2 and data["base_rank"] is None


def test_a_finished_game_says_its_verdict_and_what_ended_it() -> None:
    playing = view_of("castles-end", max_moves=3)
    lost = replace(playing.record, status="lost", moves=3, can_undo=True, finished_at=DEALT)
    data = game_state_data(replace(playing, record=lost, log=["t1-t2"], deal_winnable=None))
    assert data["ended_by"] == "move_limit" and data["max_moves"] == 3
    assert data["log"] == ["t1-t2"] and data["deal_winnable"] is None  # null: undecided
    assert data["can_undo"] is False  # nothing is undone once the game is over
    assert data["finished_at"] == DEALT.isoformat()
    assert "stock" not in data["piles"]  # Castle's End has none
    GameState.model_validate(data)
    # In play, under the cap: the cap is said, no end.
    assert "ended_by" not in game_state_data(playing) and game_state_data(playing)["max_moves"] == 3


def test_the_bytes_sent_are_the_data() -> None:
    view = view_of("patriarchs")
    sent = game_state_json(view)
    assert json.loads(sent) == game_state_data(view)
    assert answer_text(view) == sent.decode()
    response = state_response(view, 201)
    assert response.status_code == 201 and bytes(response.body) == sent


def test_a_move_is_written_and_read_with_from() -> None:
    move = LegalMove.model_validate({"from": "t1", "to": "f2", "count": 1})
    assert move.from_ == "t1"
    assert move.model_dump(by_alias=True) == {"from": "t1", "to": "f2", "count": 1}
    by_name = LegalMove.model_validate({"from_": "t1", "to": "f2", "count": 1})
    assert by_name == move  # by the field's name too (populate_by_name)


@pytest.mark.parametrize(
    "change",
    [{"status": "abandoned"}, {"game": "klondike"}, {"ended_by": "timeout"}, {"secret": 1}],
)
def test_a_state_outside_the_contract_is_refused(change: dict[str, Any]) -> None:
    data = game_state_data(view_of("quadrangle")) | change
    with pytest.raises(ValidationError):
        GameState.model_validate(data)


def test_a_hint_says_its_move_with_from_and_is_casual_once_used() -> None:
    hint = HintView(Move("t3", "f1", 2), "winnable", True, "x", version=4, hints_used=1)
    given = hint_answer(hint, "Play this.").model_dump(by_alias=True)
    assert given["move"] == {"from": "t3", "to": "f1", "count": 2}
    assert (given["message"], given["version"], given["casual"], given["chance"]) == (
        "Play this.", 4, True, None,
    )  # fmt: skip
    nothing = hint_answer(HintView(None, "lost", True, "x"), "No move wins.")
    assert nothing.move is None and nothing.casual is False


def test_the_coachs_answers_refuse_unknown_outcomes() -> None:
    with pytest.raises(ValidationError):
        hint_answer(HintView(None, "maybe", False, "x"), "?")
    base = {"deal_winnable": True, "slip": None, "decided": True}
    assert AnalysisAnswer.model_validate(base | {"knowing": "all"}).knowing == "all"
    with pytest.raises(ValidationError):
        AnalysisAnswer.model_validate(base | {"knowing": "some"})


def test_a_replay_holds_a_whole_game_state() -> None:
    data = game_state_data(view_of("corners"))
    replay = ReplayAnswer.model_validate({"step": 0, "moves": [], "game": data})
    assert replay.game.piles["stock"].count == 43
    with pytest.raises(ValidationError):
        ReplayAnswer.model_validate({"step": 0, "moves": [], "game": {"id": "x"}})
