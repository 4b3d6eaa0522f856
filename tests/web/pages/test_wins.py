"""The win summary (app/web/pages/wins.py), with fake deal and progress services: how a won
game compares with the deal's records and the player's own other wins, for its owner only."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from app.web.pages.wins import win_comparison


def _view(player: str = "p1", status: str = "won", game_id: str = "g1", moves: int = 90) -> Any:
    record = SimpleNamespace(id=game_id, player_id=player, status=status, deal=7, moves=moves)
    return SimpleNamespace(record=record, rules=SimpleNamespace(slug="corners", name="Corners"))


def _request(fewest: Any = None, fastest: Any = None, own: Any = None) -> Any:
    summary = SimpleNamespace(fewest_moves=fewest, fastest=fastest)
    average = own or SimpleNamespace(wins=0, moves=None, duration_ms=None)
    services = SimpleNamespace(
        deals=SimpleNamespace(summary=lambda slug, deal, viewer: summary),
        progress=SimpleNamespace(own_average=lambda viewer, slug, game_id: average),
    )
    return SimpleNamespace(app=SimpleNamespace(state=SimpleNamespace(services=services)))


def test_only_the_owner_of_a_won_game_gets_a_summary() -> None:
    request = _request()
    assert win_comparison(request, _view(), None) == []
    assert win_comparison(request, _view(), "p2") == []
    assert win_comparison(request, _view(status="lost"), "p1") == []


def test_the_players_records_and_first_win() -> None:
    mine = SimpleNamespace(id="g1", moves=90, player="ann", duration_ms=61_000)
    lines = win_comparison(_request(fewest=mine, fastest=mine), _view(), "p1")
    assert lines == [
        "Fewest moves on this deal: yours, 90.",
        "Fastest on this deal: you.",
        "Your first win of Corners.",
    ]


def test_others_records_and_the_players_average() -> None:
    best = SimpleNamespace(id="g9", moves=80, player="bea", duration_ms=None)
    fast = SimpleNamespace(id="g8", moves=99, player="cy", duration_ms=125_000)
    own = SimpleNamespace(wins=3, moves=101.4, duration_ms=200_500.0)
    lines = win_comparison(_request(fewest=best, fastest=fast, own=own), _view(), "p1")
    assert lines[0] == "Fewest moves on this deal: 80, by bea."
    assert lines[1].startswith("Fastest on this deal: ") and lines[1].endswith(", by cy.")
    assert "2:05" in lines[1]
    assert lines[2].startswith("Your other 3 wins of Corners took 101 moves in ")
    assert "3:20" in lines[2]


def test_a_fastest_game_without_a_time_and_an_average_without_one() -> None:
    untimed = SimpleNamespace(id="g8", moves=99, player="cy", duration_ms=None)
    own = SimpleNamespace(wins=1, moves=95.0, duration_ms=None)
    lines = win_comparison(_request(fastest=untimed, own=own), _view(), "p1")
    assert lines == ["Your other win of Corners took 95 moves on average."]
