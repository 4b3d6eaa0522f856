"""The daily challenge as a service (app/services/challenge.py): one game a day per player and
game on a deal of their own, today's status, streaks of days won, a day's standings (wins by
moves over par, then active time; replays once the day is over) and the calendar. On SQLite,
with the services' clock; tests/web/test_challenge.py plays it through the routes."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from itertools import count

import pytest
from sqlalchemy import insert, select

from app.db.models import Challenge, CompetitionDeal, DealVerdict, Game
from app.engine import GAMES, Status
from app.services.challenge import (
    BEST_GAMES,
    Challenges,
    ChallengeStatus,
    check_game,
    start_of_day,
)
from app.services.errors import AlreadyPlayed, InvalidRequest, NotFound
from app.services.seal import end_of_day
from tests.services.svc1_support import KEY, Db, open_db

GAME = "corners"
W, L, P = Status.WON, Status.LOST, Status.PLAYING
_ids = count()


@pytest.fixture(scope="module")
def sqlite(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Db]:
    yield from open_db(tmp_path_factory, "challenge")


@pytest.fixture()
def svc(sqlite: Db) -> Db:
    sqlite.empty()
    return sqlite


def challenges(svc: Db) -> Challenges:
    return Challenges(svc.sessions, svc.games(), KEY)


def certify(svc: Db, *deals: int, par: int | None = 30) -> None:
    """Deals of ``GAME`` in the certified pool (the solver's verdicts, made up)."""
    with svc.sessions.begin() as db:
        for deal in deals:
            db.execute(
                insert(DealVerdict).values(
                    game=GAME, deal=deal, outcome="winnable", solution="r1-f1 r2-f2",
                    positions=1, certified=True, created_at=svc.clock(), par=par,
                )
            )  # fmt: skip


def entered(
    svc: Db, player: str, day: date, status: str, moves: int = 40, par: int = 30, ms: int = 0
) -> str:
    """A challenge game as the day's table reads it: its row and its game's outcome."""
    game_id = f"c{next(_ids)}"
    ended = status != P
    at = start_of_day(day) + timedelta(hours=1)
    with svc.sessions.begin() as db:
        db.execute(
            insert(Game).values(
                id=game_id, player_id=player, game=GAME, deal=next(_ids) + 10**12, rules="1",
                state="", status=status, moves=moves, created_at=at, updated_at=at,
                active_ms=ms, duration_ms=ms if ended else None, competition="challenge",
            )
        )  # fmt: skip
        db.execute(
            insert(Challenge).values(game=GAME, day=day, player_id=player, game_id=game_id, par=par)
        )
    return game_id


# -- playing ---------------------------------------------------------------------------------------


def test_a_challenge_is_a_clean_game_of_a_deal_of_ones_own(svc: Db) -> None:
    certify(svc, 101, 102, 103)
    me = svc.player()
    service = challenges(svc)
    view = service.start(me, GAME)
    record = view.record
    assert record.competition == "challenge" and not record.rated
    assert record.deal in {101, 102, 103} and view.number_hidden  # sealed: its number too
    with svc.sessions() as db:
        row = db.execute(select(Challenge.day, Challenge.game_id, Challenge.par)).one()
        claim = db.execute(select(CompetitionDeal.player_id, CompetitionDeal.kind)).one()
        sealed = db.scalar(select(CompetitionDeal.sealed_until))
    assert tuple(row) == (svc.clock.today(), record.id, 30)
    assert tuple(claim) == (me, "challenge")
    assert sealed is not None and sealed.replace(tzinfo=UTC) == end_of_day(svc.clock.today())


def test_one_challenge_a_day_per_game(svc: Db) -> None:
    certify(svc, 101, 102, 103)
    me = svc.player()
    service = challenges(svc)
    first = service.start(me, GAME).record.id
    with pytest.raises(AlreadyPlayed) as again:
        service.start(me, GAME)
    assert again.value.details == {"game": first}
    svc.clock.move(days=1)  # a new UTC day: a new challenge, on another deal
    second = service.start(me, GAME).record
    assert second.id != first
    with svc.sessions() as db:
        assert db.scalar(select(Game.deal).where(Game.id == first)) != second.deal


def test_an_unknown_game_is_refused_with_the_engines_reason() -> None:
    assert check_game(GAME) == GAME
    with pytest.raises(InvalidRequest) as refused:
        check_game("solitaire")
    assert refused.value.words is not None


def test_todays_status_of_every_game(svc: Db) -> None:
    certify(svc, 101)
    me = svc.player()
    service = challenges(svc)
    day = svc.clock.today()
    nobody = service.status(None)
    assert set(nobody) == set(GAMES)
    assert all(s == ChallengeStatus(day, None, 0) for s in nobody.values())
    game_id = service.start(me, GAME).record.id
    mine = service.status(me)
    assert mine[GAME].your_game == game_id
    assert all(mine[slug].your_game is None for slug in GAMES if slug != GAME)
    assert mine[GAME].starts_at == start_of_day(day)
    assert mine[GAME].ends_at == start_of_day(day) + timedelta(days=1)


# -- streaks ---------------------------------------------------------------------------------------


def test_a_streak_counts_days_won_up_to_today_or_yesterday(svc: Db) -> None:
    me = svc.player("Streaker")
    service = challenges(svc)
    today = svc.clock.today()
    for back, status in ((4, W), (3, L), (2, W), (1, W)):
        entered(svc, me, today - timedelta(days=back), status)
    # Today not won yet: the streak still stands on yesterday.
    assert service.streaks(me) == {slug: 2 if slug == GAME else 0 for slug in GAMES}
    entered(svc, me, today, W)
    assert service.streaks_by_name("streaker") == {GAME: 3}
    svc.clock.move(days=2)  # a day missed: the streak is gone
    assert service.streaks_by_name("Streaker") == {}
    assert service.streaks_by_name("Nobody") == {}


def test_a_game_in_play_today_does_not_break_the_streak(svc: Db) -> None:
    me = svc.player()
    today = svc.clock.today()
    entered(svc, me, today - timedelta(days=1), W)
    entered(svc, me, today, P)
    assert challenges(svc).status(me)[GAME].streak == 1


# -- standings -------------------------------------------------------------------------------------


def test_the_days_standings_rank_wins_by_moves_over_par_then_active_time(svc: Db) -> None:
    today = svc.clock.today()
    players = {name: svc.player(name) for name in ("Ada", "Bob", "Cyd", "Dia", "Eda")}
    entered(svc, players["Ada"], today, W, moves=35, par=30, ms=9_000)  # 5 over
    entered(svc, players["Bob"], today, W, moves=40, par=38, ms=20_000)  # 2 over
    entered(svc, players["Cyd"], today, W, moves=32, par=30, ms=10_000)  # 2 over, slower
    entered(svc, players["Dia"], today, L, moves=10, ms=1_000)
    entered(svc, players["Eda"], today, P, moves=5, ms=500)
    table = challenges(svc).standings(GAME)
    assert not table.closed and table.day == today and table.ends_at == end_of_day(today)
    rows = [(r.rank, r.player, r.status, r.over_par, r.active_ms) for r in table.rows]
    assert rows == [
        (1, "Cyd", W, 2, 10_000), (2, "Bob", W, 2, 20_000), (3, "Ada", W, 5, 9_000),
        (None, "Eda", P, None, 500), (None, "Dia", L, None, 1_000),
    ]  # fmt: skip
    assert all(r.game_id is None for r in table.rows)  # no replays while the day is on


def test_once_the_day_is_over_its_best_games_open_as_replays(svc: Db) -> None:
    day = svc.clock.today()
    won = [entered(svc, svc.player(), day, W, moves=30 + n) for n in range(BEST_GAMES + 1)]
    lost = entered(svc, svc.player(), day, L)
    svc.clock.move(days=1)
    table = challenges(svc).standings(GAME, day)
    assert table.closed
    shown = {r.game_id for r in table.rows} - {None}
    assert shown == set(won[:BEST_GAMES])  # the eleventh win and the loss stay closed
    assert lost not in shown


def test_a_future_days_standings_are_not_there_yet(svc: Db) -> None:
    with pytest.raises(NotFound):
        challenges(svc).standings(GAME, svc.clock.today() + timedelta(days=1))
    with pytest.raises(InvalidRequest):
        challenges(svc).standings("solitaire")


def test_the_calendar_lists_past_days_with_players_and_winners(svc: Db) -> None:
    today = svc.clock.today()
    for status in (W, L, W):
        entered(svc, svc.player(), today - timedelta(days=1), status)
    entered(svc, svc.player(), today - timedelta(days=3), L)
    entered(svc, svc.player(), today, W)  # today is not on it yet
    entered(svc, svc.player(), today - timedelta(days=8), W)  # before the days asked for
    days = challenges(svc).calendar(GAME, days=7)
    assert [d.day for d in days] == [today - timedelta(days=n) for n in range(1, 8)]
    assert [(d.players, d.winners) for d in days] == [
        (3, 2), (0, 0), (1, 0), (0, 0), (0, 0), (0, 0), (0, 0)
    ]  # fmt: skip


def test_the_challenge_day_is_the_utc_date_of_the_services_clock(svc: Db) -> None:
    service = challenges(svc)
    svc.clock.at = datetime(2026, 11, 21, 23, 30, tzinfo=UTC)
    assert service.today() == date(2026, 11, 21)
    svc.clock.move(hours=1)
    assert service.today() == date(2026, 11, 22)
