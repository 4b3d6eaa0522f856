"""Players' data (contract v3, Accounts): export as JSON and deletion with a ghost name; and
the operator's tools (``python -m app.cli player …``): rename, ban, revoke sessions, delete.

A deleted player keeps its row under a ghost name ``deleted-<8 hex>`` (a name nobody can
choose: ``players.check_name`` refuses the prefix), without password, API token or sessions,
so that its games stay as anonymous records and deal pages, races and standings add up as
before. What else held the name is rewritten too: the events of its rooms (JSON).
"""

from __future__ import annotations

import json
import secrets
from datetime import datetime
from typing import Any

from argon2.exceptions import InvalidHashError, VerifyMismatchError
from sqlalchemy import delete as sql_delete
from sqlalchemy import or_, select, update
from sqlalchemy.orm import Session, sessionmaker

from app.db.models import (
    ArenaPlayer,
    Challenge,
    CompetitionDeal,
    DailyStats,
    Event,
    Game,
    GameHint,
    MoveRecord,
    Player,
    PlayerStats,
    QueuedRacer,
    Race,
    RaceRating,
    RatingChange,
    Room,
    RoomMember,
)
from app.services.errors import BadCredentials, Banned, NotFound
from app.services.players import GHOST_PREFIX, _hasher, find_by_name, now, rename
from app.services.seal import Sealer, shown_number
from app.services.statuses import RaceStatus

EXPORT_FORMAT = 1


def exported_deal(game: Game, race_finished: bool | None, own_sealed: bool = False) -> int | None:
    """The deal number an export may show for one of the player's games: the seal's own rule
    (app/services/seal.py: a rated game in play, a game of a race still on, and a game of a
    sealed deal of one's own hide their number from everyone, owner included)."""
    race_on = (game.race_id is not None and not race_finished) or own_sealed
    return shown_number(game.deal, rated=game.rated, status=game.status, race_on=race_on)


