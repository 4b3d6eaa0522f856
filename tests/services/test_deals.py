"""A deal's record (app/services/deals.py), on SQLite and PostgreSQL: each player's first
finished game of it, who may see its finished games and replays, and the deal of the day (the
statistics' database and clock: tests/services/stats_env.py)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import select

from app.db.models import (
    Game,
)
from app.services import daily as daily_module
from app.web.api.schemas.records import deal_json
from tests.services.stats_env import (
    START,
    WIN_DEAL,
    WIN_GAME,
    Env,
    winning_line,
)

# -- deals -----------------------------------------------------------------------------------------


def test_a_deal_records_plays_wins_fewest_moves_and_fastest_time(env: Env) -> None:
    ann, bob, cat, dan = (env.player(n) for n in ("Ann", "Bob", "Cat", "Dan"))
    fewest = env.win(ann, rated=False)  # the line as found
    env.clock.step = timedelta(milliseconds=200)
    fastest = env.win(bob, extra_undo=True, rated=False)  # one move more, on a faster clock
    env.clock.step = timedelta(seconds=1)
    resigned = env.lost(cat, WIN_GAME, WIN_DEAL, rated=False)
    env.played(dan, WIN_GAME, WIN_DEAL, rated=False)  # unfinished: not on the deal's record
    summary = env.deals().summary(WIN_GAME, str(WIN_DEAL), ann)
    assert (summary.played, summary.won, summary.win_rate) == (3, 2, 2 / 3)
    assert summary.fewest_moves is not None and summary.fastest is not None
    assert (summary.fewest_moves.id, summary.fewest_moves.player) == (fewest, "Ann")
    assert summary.fewest_moves.moves == len(winning_line())
    assert (summary.fastest.id, summary.fastest.player) == (fastest, "Bob")
    assert summary.fastest.moves == len(winning_line()) + 1
    assert summary.fastest.duration_ms is not None and summary.fewest_moves.duration_ms is not None
    assert summary.fastest.duration_ms < summary.fewest_moves.duration_ms
    assert [g.id for g in summary.finished] == [resigned, fastest, fewest]  # latest first
    data = deal_json(summary)
    assert data["fewest_moves"]["player"] == "Ann" and data["fastest"]["player"] == "Bob"
    assert data["played"] == 3 and data["won"] == 2


def test_a_deal_counts_each_players_first_finished_game_only(env: Env) -> None:
    ann, bob = env.player("Ann"), env.player("Bob")
    first = env.lost(ann, WIN_GAME, WIN_DEAL, rated=False)
    env.clock.step = timedelta(milliseconds=10)
    env.win(ann, rated=False)  # a replay of a known deal: faster and won, and counts for nothing
    env.win(ann, rated=False)
    env.clock.step = timedelta(seconds=1)
    bobs = env.win(bob, extra_undo=True, rated=False)
    deals = env.deals()
    summary = deals.summary(WIN_GAME, WIN_DEAL, ann)
    assert (summary.played, summary.won) == (2, 1)
    assert summary.fewest_moves is not None and summary.fewest_moves.id == bobs
    assert summary.fastest is not None and summary.fastest.id == bobs
    assert [g.id for g in summary.finished] == [bobs, first]


def test_finished_games_and_replays_open_only_to_players_who_finished_the_deal(env: Env) -> None:
    ann, bob, cat = (env.player(n) for n in ("Ann", "Bob", "Cat"))
    won = env.win(ann, rated=False)
    deals = env.deals()
    for viewer in (None, cat):  # never played it: counts and records, no replays
        summary = deals.summary(WIN_GAME, WIN_DEAL, viewer)
        assert (summary.played, summary.won, summary.replays_open) == (1, 1, False)
        assert summary.finished == []
        assert summary.fewest_moves is not None and summary.fewest_moves.replay_url is None
        assert deal_json(summary)["fewest_moves"]["replay"] is None
    bobs = env.played(bob, WIN_GAME, WIN_DEAL, rated=False)
    in_play = deals.summary(WIN_GAME, WIN_DEAL, bob)
    assert in_play.finished == [] and in_play.viewer_game == bobs
    env.games.resign(bobs, bob)
    done = deals.summary(WIN_GAME, WIN_DEAL, bob)
    assert done.replays_open and done.viewer_game is None
    assert done.fewest_moves is not None and done.fewest_moves.replay_url == f"/games/{won}/replay"
    assert {g.id for g in done.finished} == {won, bobs}


@pytest.mark.slow
def test_the_deal_of_the_day_ranks_each_players_first_game_of_the_day(
    env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(
        daily_module, "daily_deal", lambda slug, day, key: WIN_DEAL if day == START.date() else 1
    )
    eve, ann, bob, cat = (env.player(n) for n in ("Eve", "Ann", "Bob", "Cat"))
    env.clock.at = START - timedelta(days=1)
    env.win(eve, rated=False)  # yesterday: not in today's results
    env.clock.at = START
    env.clock.step = timedelta(milliseconds=100)
    env.win(bob, extra_undo=True, rated=False)  # faster, but one move more
    env.clock.step = timedelta(seconds=1)
    env.win(ann, rated=False)
    env.lost(cat, WIN_GAME, WIN_DEAL, rated=False)
    env.win(cat, rated=False)  # Cat's second game of the deal: not ranked
    env.win(eve, rated=False)  # Eve's second game (her first was yesterday): not ranked
    deals = env.deals()
    day = env.clock.today()
    during = deals.summary(WIN_GAME, WIN_DEAL, ann)
    # Sealed all day (contract v3): the counts, nothing that ranks or replays.
    assert during.sealed is not None and during.sealed.until is not None
    assert (during.daily, during.daily_results, during.finished) == (day, None, [])
    assert during.fewest_moves is None and during.fastest is None and not during.replays_open
    assert during.played == 4  # each player's first finished game
    env.clock.at = START + timedelta(days=1)  # the day is over: its results open
    summary = deals.summary(WIN_GAME, WIN_DEAL, ann)
    assert summary.sealed is None and summary.daily == day
    assert summary.daily_results is not None
    assert [g.player for g in summary.daily_results] == ["Ann", "Bob"]  # fewest moves first
    assert deal_json(summary)["daily"] == day.isoformat()
    assert len(summary.finished) == 4  # each player's first finished game
    other = deals.summary(WIN_GAME, WIN_DEAL + 1)
    assert other.daily is None and other.daily_results is None  # the stub says one number
    assert deals.summary("patriarchs", WIN_DEAL).daily == day


def test_a_deal_nobody_played(env: Env) -> None:
    summary = env.deals().summary("castles-end", 987_654_321)
    assert (summary.played, summary.won, summary.win_rate) == (0, 0, None)
    assert summary.fewest_moves is None and summary.fastest is None and summary.finished == []


def test_every_finished_game_here_replays_to_its_stored_state(env: Env) -> None:
    me = env.player()
    env.win(me, extra_undo=True)
    env.lost(me)
    env.games.resign(env.start(me, "patriarchs", 2), me)
    with env.sessions() as db:
        finished = db.scalars(select(Game.id).where(Game.status != "playing")).all()
    assert len(finished) == 3
    for game_id in finished:
        stored, rebuilt = env.games.replay(game_id)
        assert stored == rebuilt
