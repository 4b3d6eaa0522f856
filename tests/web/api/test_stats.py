"""The statistics pages and their JSON, on SQLite and PostgreSQL: the leaderboard, player pages,
deal pages, replays and the deal of the day.

Route checks run on the shared test app; tests that need exact numbers run an app of their own
(``leaderboard_min_games=2``) on a database of its own, emptied before each test. The last test
replays every finished game in both databases through the engine.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import pytest
from babel.dates import format_date
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import select

from app.db.models import Game
from app.engine import DEVELOPMENT_KEY, GAMES, MAX_DEAL, Move, get_ruleset
from app.main import create_app
from app.services import daily
from app.services.seal import end_of_day as daily_end
from app.services.stats import wilson_lower_bound
from tests.services.stats_env import (
    WIN_DEAL,
    WIN_GAME,
    Clock,
    Env,
    empty,
    stats_database,
    winning_line,
)
from tests.settings import suite_settings
from tests.web.hidden import HiddenCardGuard
from tests.web.support import error_code, finish_deal, move, new_player, start, start_as

ROW_KEYS = {"rank", "player", "played", "won", "win_rate", "wilson_lower_bound"}


# -- the shared app: routes, errors, player pages, the deal of the day -----------------------------


def test_leaderboard_json_has_the_contract_fields(client: TestClient) -> None:
    board = client.get("/api/leaderboard")
    assert board.status_code == 200, board.text
    data = board.json()
    assert {"game", "period", "min_games", "rows", "games"} <= set(data)
    assert (data["game"], data["period"], data["min_games"]) == (None, "all", 10)
    assert set(data["games"]) == set(GAMES)
    for totals in data["games"].values():
        assert set(totals) == {"played", "won", "win_rate"}
    for row in data["rows"]:
        assert set(row) == ROW_KEYS
        assert row["played"] >= 10
    ranks = [row["rank"] for row in data["rows"]]
    assert ranks == sorted(ranks)


@pytest.mark.parametrize(
    ("query", "game", "period"),
    [
        ("game=corners", "corners", "all"),
        ("game=all", None, "all"),
        ("period=7d", None, "7d"),
        ("period=30d&game=patriarchs", "patriarchs", "30d"),
        ("period=all", None, "all"),
    ],
)
def test_leaderboard_filters(client: TestClient, query: str, game: str | None, period: str) -> None:
    data = client.get(f"/api/leaderboard?{query}").json()
    assert (data["game"], data["period"]) == (game, period)
    page = client.get(f"/leaderboard?{query}")
    assert page.status_code == 200
    assert "Wilson score interval" in page.text
    # Rated games count from the deal (contract v2), as the page says (issue 23).
    assert "each from the moment it is dealt" in page.text
    assert "first move" not in page.text


@pytest.mark.parametrize("query", ["period=1y", "period=", "game=solitaire", "game=CORNERS"])
def test_leaderboard_refuses_unknown_games_and_periods(client: TestClient, query: str) -> None:
    if query == "period=":  # an empty period is the default, all time
        assert client.get(f"/api/leaderboard?{query}").status_code == 200
        return
    assert error_code(client.get(f"/api/leaderboard?{query}"), 422) == "invalid_request"
    page = client.get(f"/leaderboard?{query}")
    assert page.status_code == 422
    assert "text/html" in page.headers["content-type"]


def test_player_page_and_json(api: TestClient, client: TestClient) -> None:
    name = api.player["name"]  # type: ignore[attr-defined]
    rated = api.post("/api/games", json={"game": "quadrangle"}).json()
    assert rated["rated"] is True
    assert api.post(f"/api/games/{rated['id']}/resign").status_code == 200
    game = start(api, "quadrangle", 1)
    assert move(api, game["id"], "t5-t9", 0).status_code == 200
    assert api.post(f"/api/games/{game['id']}/resign").status_code == 200
    data = api.get(f"/api/players/{name.upper()}").json()  # names are case-insensitive
    assert data["player"] == name
    by_game = {g["game"]: g for g in data["games"]}
    assert set(by_game) == {*GAMES, "all"}
    # The rated game counts (dealt, resigned); the casual one is reported apart.
    assert (by_game["quadrangle"]["played"], by_game["quadrangle"]["won"]) == (1, 0)
    assert by_game["quadrangle"]["win_rate"] == 0.0
    assert by_game["corners"]["win_rate"] is None
    assert data["casual"] == [{"game": "quadrangle", "played": 1, "won": 0}]
    recent = {r["id"]: r for r in data["recent"]}
    assert set(recent) == {game["id"], rated["id"]}
    assert recent[game["id"]]["rated"] is False and recent[rated["id"]]["rated"] is True
    assert recent[game["id"]]["link"] == f"/games/{game['id']}/replay"  # the owner may
    # A stranger sees the record but no replay of a deal they have not finished.
    page = client.get(f"/players/{name}")
    assert page.status_code == 200
    assert name in page.text and "Rated games" in page.text and "Casual games" in page.text
    assert f'href="/games/{game["id"]}/replay"' not in page.text
    stranger = client.get(f"/api/players/{name}").json()
    assert {r["link"] for r in stranger["recent"]} == {None}
    finish_deal(client, "quadrangle", 1)
    assert f'href="/games/{game["id"]}/replay"' in client.get(f"/players/{name}").text


@pytest.mark.parametrize("name", ["nobody-here-42", "<script>", "x" * 40])
def test_unknown_players_are_not_found(client: TestClient, name: str) -> None:
    assert client.get(f"/players/{name}").status_code == 404
    assert error_code(client.get(f"/api/players/{name}"), 404) == "not_found"


def test_daily_deal_links_and_list(client: TestClient) -> None:
    today = datetime.now(UTC).date()
    for slug in GAMES:
        response = client.get(f"/daily/{slug}", follow_redirects=False)
        assert response.status_code == 303
        number = daily.daily_deal(slug, today, DEVELOPMENT_KEY)
        assert response.headers["location"] == f"/deal/{slug}/{number}"
    assert client.get("/daily/solitaire", follow_redirects=False).status_code == 404
    data = client.get("/api/daily").json()
    assert data["date"] == today.isoformat()
    assert data["deals"] == {slug: daily.daily_deal(slug, today, DEVELOPMENT_KEY) for slug in GAMES}
    assert len(data["deals"]) == 5
    assert all(1 <= n <= MAX_DEAL for n in data["deals"].values())
    # The deal of the day is a different deal tomorrow.
    tomorrow = daily.daily_deals(today + timedelta(days=1), DEVELOPMENT_KEY)
    assert all(tomorrow[slug] != data["deals"][slug] for slug in GAMES)


def test_home_links_each_game_to_its_deal_of_the_day(client: TestClient) -> None:
    home = client.get("/").text
    today = datetime.now(UTC).date()
    for slug in GAMES:
        assert f'href="/deal/{slug}/{daily.daily_deal(slug, today, DEVELOPMENT_KEY)}"' in home


def test_the_deal_page_of_the_deal_of_the_day_has_its_results(client: TestClient) -> None:
    slug = "patriarchs"
    today = datetime.now(UTC).date()
    number = daily.daily_deal(slug, today, DEVELOPMENT_KEY)
    data = client.get(f"/api/deals/{slug}/{number}").json()
    # Sealed all day (contract v3): counts only; the day's results open when it ends.
    assert data["daily"] == today.isoformat() and data["daily_results"] is None
    assert data["sealed"]["kind"] == "daily"
    assert data["sealed"]["opens_at"] == daily_end(today).isoformat()
    other = client.get(f"/api/deals/{slug}/{number % MAX_DEAL + 1}").json()
    assert other["daily"] is None and other["daily_results"] is None and "sealed" not in other
    page = client.get(f"/deal/{slug}/{number}").text
    assert "Deal of the day for" in page and 'id="sealed-note"' in page
    assert "Results of" not in page
    plain = client.get(f"/deal/{slug}/{number % MAX_DEAL + 1}").text
    assert "Deal of the day for" not in plain and 'id="sealed-note"' not in plain
    yesterday = today - timedelta(days=1)
    past = daily.daily_deal(slug, yesterday, DEVELOPMENT_KEY)
    data = client.get(f"/api/deals/{slug}/{past}").json()
    assert data["daily"] == yesterday.isoformat() and isinstance(data["daily_results"], list)
    # The day in the page's language, as Babel writes it (docs/languages.md).
    day = format_date(yesterday, "medium", locale="en")
    assert f"Results of {day}" in client.get(f"/deal/{slug}/{past}").text


# -- an app of our own, for exact numbers ----------------------------------------------------------


@dataclass
class Own:
    app: FastAPI
    client: TestClient
    env: Env


@pytest.fixture(scope="module")
def own_app(backend: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[FastAPI]:
    url = stats_database(backend, tmp_path_factory.mktemp("stats-web"), "ph_test_stats_web")
    settings = suite_settings(url, leaderboard_min_games=2, leaderboard_cache_seconds=0)
    application = create_app(settings)
    yield application
    application.state.services.engine.dispose()
    application.state.services.move_store.close()


@pytest.fixture()
def own(own_app: FastAPI, monkeypatch: pytest.MonkeyPatch) -> Iterator[Own]:
    sessions = own_app.state.services.sessions
    empty(sessions)
    clock = Clock(at=datetime.now(UTC))
    monkeypatch.setattr(own_app.state.services.games, "stamps", clock)
    env = Env(
        sessions, own_app.state.services.games, clock, str(own_app.state.settings.database_url)
    )
    guard = HiddenCardGuard(own_app)
    with TestClient(own_app, base_url="http://testserver") as c:
        c.event_hooks["response"].append(guard.check)
        yield Own(own_app, c, env)


def test_leaderboard_with_the_minimum_of_games_from_the_settings(own: Own) -> None:
    env = own.env
    ann, bob, cat = env.player("Ann"), env.player("Bob"), env.player("Cat")
    env.win(ann)
    env.lost(ann, WIN_GAME, 3)
    env.lost(bob, WIN_GAME, 4)
    env.lost(bob, WIN_GAME, 5)
    env.lost(cat, WIN_GAME, 6)  # one game: below the minimum of 2
    for query in ("game=corners", "", "game=corners&period=7d", "period=30d"):
        data = own.client.get(f"/api/leaderboard?{query}").json()
        assert data["min_games"] == 2
        assert data["rows"] == [
            {"rank": 1, "player": "Ann", "played": 2, "won": 1, "win_rate": 0.5,
             "wilson_lower_bound": round(wilson_lower_bound(1, 2), 6)},
            {"rank": 2, "player": "Bob", "played": 2, "won": 0, "win_rate": 0.0,
             "wilson_lower_bound": 0.0},
        ]  # fmt: skip
        assert data["games"]["corners"] == {"played": 5, "won": 1, "win_rate": 0.2}
        assert data["games"]["quadrangle"] == {"played": 0, "won": 0, "win_rate": None}
    page = own.client.get("/leaderboard?game=corners")
    assert page.status_code == 200
    assert 'href="/players/Ann"' in page.text and 'href="/players/Bob"' in page.text
    assert "Cat" not in page.text
    assert "20.0%" in page.text  # Corners' win rate across all players


def test_the_deal_page_shows_who_did_best_and_links_replays(own: Own) -> None:
    env = own.env
    ann, bob, cat, dan = (env.player(n) for n in ("Ann", "Bob", "Cat", "Dan"))
    fewest = env.win(ann)
    env.clock.step = env.clock.step / 5
    fastest = env.win(bob, extra_undo=True)
    env.clock.step = env.clock.step * 5
    resigned = env.lost(cat, WIN_GAME, WIN_DEAL)
    env.played(dan, WIN_GAME, WIN_DEAL, rated=False)  # rated, it would seal the deal
    locked = own.client.get(f"/api/deals/{WIN_GAME}/{WIN_DEAL}").json()
    assert (locked["played"], locked["replays_open"], locked["finished"]) == (3, False, [])
    assert locked["fewest_moves"]["player"] == "Ann" and locked["fewest_moves"]["replay"] is None
    auth = new_player(own.client)  # an API player who has finished the deal sees it all
    mine = start_as(own.client, auth, WIN_GAME, WIN_DEAL)["id"]
    assert own.client.post(f"/api/games/{mine}/resign", headers=auth).status_code == 200
    data = own.client.get(f"/api/deals/{WIN_GAME}/{WIN_DEAL}", headers=auth).json()
    assert (data["played"], data["won"], data["win_rate"]) == (4, 2, 0.5)
    assert (data["fewest_moves"]["id"], data["fewest_moves"]["player"]) == (fewest, "Ann")
    assert data["fewest_moves"]["moves"] == len(winning_line())
    assert (data["fastest"]["id"], data["fastest"]["player"]) == (fastest, "Bob")
    assert [g["id"] for g in data["finished"]] == [mine, resigned, fastest, fewest]
    assert [g["replay"] for g in data["finished"]] == [
        f"/games/{i}/replay" for i in (mine, resigned, fastest, fewest)
    ]
    finish_deal(own.client, WIN_GAME, WIN_DEAL)
    page = own.client.get(f"/deal/{WIN_GAME}/{WIN_DEAL}")
    assert page.status_code == 200
    for name in ("Ann", "Bob", "Cat"):
        assert name in page.text
    assert "Dan" not in page.text  # abandoned: played, but not among the finished games


def test_the_deal_page_links_each_finished_game_to_its_replay(own: Own) -> None:
    env = own.env
    won = env.win(env.player())
    lost = env.lost(env.player(), WIN_GAME, WIN_DEAL)
    page = own.client.get(f"/deal/{WIN_GAME}/{WIN_DEAL}")
    assert "/replay" not in page.text and "once you have finished this deal" in page.text
    finish_deal(own.client, WIN_GAME, WIN_DEAL)
    page = own.client.get(f"/deal/{WIN_GAME}/{WIN_DEAL}")
    for game_id in (won, lost):
        assert f'href="/games/{game_id}/replay"' in page.text


def finished_game(env: Env, moves: int = 6) -> tuple[str, str, list[str]]:
    me = env.player()
    game_id = env.start(me, "quadrangle", 1)
    for _ in range(moves):
        env.first_move(me, game_id)
    env.games.resign(game_id, me)
    return me, game_id, env.games.get(game_id, me).log or []


def test_replay_steps_through_every_move_with_every_card_shown(own: Own) -> None:
    _, game_id, log = finished_game(own.env)
    # Replays are for players who have finished a game of the deal.
    assert own.client.get(f"/games/{game_id}/replay").status_code == 403
    refused = own.client.get(f"/api/games/{game_id}/replay")
    assert error_code(refused, 403) == "deal_not_finished"
    finish_deal(own.client, "quadrangle", 1)
    auth = new_player(own.client)
    done = start_as(own.client, auth, "quadrangle", 1)["id"]
    assert own.client.post(f"/api/games/{done}/resign", headers=auth).status_code == 200
    assert len(log) == 6
    rules = get_ruleset("quadrangle")
    start_state = rules.deal(1, own.app.state.settings.deal_key_bytes)
    for step in range(len(log) + 1):
        page = own.client.get(f"/games/{game_id}/replay?step={step}")
        assert page.status_code == 200
        assert f"move <b>{step}</b> of {len(log)}" in page.text
        assert 'class="card back"' not in page.text  # the game is over: every card shown
        data = own.client.get(f"/api/games/{game_id}/replay?step={step}", headers=auth).json()
        assert (data["step"], data["moves"]) == (step, log)
        state = rules.replay(start_state, [Move.parse(m) for m in log[:step]])
        full = rules.full_view(state)
        assert {pid: p["cards"] for pid, p in data["game"]["piles"].items()} == full
    opened = own.client.get(f"/games/{game_id}/replay")  # a replay opens at the deal
    assert f"move <b>0</b> of {len(log)}" in opened.text
    assert 'data-key="ArrowLeft"' in opened.text and 'data-key="ArrowRight"' in opened.text
    beyond = own.client.get(f"/games/{game_id}/replay?step={len(log) + 5}")
    assert f"move <b>{len(log)}</b> of {len(log)}" in beyond.text
    assert own.client.get(f"/games/{game_id}/replay?step=-1").status_code == 422
    assert own.client.get(f"/games/{game_id}/replay?step=two").status_code == 422
    assert own.client.get("/games/no-such-game/replay").status_code == 404
    assert error_code(own.client.get("/api/games/no-such-game/replay"), 404) == "not_found"


def test_a_won_game_replays_to_full_foundations(own: Own) -> None:
    game_id = own.env.win(own.env.player())
    finish_deal(own.client, WIN_GAME, WIN_DEAL)
    page = own.client.get(f"/games/{game_id}/replay?step=100000")  # jumps to the end
    assert page.status_code == 200
    for pile in ("f1", "f2", "f3", "f4"):
        assert re.search(rf'id="pile-{pile}"[^>]*data-count="13"', page.text), pile
    first = own.client.get(f"/games/{game_id}/replay?step=0")
    assert "move <b>0</b> of" in first.text


def test_a_replay_steps_by_fragments_and_says_moves_in_words(own: Own) -> None:
    _, game_id, log = finished_game(own.env)
    finish_deal(own.client, "quadrangle", 1)  # replays are for players who finished the deal
    page = own.client.get(f"/games/{game_id}/replay").text
    rules = get_ruleset("quadrangle")
    # Every move of the log in a player's words, the notation kept as its title.
    words = re.findall(r'title="([^"]+)">([^<]+)</a></li>', page)
    assert [n for n, _ in words] == log
    dealt = rules.deal(1, own.app.state.settings.deal_key_bytes)
    assert words[0][1] == rules.replay_words(dealt, [log[0]])[0]
    step = own.client.get(f"/games/{game_id}/replay?step=1", headers={"HX-Request": "true"})
    assert step.status_code == 200 and "hx-request" in step.headers["vary"].lower()
    html = step.text
    assert "<html" not in html.lower() and 'id="table"' not in html
    assert html.count('hx-swap-oob="true"') == len(rules.pile_ids) + 2
    assert f'move <b>1</b> of {len(log)}: <span class="said">{words[0][1]}</span>' in html
    assert f'hx-get="/games/{game_id}/replay?step=2"' in html


def test_no_replay_for_a_game_in_play(own: Own) -> None:
    me = own.env.player()
    game_id = own.env.played(me)
    page = own.client.get(f"/games/{game_id}/replay")
    assert page.status_code == 409
    assert error_code(own.client.get(f"/api/games/{game_id}/replay"), 409) == "game_in_play"
    assert error_code(own.client.get(f"/api/games/{game_id}/replay?step=0"), 409) == "game_in_play"


# -- last: every finished game in the test databases replays to its stored state -------------------


def test_every_finished_game_replays_to_its_stored_state(app: FastAPI, own: Own) -> None:
    finished_game(own.env, 3)
    checked = 0
    for application in (app, own.app):
        with application.state.services.sessions() as db:
            ids = db.scalars(select(Game.id).where(Game.status != "playing")).all()
        for game_id in ids:
            stored, rebuilt = application.state.services.games.replay(game_id)
            assert stored == rebuilt, game_id
            checked += 1
    assert checked >= 1
