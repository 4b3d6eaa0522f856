"""The competition's tables (app/db/models/competition.py): the uniqueness each rule of the
competition rests on."""

from __future__ import annotations

from datetime import date

from sqlalchemy.orm import Session

from app.db.models import (
    Arena,
    ArenaGame,
    ArenaPlayer,
    Challenge,
    CompetitionDeal,
    QueuedRacer,
    Race,
    RaceRating,
    RatingChange,
    Room,
)
from tests.db.models.conftest import AT, game, player, refused

DAY = date(2026, 11, 1)


def test_a_deal_is_dealt_in_a_competition_once(session: Session) -> None:
    session.add(player("p2", "Bo"))
    deal = {"game": "corners", "deal": 41, "sealed_until": AT, "created_at": AT}
    session.add(CompetitionDeal(kind="challenge", player_id="p1", **deal))
    session.flush()
    assert "UNIQUE" in refused(session, CompetitionDeal, kind="event", player_id="p2", **deal)


def test_a_player_has_one_challenge_a_day_per_game(session: Session) -> None:
    session.add_all([game("g2"), game("g3")])
    session.flush()
    session.add(Challenge(game="corners", day=DAY, player_id="p1", game_id="g1", par=80))
    session.add(Challenge(game="castle", day=DAY, player_id="p1", game_id="g2", par=90))
    session.flush()
    again = {"game": "corners", "day": DAY, "player_id": "p1", "par": 80}
    assert "UNIQUE" in refused(session, Challenge, game_id="g3", **again)


def test_a_game_is_one_challenge_at_most(session: Session) -> None:
    session.add(Challenge(game="corners", day=DAY, player_id="p1", game_id="g1", par=80))
    session.flush()
    other_day = {"game": "corners", "day": date(2026, 11, 2), "player_id": "p1", "par": 80}
    assert "challenge.game_id" in refused(session, Challenge, game_id="g1", **other_day)


def test_a_player_waits_in_one_queue_at_a_time(session: Session) -> None:
    waiting = {"address": "10.0.0.1", "session_key": "s", "joined_at": AT}
    session.add(QueuedRacer(player_id="p1", game="corners", **waiting))
    session.flush()
    assert session.get_one(QueuedRacer, "p1").room_code is None  # no race formed yet
    assert "UNIQUE" in refused(session, QueuedRacer, player_id="p1", game="castle", **waiting)


def test_ratings_are_per_game_and_each_change_is_one_racers_in_one_race(
    session: Session,
) -> None:
    rating = {"mu": 25.0, "sigma": 8.3, "rating": 0.1, "updated_at": AT}
    session.add_all([RaceRating(player_id="p1", game=g, **rating) for g in ("corners", "castle")])
    session.flush()
    assert session.get_one(RaceRating, ("p1", "corners")).races == 0
    session.add(Room(code="ROOMAA", game="corners", created_by="p1", status="open",
                     created_at=AT, active_at=AT))  # fmt: skip
    session.flush()
    race = Race(room_code="ROOMAA", number=1, game="corners", deal=1, starts_at=AT,
                status="finished")  # fmt: skip
    session.add(race)
    session.flush()
    change = {"race_id": race.id, "player_id": "p1", "game": "corners", "place": 1,
              "forfeit": False, "mu_before": 25.0, "sigma_before": 8.3, "mu_after": 27.0,
              "sigma_after": 7.9, "created_at": AT}  # fmt: skip
    session.add(RatingChange(**change))
    session.flush()
    assert "UNIQUE" in refused(session, RatingChange, **change)
    assert "FOREIGN KEY" in refused(session, RatingChange, **{**change, "race_id": race.id + 1})


def test_an_events_games_are_numbered_once_per_player(session: Session) -> None:
    arena = Arena(game="corners", starts_at=AT, ends_at=AT, created_at=AT)
    session.add(arena)
    session.add(game("g2"))
    session.flush()
    session.add(ArenaPlayer(arena_id=arena.id, player_id="p1", joined_at=AT))
    session.add(ArenaGame(game_id="g1", arena_id=arena.id, player_id="p1", seq=1))
    session.flush()
    again = {"arena_id": arena.id, "player_id": "p1", "seq": 1}
    assert "arena_game.seq" in refused(session, ArenaGame, game_id="g2", **again)
    assert "UNIQUE" in refused(session, ArenaPlayer, arena_id=arena.id, player_id="p1",
                               joined_at=AT)  # fmt: skip
