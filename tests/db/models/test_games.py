"""Players, games and the move log (app/db/models/games.py): what the tables refuse and what
they fill in themselves."""

from __future__ import annotations

from sqlalchemy import insert, select
from sqlalchemy.orm import Session

from app.db.models import Game, MoveRecord, Player
from tests.db.models.conftest import AT, game, refused


def _move(seq: int, key: str | None = None, game_id: str = "g1") -> MoveRecord:
    return MoveRecord(
        game_id=game_id, seq=seq, action="move", notation="t1-f", created_at=AT, idempotency_key=key
    )


def test_names_are_unique_whatever_their_case(session: Session) -> None:
    ada = {"id": "p2", "name": "ADA", "name_key": "ada", "created_at": AT}  # as p1's key
    assert "player.name_key" in refused(session, Player, **ada)


def test_two_players_cannot_share_a_token(session: Session) -> None:
    session.get_one(Player, "p1").token_hash = "f" * 64
    session.flush()
    bo = {"id": "p2", "name": "Bo", "name_key": "bo", "created_at": AT, "token_hash": "f" * 64}
    assert "player.token_hash" in refused(session, Player, **bo)


def test_a_new_player_and_game_get_their_defaults(session: Session) -> None:
    # Written as the services write them (Core, not the ORM): the server's defaults.
    session.execute(insert(Player).values(id="p3", name="Cy", name_key="cy", created_at=AT))
    fresh = session.get_one(Player, "p3")
    assert fresh.session_version == 0
    assert (fresh.prefs, fresh.banned_at, fresh.deleted_at, fresh.password_hash) == (
        None, None, None, None,
    )  # fmt: skip
    stored = session.get_one(Game, "g1")
    assert (stored.version, stored.moves, stored.undos, stored.active_ms) == (0, 0, 0, 0)
    assert stored.rated is False and stored.can_undo is False
    assert stored.race_id is None and stored.competition is None


def test_a_game_belongs_to_a_player_who_exists(session: Session) -> None:
    orphan = {"id": "g2", "player_id": "nobody", "game": "corners", "deal": 7, "rules": "3",
              "state": "{}", "status": "playing", "created_at": AT, "updated_at": AT}  # fmt: skip
    assert "FOREIGN KEY" in refused(session, Game, **orphan)


def test_the_move_log_has_one_entry_per_sequence_number(session: Session) -> None:
    session.add(_move(1))
    session.flush()
    again = {"game_id": "g1", "seq": 1, "action": "undo", "created_at": AT}
    assert "UNIQUE" in refused(session, MoveRecord, **again)


def test_an_idempotency_key_is_used_once_per_game(session: Session) -> None:
    session.add(game("g2"))
    session.flush()
    session.add_all([_move(1, "k"), _move(2, None), _move(3, None), _move(1, "k", "g2")])
    session.flush()  # no key at all, twice; the same key in another game
    keyed = {"game_id": "g1", "seq": 4, "action": "move", "created_at": AT, "idempotency_key": "k"}
    assert "move.idempotency_key" in refused(session, MoveRecord, **keyed)


def test_a_moves_flags_default_to_nothing_revealed(session: Session) -> None:
    session.add(_move(1))
    session.flush()
    revealed, snapshot, response = session.execute(
        select(MoveRecord.revealed, MoveRecord.snapshot, MoveRecord.response)
    ).one()
    assert (revealed, snapshot, response) == (False, None, None)
