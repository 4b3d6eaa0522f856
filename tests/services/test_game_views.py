"""What a viewer may see of a game (app/services/game_views.py): which ids can name a game, when
the deal number is secret, the piles in play, finished, masked and for a race's spectators, the
idle time and what a browser action changed. Pure: a game row built in memory."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from app.db.game_rows import GameRow
from app.engine import DEVELOPMENT_KEY, RULES_VERSION, Move, Status, dumps, get_ruleset
from app.services import game_views
from app.services.game_views import GameView, Played, plausible_id
from app.services.players import new_id
from app.services.seal import Seal, SealKind

NOW = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)


def view(
    slug: str = "quadrangle", deal: int = 7, *, status: str = Status.PLAYING, **row: Any
) -> GameView:
    rules = get_ruleset(slug)
    state = rules.deal(deal, DEVELOPMENT_KEY)
    rated = row.pop("rated", False)
    record = GameRow.dealt(
        "g1", "p1", slug, deal, dumps(state), status, NOW, rules=RULES_VERSION, rated=rated
    )
    record = replace(record, **row)
    legal = rules.legal_moves(state) if status == Status.PLAYING else []
    return GameView(record, "Amber Fox", rules, state, legal, max_moves=2000)


def test_only_ids_the_server_could_have_made_can_name_a_game() -> None:
    assert plausible_id(new_id())
    assert plausible_id("a") and plausible_id("A-_9" * 8)
    for bad in ["", "x" * 33, "abc\x00def", "a b", "../etc", "ümlaut"]:
        assert not plausible_id(bad), bad
    assert not plausible_id(42)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("row", "seal", "hidden"),
    [
        ({}, None, False),  # a casual game: the number its player chose
        ({"rated": True}, None, True),  # a rated game in play
        ({"rated": True, "status": Status.LOST}, None, False),  # … once it has ended
        ({"race_id": 4}, None, True),  # a race's game in play
        ({"race_id": 4, "status": Status.WON}, None, False),  # the race is over
        ({"race_id": 4, "status": Status.WON}, Seal(SealKind.RACE, None), True),  # it is not
        ({"competition": "challenge", "status": Status.WON}, Seal(SealKind.CHALLENGE, NOW), True),
        # The deal of the day's number is public; its cards are not.
        ({"competition": "challenge", "status": Status.WON}, Seal(SealKind.DAILY, NOW), False),
        # A casual game's number stays shown whatever seals its deal.
        ({"status": Status.LOST}, Seal(SealKind.RATED, None), False),
    ],
)
def test_the_deal_number_is_secret_while_a_competition_on_it_is_on(
    row: dict[str, Any], seal: Seal | None, hidden: bool
) -> None:
    shown = view(**row)
    shown.seal = seal
    assert shown.number_hidden is hidden
    assert shown.deal_number == (None if hidden else 7)


def test_the_move_cap_is_told_apart_from_a_game_with_no_moves_left() -> None:
    capped = view(status=Status.LOST, moves=2000)
    assert capped.move_limit_reached
    assert not view(status=Status.LOST, moves=1999).move_limit_reached
    assert not view(status=Status.WON, moves=2000).move_limit_reached
    unknown_cap = view(status=Status.LOST, moves=2000)
    unknown_cap.max_moves = None
    assert not unknown_cap.move_limit_reached


def test_the_stock_count_is_public_and_zero_without_a_stock() -> None:
    quadrangle = view("quadrangle")
    assert quadrangle.stock_count == len(quadrangle.state.piles[quadrangle.rules.stock]) > 0
    assert view("castles-end").stock_count == 0


def test_the_idle_time_counts_from_the_last_action_of_a_game_in_play(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(game_views, "now", lambda: NOW)
    moved = NOW - timedelta(seconds=5, milliseconds=250)
    assert view(first_move_at=moved, updated_at=moved).idle_ms() == 5250
    # SQLite hands back naive UTC times.
    naive = moved.replace(tzinfo=None)
    assert view(first_move_at=naive, updated_at=naive).idle_ms() == 5250
    assert view(updated_at=moved).idle_ms() == 0  # before the first move
    assert view(first_move_at=moved, updated_at=moved, status=Status.WON).idle_ms() == 0
    ahead = NOW + timedelta(seconds=3)  # another instance's clock, a little ahead
    assert view(first_move_at=ahead, updated_at=ahead).idle_ms() == 0


def test_a_game_in_play_shows_only_the_public_view() -> None:
    shown = view("quadrangle")
    piles = shown.piles()
    assert not shown.shows_everything
    assert piles == shown.rules.public_view(shown.state)
    assert piles["stock"].cards is None and piles["stock"].count == shown.stock_count
    assert set(shown.piles(only=["t1", "waste"])) == {"t1", "waste"}


def test_a_finished_game_shows_every_card_unless_masked() -> None:
    finished = view("quadrangle", status=Status.LOST)
    full = finished.rules.full_view(finished.state)
    piles = finished.piles()
    assert finished.shows_everything
    assert piles["stock"].cards == tuple(full["stock"]) and piles["stock"].count > 0
    assert all(p.cards is not None for p in piles.values())
    finished.masked = True  # a viewer who has not finished the deal: as if in play
    assert not finished.shows_everything
    assert finished.piles() == finished.rules.public_view(finished.state)


def test_a_spectator_sees_only_the_faces_every_racer_has_seen() -> None:
    shown = view("castles-end", race_id=4)  # every card is face up in Castle's End
    t1 = shown.piles()["t1"].cards
    assert t1 is not None and None not in t1
    shown.faces = frozenset(str(card) for card in t1[:2])
    spectated = shown.piles()
    assert spectated["t1"].cards == (*t1[:2], *[None] * (len(t1) - 2))
    assert spectated["t2"].cards is not None and set(spectated["t2"].cards) == {None}
    assert spectated["t1"].count == len(t1)


def test_a_browser_action_changed_the_piles_of_all_its_steps_in_layout_order() -> None:
    shown = view("corners", deal=3)
    rules, state = shown.rules, shown.state
    first = rules.step(state, Move.parse("r3-f3"))
    second = rules.step(first.after, rules.legal_moves(first.after)[0])
    played = Played(shown, [second, first])
    touched = set(first.changed) | set(second.changed)
    assert set(played.changed) == touched
    assert list(played.changed) == [p for p in rules.pile_ids if p in touched]
    assert Played(shown, []).changed == ()
