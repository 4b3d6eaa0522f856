"""The move log of a game: which moves are still in force (each undo takes back the latest),
the state after any number of them (from the nearest stored snapshot), and, for finished games,
which never change, the log and replay states kept in memory."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any, NamedTuple

from cachetools import LRUCache
from sqlalchemy import Connection
from sqlalchemy.orm import Session

from app.db.game_rows import MOVE_LOG, SNAPSHOT, GameRow
from app.engine import Move, State, get_ruleset, loads

# Every SNAPSHOT_EVERY-th move still in force stores the state in its move-log row: a replay
# step or an undo replays at most SNAPSHOT_EVERY - 1 moves from the nearest one.
SNAPSHOT_EVERY = 64
CACHED_STATES = 512  # replay states of finished games kept per process
CACHED_LOGS = 32  # move logs of finished games kept per process

Db = Session | Connection


class Entry(NamedTuple):
    """A move still in force, and the move-log row that made it."""

    notation: str
    revealed: bool
    seq: int


def active_entries(records: Sequence[Any]) -> list[Entry]:
    stack: list[Entry] = []
    for seq, action, notation, revealed in records:  # MOVE_LOG's columns
        if action == "move" and notation:
            stack.append(Entry(notation, revealed, seq))
        elif action == "undo" and stack:
            stack.pop()
    return stack


def active_moves(records: Sequence[Any]) -> list[tuple[str, bool]]:
    stack: list[tuple[str, bool]] = []
    for r in records:
        if r.action == "move" and r.notation:
            stack.append((r.notation, r.revealed))
        elif r.action == "undo" and stack:
            stack.pop()
    return stack


class MoveLog:
    """Reads of the move log for one deal key (a replay starts from the deal)."""

    def __init__(self, deal_key: bytes) -> None:
        self.deal_key = deal_key
        # A finished game never changes: its log and replay states are kept, least recently
        # used dropped first. Request threads share them, hence the lock.
        self._lock = threading.Lock()
        self._finished_logs: LRUCache[str, list[Entry]] = LRUCache(CACHED_LOGS)
        self._replay_states: LRUCache[tuple[str, int], State] = LRUCache(CACHED_STATES)

    @staticmethod
    def records(db: Db, game_id: str) -> Sequence[Any]:
        return db.execute(MOVE_LOG, {"game_id": game_id}).all()

    def active_moves(self, db: Db, game_id: str) -> list[tuple[str, bool]]:
        """The moves still in force: each undo takes back the latest one."""
        return active_moves(self.records(db, game_id))

    def active_entries(self, db: Db, game_id: str) -> list[Entry]:
        return active_entries(self.records(db, game_id))

    def notations(self, db: Db, game_id: str) -> list[str]:
        return [n for n, _ in self.active_moves(db, game_id)]

    def state_at(self, db: Db, record: GameRow, active: Sequence[Entry], n: int) -> State:
        """The state after the first ``n`` moves in force, from the nearest snapshot.

        The move that made the ``d``-th move in force (d a multiple of SNAPSHOT_EVERY) stored
        the state after it; that row is the one that pushed ``active[d - 1]``, since a later
        undo below ``d`` would have taken it out and a later move to ``d`` replaced it. Games
        older than the snapshots replay from the deal.
        """
        rules = get_ruleset(record.game)
        d = n - n % SNAPSHOT_EVERY
        start: State | None = None
        if d > 0:
            stored = db.execute(SNAPSHOT, {"game_id": record.id, "seq": active[d - 1].seq})
            text = stored.scalar()
            if text is not None:
                start = loads(text)
        if start is None:
            start, d = rules.deal(record.deal, self.deal_key), 0
        return rules.replay(start, [Move.parse(e.notation) for e in active[d:n]])

    def finished_entries(self, db: Db, game_id: str) -> list[Entry]:
        """A finished game's moves in force: read once, kept while the game is looked at."""
        with self._lock:
            cached = self._finished_logs.get(game_id)
        if cached is not None:
            return cached
        entries = self.active_entries(db, game_id)
        with self._lock:
            self._finished_logs[game_id] = entries
        return entries

    def finished_state_at(self, db: Db, record: GameRow, active: Sequence[Entry], n: int) -> State:
        key = (record.id, n)
        with self._lock:
            cached = self._replay_states.get(key)
        if cached is not None:
            return cached
        state = self.state_at(db, record, active, n)
        with self._lock:
            self._replay_states[key] = state
        return state
