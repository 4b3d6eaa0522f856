"""The recount (app/services/recount.py): a game's result, moves and active time from its deal
and move log alone, and a whole recount that finds where stored rows and ratings disagree."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace
from typing import Any

import pytest
from sqlalchemy import update

from app.bootstrap import Services, build
from app.db.models import Game, RaceRating
from app.engine import DEVELOPMENT_KEY, dumps, get_ruleset
from app.services.players import create_player
from app.services.recount import recount, recount_game
from tests.migrated import migrated_sqlite
from tests.services.stats_env import WIN_DEAL, WIN_GAME, winning_line
from tests.settings import suite_settings

START = datetime(2026, 11, 23, 20, 0, tzinfo=UTC)
IDLE_CAP_MS = 60_000


def services_of(max_moves: int = 2000) -> Any:
    games = SimpleNamespace(deal_key=DEVELOPMENT_KEY, max_moves=max_moves, idle_cap_ms=IDLE_CAP_MS)
    return SimpleNamespace(games=games)


def game(status: str, slug: str = WIN_GAME, deal: int = WIN_DEAL) -> Any:
    return SimpleNamespace(game=slug, deal=deal, status=status)


def log(*entries: tuple[str, str | None, float]) -> list[Any]:
    """(action, notation, seconds after the start) each."""
    return [
        SimpleNamespace(
            action=a, notation=n, revealed=False, created_at=START + timedelta(seconds=s)
        )
        for a, n, s in entries
    ]


def test_a_won_game_is_recounted_from_its_line() -> None:
    line = winning_line()
    entries = log(*(("move", str(m), i) for i, m in enumerate(line)))
    found = recount_game(services_of(), game("won"), entries)
    rules = get_ruleset(WIN_GAME)
    end = rules.replay(rules.deal(WIN_DEAL, DEVELOPMENT_KEY), line)
    assert (found.status, found.moves, found.active_ms) == (
        "won",
        len(line),
        (len(line) - 1) * 1000,
    )
    assert found.on_foundations == rules.on_foundations(end) and found.state_text == dumps(end)


def test_an_undone_move_is_out_of_force_and_counts_as_none() -> None:
    rules = get_ruleset(WIN_GAME)
    start = rules.deal(WIN_DEAL, DEVELOPMENT_KEY)
    first, second = winning_line()[:2]
    entries = log(("move", str(first), 0), ("move", str(second), 1), ("undo", None, 2))
    found = recount_game(services_of(), game("playing"), entries)
    assert (found.status, found.moves) == ("playing", 1)
    assert found.state_text == dumps(rules.apply(start, first))


def test_a_resignation_ends_the_game_lost() -> None:
    first = get_ruleset(WIN_GAME).legal_moves(
        get_ruleset(WIN_GAME).deal(WIN_DEAL, DEVELOPMENT_KEY)
    )[0]
    entries = log(("move", str(first), 0), ("resign", None, 1))
    assert recount_game(services_of(), game("lost"), entries).status == "lost"


def test_the_move_cap_ends_a_game_only_as_its_row_says() -> None:
    first = get_ruleset(WIN_GAME).legal_moves(
        get_ruleset(WIN_GAME).deal(WIN_DEAL, DEVELOPMENT_KEY)
    )[0]
    entries = log(("move", str(first), 0))
    capped = services_of(max_moves=1)
    assert recount_game(capped, game("lost"), entries).status == "lost"
    assert recount_game(capped, game("playing"), entries).status == "playing"


def test_active_time_counts_each_pause_up_to_the_idle_cap() -> None:
    line = winning_line()
    entries = log(
        ("move", str(line[0]), 0), ("move", str(line[1]), 10), ("move", str(line[2]), 610)
    )
    assert recount_game(services_of(), game("playing"), entries).active_ms == 10_000 + IDLE_CAP_MS
    untouched = recount_game(services_of(), game("playing"), [])
    assert (untouched.status, untouched.moves, untouched.active_ms) == ("playing", 0, None)


# -- a whole recount, over the real services ---------------------------------------------


@pytest.fixture(scope="module")
def services(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Services]:
    url = migrated_sqlite(tmp_path_factory, "recount")
    made = build(suite_settings(url), solver_workers=1)
    yield made
    made.close()


def test_a_recount_agrees_with_the_rows_until_one_is_changed(services: Services) -> None:
    """A rated race of two, both resigned: its games, and the ratings it changed."""
    with services.sessions.begin() as db:
        ids = [create_player(db, name)[0].id for name in ("ann", "bob")]
        code, _ = services.rooms.form_rated(db, "corners", ids, datetime.now(UTC))
    race = services.rooms.get(code).race
    assert race is not None
    for pid, name in zip(ids, ("ann", "bob"), strict=True):
        services.games.resign(race.games[name], pid)
    report = recount(services)
    assert (report.games, report.races, report.problems) == (2, 1, [])
    with services.sessions.begin() as db:
        db.execute(update(Game).where(Game.id == race.games["ann"]).values(moves=7))
        db.execute(update(RaceRating).where(RaceRating.player_id == ids[1]).values(mu=40.0))
    problems = recount(services).problems
    assert len(problems) == 2
    assert f"game {race.games['ann']}: the log says lost in 0 moves, the row lost in 7" in problems
    assert f"rating of {ids[1]} in corners: differs from a recount" in problems
