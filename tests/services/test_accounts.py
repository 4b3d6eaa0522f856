"""Players' data (app/services/accounts.py): the export of everything stored about a player and
nothing of anyone else, deletion under a ghost name (and the rooms' and events' logs rewritten),
the password a deletion asks for, and the operator's tools. On SQLite."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from argon2 import PasswordHasher
from sqlalchemy import insert, select

from app.db.models import (
    Arena,
    ArenaPlayer,
    Challenge,
    CompetitionDeal,
    Event,
    GameHint,
    Player,
    QueuedRacer,
    Room,
    RoomMember,
)
from app.engine import Move, Status
from app.services.accounts import Accounts, check_password, delete, export
from app.services.errors import BadCredentials, Banned, InvalidRequest, NameTaken, NotFound
from app.services.players import hash_token
from tests.services.svc1_support import Db, open_db, start_rated

AT = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)
PASSWORD = "correct horse battery"
QUIET = Move.parse("t4-t9")  # Quadrangle deal 5: a tableau move


@pytest.fixture(scope="module")
def sqlite(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Db]:
    yield from open_db(tmp_path_factory, "accounts")


@pytest.fixture(scope="module")
def password_hash() -> str:
    """An Argon2 hash of PASSWORD made cheap: a hash carries its own cost, which verifying
    it takes (the server's is slow on purpose, a second or more per check on a busy box)."""
    return PasswordHasher(time_cost=1, memory_cost=64, parallelism=1).hash(PASSWORD)


@pytest.fixture()
def svc(sqlite: Db) -> Db:
    sqlite.empty()
    return sqlite


def player(svc: Db, player_id: str) -> Player:
    with svc.sessions() as db:
        found = db.get(Player, player_id)
        assert found is not None
        return found


def with_secrets(svc: Db, name: str, password_hash: str | None = None) -> str:
    """A player with an API token, preferences and (if given) a password."""
    player_id = svc.player(name)
    with svc.sessions.begin() as db:
        found = db.get(Player, player_id)
        assert found is not None
        found.token_hash = hash_token(f"token-of-{name}")
        found.prefs = "auto=1"
        found.password_hash = password_hash
    return player_id


# -- the export ------------------------------------------------------------------------------------


def test_the_export_holds_the_players_games_and_their_logs(svc: Db) -> None:
    games = svc.games()
    me = with_secrets(svc, "Exporter")
    casual = games.start(me, "quadrangle", 5).record.id
    games.move(casual, me, QUIET, 0)
    games.undo(casual, me)
    rated = start_rated(games, me, "corners", 4_294_967_297).record.id
    with svc.sessions.begin() as db:
        db.add(GameHint(game_id=casual, hints=2, first_at=AT))
    with svc.sessions() as db:
        data = export(db, me)
    assert data["format"] == 1
    assert data["player"] | {"created_at": None} == {
        "id": me, "name": "Exporter", "created_at": None, "has_password": False,
        "has_api_token": True, "banned": False, "banned_at": None, "prefs": "auto=1",
    }  # fmt: skip
    by_id = {g["id"]: g for g in data["games"]}
    assert set(by_id) == {casual, rated}
    first = by_id[casual]
    assert (first["deal"], first["moves"], first["undos"], first["hints"]) == (5, 1, 1, 2)
    assert [(e["seq"], e["action"], e["move"]) for e in first["log"]] == [
        (1, "move", "t4-t9"), (2, "undo", None)
    ]  # fmt: skip
    assert "state" not in first  # a stored state holds cards never face up in the game
    assert by_id[rated]["deal"] is None and by_id[rated]["rated"]  # a rated game in play
    assert by_id[rated]["hints"] == 0 and by_id[rated]["log"] == []
    assert [(s["game"], s["played"]) for s in data["statistics"]] == [("all", 1), ("corners", 1)]


def test_the_export_holds_nothing_of_other_players(svc: Db) -> None:
    games = svc.games()
    me, other = svc.player("Mine"), with_secrets(svc, "Theirs")
    games.start(other, "quadrangle", 5)
    start_rated(games, other, "corners", 4_294_967_299)
    with svc.sessions() as db:
        data = export(db, me)
    assert data["games"] == [] and data["statistics"] == [] and data["daily"] == []
    text = json.dumps(data)
    assert "Theirs" not in text and other not in text
    with svc.sessions() as db, pytest.raises(NotFound):
        export(db, "no-such-player")


def test_the_export_lists_challenges_events_and_rooms(svc: Db) -> None:
    games = svc.games()
    me = svc.player("Competitor")
    game_id = games.start(me, "corners", 61).record.id
    with svc.sessions.begin() as db:
        db.execute(
            insert(Challenge).values(
                game="corners", day=AT.date(), player_id=me, game_id=game_id, par=40
            )
        )
        db.execute(
            insert(CompetitionDeal).values(
                game="corners", deal=61, kind="challenge", player_id=me,
                sealed_until=datetime.now(UTC) + timedelta(days=3650), created_at=AT,
            )
        )  # fmt: skip
        event = db.execute(
            insert(Arena)
            .values(game="corners", starts_at=AT, ends_at=AT, created_at=AT)
            .returning(Arena.id)
        ).scalar_one()
        db.execute(insert(ArenaPlayer).values(arena_id=event, player_id=me, joined_at=AT))
        db.execute(
            insert(Room).values(
                code="ROOM01", game="corners", created_by=me, status="open", created_at=AT,
                rated=False, active_at=AT,
            )
        )  # fmt: skip
        db.execute(insert(RoomMember).values(room_code="ROOM01", player_id=me, joined_at=AT))
    with svc.sessions() as db:
        data = export(db, me)
    assert data["challenges"] == [
        {"game": "corners", "date": AT.date().isoformat(), "game_id": game_id, "par": 40}
    ]
    assert [e["event"] for e in data["events"]] == [event]
    assert [(r["code"], r["created_by_me"]) for r in data["rooms"]] == [("ROOM01", True)]
    # Its deal is its own and still sealed: the number stays hidden, from its owner too.
    assert data["games"][0]["deal"] is None


# -- deletion --------------------------------------------------------------------------------------


def event_data(svc: Db) -> dict[str, object]:
    with svc.sessions() as db:
        return {e.room_code: json.loads(e.data) for e in db.scalars(select(Event))}


def test_deletion_leaves_a_ghost_name_and_no_personal_data(svc: Db, password_hash: str) -> None:
    games = svc.games()
    me = with_secrets(svc, "Ann", password_hash)
    game_id = games.start(me, "quadrangle", 5).record.id
    before = player(svc, me).session_version
    ghost = Accounts(svc.sessions).delete_own(me, PASSWORD)
    assert re.fullmatch(r"deleted-[0-9a-f]{8}", ghost)
    gone = player(svc, me)
    assert gone.name == gone.name_key == ghost
    assert gone.password_hash is None and gone.token_hash is None and gone.prefs is None
    assert gone.session_version == before + 1 and gone.deleted_at is not None
    # Its games stay, as anonymous records.
    assert svc.games().get(game_id, None).player_name == ghost
    with pytest.raises(NotFound):
        Accounts(svc.sessions).delete_own(me, PASSWORD)  # deleted already


def test_deletion_rewrites_the_name_in_its_rooms_and_events_logs(svc: Db) -> None:
    me, other = svc.player("Ann"), svc.player("Annabel")
    with svc.sessions.begin() as db:
        for code, by in (("MINE01", me), ("THEIRS", other)):
            db.execute(
                insert(Room).values(
                    code=code, game="corners", created_by=by, status="open", created_at=AT,
                    rated=False, active_at=AT,
                )
            )  # fmt: skip
            db.execute(insert(RoomMember).values(room_code=code, player_id=by, joined_at=AT))
        event = db.execute(
            insert(Arena)
            .values(game="corners", starts_at=AT, ends_at=AT, created_at=AT)
            .returning(Arena.id)
        ).scalar_one()
        db.execute(insert(ArenaPlayer).values(arena_id=event, player_id=me, joined_at=AT))
        said = {"players": ["Ann", "Annabel"], "standings": [{"player": "Ann"}], "Ann": 1}
        for code in ("MINE01", "THEIRS", f"@{event}"):
            db.execute(
                insert(Event).values(
                    room_code=code, kind="room", data=json.dumps(said), created_at=AT
                )
            )
        db.execute(
            insert(QueuedRacer).values(
                player_id=me, game="corners", address="127.0.0.1", session_key="s",
                joined_at=AT,
            )
        )  # fmt: skip
    ghost = Accounts(svc.sessions).admin_delete("Ann")
    logs = event_data(svc)
    rewritten = {"players": [ghost, "Annabel"], "standings": [{"player": ghost}], ghost: 1}
    assert logs["MINE01"] == logs[f"@{event}"] == rewritten
    assert logs["THEIRS"] == said  # a room the player was never in keeps its log
    with svc.sessions() as db:
        assert db.scalars(select(QueuedRacer)).all() == []


def test_deleting_twice_changes_nothing_more(svc: Db) -> None:
    me = svc.player("Twice")
    accounts = Accounts(svc.sessions)
    ghost = accounts.admin_delete("Twice")
    with svc.sessions.begin() as db:
        found = db.get(Player, me)
        assert found is not None
        assert delete(db, found) == ghost
    assert player(svc, me).session_version == 1


def test_a_password_guards_deletion(svc: Db, password_hash: str) -> None:
    me = with_secrets(svc, "Guarded", password_hash)
    accounts = Accounts(svc.sessions)
    for wrong in ("wrong password", None):
        with pytest.raises(BadCredentials):
            accounts.delete_own(me, wrong)
    assert player(svc, me).name == "Guarded"
    check_password(player(svc, me), PASSWORD)
    # Without a password (an anonymous browser player) there is nothing to ask.
    check_password(player(svc, svc.player()), None)
    broken = player(svc, me)
    broken.password_hash = "not an argon2 hash"
    with pytest.raises(BadCredentials):
        check_password(broken, PASSWORD)


# -- the operator's tools --------------------------------------------------------------------------


def test_a_ban_closes_rated_games_and_can_be_lifted(svc: Db) -> None:
    me = svc.player("Cheater")
    accounts = Accounts(svc.sessions)
    assert not accounts.is_banned(me)
    accounts.refuse_rated_if_banned(me)
    first = accounts.ban("Cheater").banned_at
    assert first is not None and accounts.is_banned(me)
    assert accounts.ban("cheater").banned_at == first  # banned again: since the first time
    with pytest.raises(Banned):
        accounts.refuse_rated_if_banned(me)
    assert accounts.ban("Cheater", banned=False).banned_at is None
    assert not accounts.is_banned(me)


def test_revoking_signs_a_player_out_everywhere(svc: Db) -> None:
    me = with_secrets(svc, "Revoked")
    Accounts(svc.sessions).revoke("Revoked")
    found = player(svc, me)
    assert found.session_version == 1 and found.token_hash is None
    assert found.prefs == "auto=1"  # nothing else changes


def test_an_operators_rename_follows_the_name_rules(svc: Db) -> None:
    me = svc.player("OldName")
    svc.player("Taken")
    accounts = Accounts(svc.sessions)
    assert accounts.rename("oldname", "NewName") == "NewName"
    assert player(svc, me).name == "NewName"
    with pytest.raises(NameTaken):
        accounts.rename("NewName", "taken")
    with pytest.raises(InvalidRequest):
        accounts.rename("NewName", "deleted-12345678")  # kept for deleted accounts
    with pytest.raises(InvalidRequest):
        accounts.rename("NewName", "no spaces")


def test_the_tools_name_a_player_who_is_not_there(svc: Db) -> None:
    accounts = Accounts(svc.sessions)
    for tool in (accounts.admin_delete, accounts.ban, accounts.revoke):
        with pytest.raises(NotFound, match="'Nobody'"):
            tool("Nobody")
    with pytest.raises(NotFound):
        accounts.rename("bad name!", "Other")


def test_the_players_games_are_exported_in_the_order_created(svc: Db) -> None:
    games = svc.games()
    me = svc.player()
    ids = []
    for deal in (3, 1, 2):
        ids.append(games.start(me, "quadrangle", deal).record.id)
        svc.clock.move(seconds=1)
    games.resign(ids[0], me)
    with svc.sessions() as db:
        data = export(db, me)
    assert [g["id"] for g in data["games"]] == ids
    assert data["games"][0]["status"] == Status.LOST and data["games"][0]["finished_at"]
