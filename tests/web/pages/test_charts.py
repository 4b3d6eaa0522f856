"""Statistics to look at (issue 23): a player page draws, per game, the win rate game after
game, the runs of wins and the moves per win as SVG with the facts in words; a deal page draws
its finished games' moves only for a viewer who may see that list."""

from __future__ import annotations

from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import update

from app.db.models import Game
from app.web import i18n
from app.web.pages.charts import moves_histogram, streak_chart, win_rate_chart
from tests.web.support import finish_deal, new_game, post


def _rated_games(client: TestClient, n: int) -> list[str]:
    ids = []
    for _ in range(n):
        answer = post(client, "/games", {"game": "corners"}, htmx=False)
        game_id = str(answer.headers["location"]).rsplit("/", 1)[1]
        assert post(client, f"/games/{game_id}/resign", {}).status_code == 200
        ids.append(game_id)
    return ids


def _win(app: FastAPI, game_id: str, moves: int) -> None:
    with app.state.services.sessions.begin() as db:
        db.execute(update(Game).where(Game.id == game_id).values(status="won", moves=moves))


def _name(client: TestClient) -> str:
    html = client.get("/account").text
    return html.split("<h1>You are ", 1)[1].split("</h1>", 1)[0]


def test_a_player_page_draws_each_games_history(app: FastAPI, client: TestClient) -> None:
    ids = _rated_games(client, 5)
    for game_id, moves in zip(ids[1:4], (80, 95, 91), strict=True):
        _win(app, game_id, moves)
    html = client.get(f"/players/{_name(client)}").text
    assert "<h2>Over time</h2>" in html and 'id="charts-corners"' in html
    assert html.count('<svg class="chart"') == 3 and html.count('role="img"') == 3
    assert "3 wins in 5 finished rated games." in html
    assert "Runs of wins in a row: 3. Longest: 3." in html
    assert "3 wins by moves" in html
    # Casual games are not drawn; a game still in play is not either.
    new_game(client, "castles-end", 9)
    assert 'id="charts-castles-end"' not in client.get(f"/players/{_name(client)}").text


def test_a_deal_page_draws_moves_only_for_who_may_see_its_games(
    app: FastAPI, client: TestClient
) -> None:
    game_id = finish_deal(client, "patriarchs", 77)
    _win(app, game_id, 150)
    assert "Moves per win on this deal" in client.get("/deal/patriarchs/77").text
    with TestClient(app, base_url="http://testserver") as stranger:
        page = stranger.get("/deal/patriarchs/77").text
        assert "Moves per win on this deal" not in page and "<svg" not in page


def test_the_charts_say_their_facts_in_words() -> None:
    rate = win_rate_chart("r", [True, False, False, True])
    assert rate.text == (
        "2 wins in 4 finished rated games. Win rate after 1 game: 100%; after 2 games: 50%; "
        "after 3 games: 33%; after 4 games: 50%."
    )
    assert streak_chart("s", [1, 4, 2]).text == "Runs of wins in a row: 1, 4, 2. Longest: 4."
    hist = moves_histogram("m", [10, 10, 12])
    assert hist.text == "3 wins by moves — 10 moves: 2; 12 moves: 1."
    assert '<title id="m-t">' in hist.svg and '<desc id="m-d">' in hist.svg
    assert win_rate_chart("x", []).svg == ""


def test_the_win_rate_in_words_counts_one_win_and_one_game_in_the_singular() -> None:
    assert win_rate_chart("r", [True]).text.startswith("1 win in 1 finished rated game.")
    with i18n.speaking("fr"):
        said = win_rate_chart("r", [False]).text
        assert said.startswith("0 victoire en 1 partie classée terminée."), said
        said = win_rate_chart("r", [True, True]).text
        assert said.startswith("2 victoires en 2 parties classées terminées."), said
    with i18n.speaking("de"):
        said = win_rate_chart("r", [True]).text
        assert said.startswith("1 Sieg in 1 beendeten gewerteten Partie."), said


def test_a_win_is_summed_up_against_the_deals_records_and_the_players_own(
    app: FastAPI, client: TestClient
) -> None:
    """The win summary (issue 23): moves and time, and one's own average (the deal's records:
    tests/e2e/test_flows.py, on a win played through the interface)."""
    ids = _rated_games(client, 3)
    for game_id, moves in zip(ids, (80, 100, 70), strict=True):
        _win(app, game_id, moves)
    html = client.get(f"/games/{ids[2]}").text
    assert "You won!" in html and "70 moves in " in html
    assert "Your other 2 wins of Corners took 90 moves" in html
    # Someone else looking at the won game sees no comparison made for its player.
    with TestClient(app, base_url="http://testserver") as other:
        assert "Your other 2 wins" not in other.get(f"/games/{ids[2]}").text
