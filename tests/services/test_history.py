"""A player's own games (app/services/history.py): the unfinished ones to resume and the
finished ones, latest activity first, with deal numbers and replays held back while a
competition on the deal is on. On SQLite, games played through the game service."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import insert, update

from app.db.models import CompetitionDeal, Game, Race, Room
from app.engine import Move, Status
from app.services.daily import daily_deal
from app.services.games import Games
from app.services.history import History
from tests.services.svc1_support import KEY, Db, open_db, start_rated

QUIET = Move.parse("t4-t9")  # Quadrangle deal 5: a tableau move


@pytest.fixture(scope="module")
def sqlite(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Db]:
    yield from open_db(tmp_path_factory, "history")


@pytest.fixture()
def svc(sqlite: Db) -> Db:
    sqlite.empty()
    return sqlite


def history(svc: Db, games: Games | None = None) -> History:
    return History(svc.sessions, (games or svc.games()).sealer)


def later(svc: Db) -> None:
    svc.clock.move(minutes=1)


def test_games_in_progress_are_the_players_own_latest_first(svc: Db) -> None:
    games = svc.games()
    me, other = svc.player(), svc.player()
    first = games.start(me, "quadrangle", 5).record.id
    later(svc)
    second = games.start(me, "corners", 3).record.id
    later(svc)
    games.start(other, "quadrangle", 5)  # someone else's
    later(svc)
    games.move(first, me, QUIET, 0)  # the latest activity
    ids = [g.id for g in history(svc, games).in_progress(me)]
    assert ids == [first, second]
    assert [g.id for g in history(svc, games).in_progress(me, limit=1)] == [first]
    resumed = history(svc, games).in_progress(me)[0]
    assert (resumed.game, resumed.deal, resumed.status, resumed.moves) == (
        "quadrangle", 5, Status.PLAYING, 1
    )  # fmt: skip
    assert resumed.started_at is not None and resumed.duration_ms is None


def test_the_list_splits_games_in_play_from_finished_ones(svc: Db) -> None:
    games = svc.games()
    me = svc.player()
    playing = games.start(me, "quadrangle", 5).record.id
    later(svc)
    lost_first = games.start(me, "corners", 3).record.id
    games.resign(lost_first, me)
    later(svc)
    lost_last = games.start(me, "corners", 4).record.id
    games.move(lost_last, me, games.get(lost_last, me).legal_moves[0], 0)
    later(svc)
    games.resign(lost_last, me)
    mine = history(svc, games).of(me)
    assert [g.id for g in mine.in_progress] == [playing]
    assert [g.id for g in mine.finished] == [lost_last, lost_first]
    done = mine.finished[0]
    assert done.status == Status.LOST and done.duration_ms == 60_000
    assert mine.finished[1].started_at is None  # no move was made
    assert not any(g.sealed for g in mine.finished)
    assert history(svc, games).of(svc.player()).finished == []


def test_a_rated_game_hides_its_number_until_it_ends(svc: Db) -> None:
    games = svc.games()
    me = svc.player()
    rated = start_rated(games, me, "quadrangle", 4_294_967_301).record.id
    assert history(svc, games).in_progress(me)[0].deal is None
    games.resign(rated, me)
    assert history(svc, games).of(me).finished[0].deal == 4_294_967_301


def test_a_finished_game_of_a_sealed_deal_says_so(svc: Db) -> None:
    games = svc.games()
    me = svc.player()
    today = daily_deal("quadrangle", svc.clock.today(), KEY)
    game_id = games.start(me, "quadrangle", today).record.id
    games.resign(game_id, me)
    finished = history(svc, games).of(me).finished[0]
    assert finished.sealed  # the deal of the day is sealed until the day ends
    assert finished.deal == today  # its number is public, and this one the player chose
    assert not History(svc.sessions).of(me).finished[0].sealed  # (no sealer: not asked)
    svc.clock.move(days=1)
    assert not history(svc, games).of(me).finished[0].sealed


def test_a_game_of_a_race_still_on_hides_its_number_even_once_over(svc: Db) -> None:
    games = svc.games()
    me = svc.player()
    game_id = games.start(me, "quadrangle", 9).record.id
    games.resign(game_id, me)
    at = datetime(2026, 11, 21, tzinfo=UTC)
    with svc.sessions.begin() as db:
        db.execute(
            insert(Room).values(
                code="ABCDEF", game="quadrangle", created_by=me, status="racing", created_at=at,
                rated=False, active_at=at,
            )
        )  # fmt: skip
        race = {"room_code": "ABCDEF", "number": 1, "game": "quadrangle", "deal": 9,
                "starts_at": at, "status": "running", "rated": False}  # fmt: skip
        race_id = db.execute(insert(Race).values(**race).returning(Race.id)).scalar_one()
        db.execute(update(Game).where(Game.id == game_id).values(race_id=race_id))
    assert history(svc, games).of(me).finished[0].deal is None
    with svc.sessions.begin() as db:
        db.execute(update(Race).values(status="finished", finished_at=at))
    assert history(svc, games).of(me).finished[0].deal == 9


def test_a_deal_of_ones_own_hides_its_number_while_its_seal_holds(svc: Db) -> None:
    games = svc.games()
    me = svc.player()
    game_id = games.start(me, "corners", 77).record.id
    games.resign(game_id, me)
    # The list asks the wall clock (app.services.players.now): a seal far ahead, then gone.
    until = datetime.now(UTC) + timedelta(days=3650)
    with svc.sessions.begin() as db:
        db.execute(
            insert(CompetitionDeal).values(
                game="corners", deal=77, kind="challenge", player_id=me, sealed_until=until,
                created_at=until,
            )
        )  # fmt: skip
    assert history(svc, games).of(me).finished[0].deal is None
    with svc.sessions.begin() as db:
        db.execute(update(CompetitionDeal).values(sealed_until=datetime(2000, 1, 1, tzinfo=UTC)))
    assert history(svc, games).of(me).finished[0].deal == 77