def _iso(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()


def export(db: Session, player_id: str, at: datetime | None = None) -> dict[str, Any]:
    """Everything stored about the player, and nothing about anyone else; ``at``: the time
    that decides which of their own deals are still sealed (the shared Sealer's clock).

    Games carry their metadata and move log (moves in pile notation, which names no card),
    never a stored state: a game's state holds cards that were never face up in it."""
    player = db.get(Player, player_id)
    if player is None:
        raise NotFound("No such player.")
    games = db.scalars(
        select(Game).where(Game.player_id == player_id).order_by(Game.created_at, Game.id)
    ).all()
    ids = [g.id for g in games]
    race_ids = {g.race_id for g in games if g.race_id is not None}
    races = {r.id: r for r in db.scalars(select(Race).where(Race.id.in_(race_ids)))}
    own_sealed = {
        (slug, deal)
        for slug, deal in db.execute(
            select(CompetitionDeal.game, CompetitionDeal.deal).where(
                CompetitionDeal.player_id == player_id,
                CompetitionDeal.sealed_until > (at or now()),
            )
        )
    }
    logs: dict[str, list[dict[str, Any]]] = {i: [] for i in ids}
    for move in db.scalars(
        select(MoveRecord).where(MoveRecord.game_id.in_(ids)).order_by(MoveRecord.seq)
    ):
        logs[move.game_id].append(
            {
                "seq": move.seq,
                "action": move.action,
                "move": move.notation,
                "at": _iso(move.created_at),
            }
        )
    found = db.execute(select(GameHint.game_id, GameHint.hints).where(GameHint.game_id.in_(ids)))
    hints: dict[str, int] = {row[0]: row[1] for row in found}
    exported_games = []
    for g in games:
        race = races.get(g.race_id) if g.race_id is not None else None
        finished_race = race is not None and race.status == RaceStatus.FINISHED
        exported_games.append(
            {
                "id": g.id,
                "game": g.game,
                "deal": exported_deal(g, finished_race, (g.game, g.deal) in own_sealed),
                "rules": g.rules,
                "rated": g.rated,
                "status": g.status,
                "moves": g.moves,
                "undos": g.undos,
                "hints": hints.get(g.id, 0),
                "created_at": _iso(g.created_at),
                "first_move_at": _iso(g.first_move_at),
                "finished_at": _iso(g.finished_at),
                "active_ms": g.active_ms,
                "duration_ms": g.duration_ms,
                "race": g.race_id,
                "log": logs[g.id],
            }
        )
    memberships = db.execute(
        select(RoomMember.room_code, RoomMember.joined_at, Room.game, Room.created_by)
        .join(Room, Room.code == RoomMember.room_code)
        .where(RoomMember.player_id == player_id)
        .order_by(RoomMember.joined_at)
    ).all()
    mine = {g.race_id: g for g in games if g.race_id is not None}
    changes = db.scalars(
        select(RatingChange)
        .where(RatingChange.player_id == player_id)
        .order_by(RatingChange.created_at, RatingChange.race_id)
    ).all()
    return {
        "format": EXPORT_FORMAT,
        "exported_at": _iso(now()),
        "player": {
            "id": player.id,
            "name": player.name,
            "created_at": _iso(player.created_at),
            "has_password": player.password_hash is not None,
            "has_api_token": player.token_hash is not None,
            "banned": player.banned_at is not None,
            "banned_at": _iso(player.banned_at),
            # Display and play preferences as stored (the ``ph_prefs`` cookie's flags).
            "prefs": player.prefs,
        },
        "statistics": [
            {
                "game": s.game,
                "played": s.played,
                "won": s.won,
                "wilson": s.wilson,
                "best_ms": s.best_ms,
                "fewest_moves": s.fewest_moves,
                "current_streak": s.current_streak,
                "longest_streak": s.longest_streak,
                "last_played_at": _iso(s.last_played_at),
            }
            for s in db.scalars(
                select(PlayerStats)
                .where(PlayerStats.player_id == player_id)
                .order_by(PlayerStats.game)
            )
        ],
        "daily": [
            {"game": d.game, "day": d.day.isoformat(), "played": d.played, "won": d.won}
            for d in db.scalars(
                select(DailyStats)
                .where(DailyStats.player_id == player_id)
                .order_by(DailyStats.day, DailyStats.game)
            )
        ],
        "games": exported_games,
        "rooms": [
            {
                "code": code,
                "game": game,
                "joined_at": _iso(joined),
                "created_by_me": by == player_id,
            }
            for code, joined, game, by in memberships
        ],
        # The player's own result in each race: their game, not the other racers'.
        "races": [
            {
                "id": race.id,
                "room": race.room_code,
                "number": race.number,
                "game": race.game,
                "status": race.status,
                "starts_at": _iso(race.starts_at),
                "finished_at": _iso(race.finished_at),
                "my_game": mine[race.id].id,
                "my_status": mine[race.id].status,
                "my_moves": mine[race.id].moves,
            }
            for race in sorted(races.values(), key=lambda r: r.id)
        ],
        # Race ratings per game, each change with the rated race that made it.
        "ratings": {
            r.game: {
                "rating": r.mu - 3 * r.sigma,
                "mu": r.mu,
                "sigma": r.sigma,
                "races": r.races,
                "changes": [
                    {
                        "race": c.race_id,
                        "place": c.place,
                        "forfeit": c.forfeit,
                        "mu_before": c.mu_before,
                        "sigma_before": c.sigma_before,
                        "mu_after": c.mu_after,
                        "sigma_after": c.sigma_after,
                        "at": _iso(c.created_at),
                    }
                    for c in changes
                    if c.game == r.game
                ],
            }
            for r in db.scalars(select(RaceRating).where(RaceRating.player_id == player_id))
        },
        "challenges": [
            {"game": c.game, "date": c.day.isoformat(), "game_id": c.game_id, "par": c.par}
            for c in db.scalars(
                select(Challenge).where(Challenge.player_id == player_id).order_by(Challenge.day)
            )
        ],
        "events": [
            {"event": e.arena_id, "joined_at": _iso(e.joined_at)}
            for e in db.scalars(select(ArenaPlayer).where(ArenaPlayer.player_id == player_id))
        ],
    }


def _ghost_name(db: Session) -> str:
    for _ in range(20):
        name = f"{GHOST_PREFIX}{secrets.token_hex(4)}"
        if db.scalar(select(Player.id).where(Player.name_key == name)) is None:
            return name
    raise RuntimeError("no free ghost name")  # pragma: no cover - 2^32 names


def _replace_name(value: Any, old: str, new: str) -> Any:
    if isinstance(value, str):
        return new if value == old else value
    if isinstance(value, list):
        return [_replace_name(v, old, new) for v in value]
    if isinstance(value, dict):
        return {_replace_name(k, old, new): _replace_name(v, old, new) for k, v in value.items()}
    return value


def check_password(player: Player, password: str | None) -> None:
    """A player with a password must give it to delete the account (BadCredentials)."""
    if player.password_hash is None:
        return
    try:
        _hasher.verify(player.password_hash, password or "")
    except (VerifyMismatchError, InvalidHashError):
        raise BadCredentials("That password is not right: the account was not deleted.") from None


def delete(db: Session, player: Player) -> str:
    """Removes the player's personal data; returns the ghost name. Its games stay, under it."""
    if player.deleted_at is not None:
        return player.name
    old, ghost = player.name, _ghost_name(db)
    player.name = player.name_key = ghost
    player.password_hash = None
    player.token_hash = None
    player.prefs = None
    player.session_version += 1
    player.deleted_at = now()
    rooms = select(RoomMember.room_code).where(RoomMember.player_id == player.id)
    # An event's (arena's) logged standings name its players too ("@<id>").
    arenas = [
        f"@{a}"
        for a in db.scalars(select(ArenaPlayer.arena_id).where(ArenaPlayer.player_id == player.id))
    ]
    db.execute(sql_delete(QueuedRacer).where(QueuedRacer.player_id == player.id))
    logged = or_(Event.room_code.in_(rooms), Event.room_code.in_(arenas))
    for event in db.scalars(select(Event).where(logged)):
        if old in event.data:
            event.data = json.dumps(_replace_name(json.loads(event.data), old, ghost))
    db.flush()
    return ghost


class Accounts:
    """The account use cases, each in its own transaction."""

    def __init__(self, sessions: sessionmaker[Session], sealer: Sealer | None = None) -> None:
        self.sessions = sessions
        self.sealer = sealer  # its clock decides, as everywhere, when a deal's seal lifts

    def export(self, player_id: str) -> dict[str, Any]:
        with self.sessions() as db:
            return export(db, player_id, self.sealer.clock() if self.sealer else None)

    def delete_own(self, player_id: str, password: str | None) -> str:
        with self.sessions.begin() as db:
            player = db.get(Player, player_id, with_for_update=True)
            if player is None or player.deleted_at is not None:
                raise NotFound("No such player.")
            check_password(player, password)
            return delete(db, player)

    def refuse_rated_if_banned(self, player_id: str) -> None:
        """A banned player cannot start a rated game (an operator's ban)."""
        if self.is_banned(player_id):
            raise Banned("An operator has banned this player: rated games are closed to you.")

    def is_banned(self, player_id: str) -> bool:
        with self.sessions() as db:
            return db.scalar(select(Player.banned_at).where(Player.id == player_id)) is not None

    # -- the operator's tools, by name ---------------------------------------------------------

    def _named(self, db: Session, name: str) -> Player:
        player = find_by_name(db, name)
        if player is None:
            raise NotFound("There is no player called %(name)s.", name=repr(name))
        return player

    def admin_delete(self, name: str) -> str:
        with self.sessions.begin() as db:
            return delete(db, self._named(db, name))

    def rename(self, name: str, new_name: str) -> str:
        """An operator's rename; the new name follows the rules a player's would."""
        with self.sessions.begin() as db:
            return rename(db, self._named(db, name), new_name).name

    def ban(self, name: str, banned: bool = True) -> Player:
        with self.sessions.begin() as db:
            player = self._named(db, name)
            player.banned_at = (player.banned_at or now()) if banned else None
            return player

    def revoke(self, name: str) -> Player:
        """Signs the player out everywhere: browser sessions and the API token."""
        with self.sessions.begin() as db:
            player = self._named(db, name)
            db.execute(
                update(Player)
                .where(Player.id == player.id)
                .values(session_version=Player.session_version + 1, token_hash=None)
            )
            return player
