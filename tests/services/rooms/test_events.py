"""The order of a race's standings: winners by finishing time, then the rest by cards on
foundations (more first), then by moves (fewer first)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from app.services.rooms.events import Racer, rank

START = datetime(2026, 11, 23, 20, 0, tzinfo=UTC)


def at(seconds: float) -> datetime:
    return START + timedelta(seconds=seconds)


def test_winners_by_time_then_cards_then_moves() -> None:
    racers = [
        Racer("lost-many-cards", "g1", "lost", 80, 40, at(50)),
        Racer("slow-winner", "g2", "won", 120, 52, at(300)),
        Racer("playing-few-cards", "g3", "playing", 30, 10, None),
        Racer("fast-winner", "g4", "won", 150, 52, at(200)),
        Racer("lost-many-cards-fewer-moves", "g5", "lost", 60, 40, at(70)),
    ]
    standings = rank(racers, START)
    assert [s.player for s in standings] == [
        "fast-winner",
        "slow-winner",
        "lost-many-cards-fewer-moves",
        "lost-many-cards",
        "playing-few-cards",
    ]
    assert [s.place for s in standings] == [1, 2, 3, 4, 5]
    assert [s.time_ms for s in standings] == [200_000, 300_000, None, None, None]


def test_a_tie_is_broken_by_name_so_the_order_is_stable() -> None:
    racers = [Racer("b", "g1", "lost", 10, 5, at(1)), Racer("a", "g2", "lost", 10, 5, at(2))]
    assert [s.player for s in rank(racers, START)] == ["a", "b"]
    assert [s.player for s in rank(list(reversed(racers)), START)] == ["a", "b"]
