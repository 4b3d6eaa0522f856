"""The statistics pages (app/web/pages/stats.py) on what tests/web/api/test_stats.py leaves
out: what a replay says at each step, the solution's page told apart from the replay's, and
the leaderboard's choice of periods."""

from __future__ import annotations

import html

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from app.engine import get_ruleset
from tests.web.support import new_game, post


def finished_game(client: TestClient) -> str:
    """A Castle's End game of this browser's, one move played, then resigned."""
    game_id = new_game(client, "castles-end", 1)
    assert (
        post(client, f"/games/{game_id}/moves", {"move": "t2-f1", "version": "0"}).status_code
        == 200
    )
    assert post(client, f"/games/{game_id}/resign", {}).status_code == 200
    return game_id


def now_line(page: str) -> str:
    """The replay's "who · move n of N: what" line, as text."""
    start = page.index('id="replay-now"')
    return html.unescape(page[page.index(">", start) + 1 : page.index("</p>", start)])


def test_a_replay_says_the_deal_then_each_move_in_words(client: TestClient, app: FastAPI) -> None:
    game_id = finished_game(client)
    name = client.get(f"/api/games/{game_id}").json()["player"]["name"]
    opened = now_line(client.get(f"/games/{game_id}/replay").text)
    said = '<span class="said">The deal, before the first move</span>'
    assert opened == f"{name} · lost · move <b>0</b> of 1: {said}"
    rules = get_ruleset("castles-end")
    words = rules.replay_words(rules.deal(1, app.state.settings.deal_key_bytes), ["t2-f1"])[0]
    stepped = now_line(client.get(f"/games/{game_id}/replay?step=1").text)
    assert stepped.endswith(
        f'move <b>1</b> of 1: <span class="said">{words[0].upper() + words[1:]}</span>'
    )


def test_the_solution_is_the_replay_page_told_as_the_solvers_line(
    client: TestClient, app: FastAPI, monkeypatch: pytest.MonkeyPatch
) -> None:
    game_id = finished_game(client)
    games = app.state.services.games
    monkeypatch.setattr(games, "solution_view", games.replay_view)  # the game's own moves
    page = client.get(f"/games/{game_id}/solution").text
    assert "The solver's solution" in page
    assert now_line(page).startswith("The solver's line · move <b>0</b> of 1")
    assert (
        f"/games/{game_id}/solution?step=1" in page
        and f"/games/{game_id}/replay?step=1" not in page
    )
    replay = client.get(f"/games/{game_id}/replay").text
    assert "The solver's solution" not in replay and f"/games/{game_id}/replay?step=1" in replay


def test_the_leaderboard_offers_every_period_of_the_game_chosen(client: TestClient) -> None:
    page = client.get("/leaderboard?game=corners&period=7d").text
    for value, label in (("all", "All time"), ("30d", "Last 30 days"), ("7d", "Last 7 days")):
        current = ' aria-current="page"' if value == "7d" else ""
        assert (
            f'<a href="/leaderboard?period={value}&amp;game=corners"{current}>{label}</a>' in page
        )
