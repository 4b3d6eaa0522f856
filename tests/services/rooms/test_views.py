"""What the rooms hand the web (app/services/rooms/views.py): room codes as typed and as made,
and a room's view: its members and who is still racing."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from app.services.rooms.events import RaceView, Standing
from app.services.rooms.views import (
    CODE_ALPHABET,
    CODE_LENGTH,
    CODE_RE,
    RoomView,
    new_code,
    normalize_code,
)
from app.services.statuses import RaceStatus

START = datetime(2026, 11, 23, 20, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("typed", "code"),
    [
        ("ABCDEF", "ABCDEF"),
        ("abcdef", "ABCDEF"),
        ("  hjk346\n", "HJK346"),
        ("ABCDE", None),  # too short
        ("ABCDEFG", None),  # too long
        ("ABCDE0", None),  # 0, O, 1, I, L, 5, S, 2 and Z are not in codes
        ("ABCDEO", None),
        ("ABCDE1", None),
        ("ABCDES", None),
        ("ABCDEZ", None),
        ("ABC DE", None),
        ("", None),
    ],
)
def test_normalize_code(typed: str, code: str | None) -> None:
    assert normalize_code(typed) == code


def test_normalize_code_refuses_what_is_not_a_string() -> None:
    not_text: Any = 123456
    assert normalize_code(not_text) is None


def test_the_alphabet_leaves_out_look_alikes() -> None:
    assert not set("0O1IL5S2Z") & set(CODE_ALPHABET)
    assert len(set(CODE_ALPHABET)) == len(CODE_ALPHABET)


def test_new_codes_are_valid_and_canonical() -> None:
    codes = {new_code() for _ in range(200)}
    assert all(len(c) == CODE_LENGTH and CODE_RE.fullmatch(c) for c in codes)
    assert all(normalize_code(c.lower()) == c for c in codes)
    assert len(codes) > 190  # drawn at random (27^6 codes): hardly ever twice


def standing(place: int, player: str, status: str) -> Standing:
    return Standing(place, player, f"g-{player}", status, 10, 5, None)


def room(race: RaceView | None) -> RoomView:
    players = [{"id": "id-ann", "name": "ann"}, {"id": "id-bob", "name": "bob"}]
    return RoomView("ABCDEF", "corners", "racing", "id-ann", players, race)


def test_members_by_id() -> None:
    view = room(None)
    assert view.url == "/rooms/ABCDEF"
    assert view.is_member("id-ann") and view.is_member("id-bob")
    assert not view.is_member("ann") and not view.is_member(None)


def test_racing_is_a_game_still_in_play_in_the_latest_race() -> None:
    race = RaceView(
        1,
        "corners",
        None,
        START,
        RaceStatus.RUNNING,
        None,
        {"ann": "g-ann", "bob": "g-bob"},
        [standing(1, "ann", "won"), standing(2, "bob", "playing")],
        False,
    )
    view = room(race)
    assert view.racing("id-bob")
    assert not view.racing("id-ann")  # finished
    assert not view.racing("id-cyd") and not view.racing(None)  # not in the room
    assert not room(None).racing("id-bob")  # no race yet
