"""The move log (app/services/move_log.py): the moves still in force after undos, the state
after any number of them from the nearest stored snapshot, and finished games' logs and replay
states kept in memory. On a stand-in for the database that answers the module's two reads."""

from __future__ import annotations

import random
from datetime import UTC, datetime
from typing import Any, NamedTuple, cast

from app.db.game_rows import MOVE_LOG, SNAPSHOT, GameRow
from app.engine import DEVELOPMENT_KEY, RULES_VERSION, State, dumps, get_ruleset
from app.services.move_log import (
    CACHED_LOGS,
    SNAPSHOT_EVERY,
    Db,
    Entry,
    MoveLog,
    active_entries,
    active_moves,
)

SLUG, DEAL = "quadrangle", 11
STAMP = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)


class Record(NamedTuple):
    """A row of MOVE_LOG: (seq, action, notation, revealed)."""

    seq: int
    action: str
    notation: str | None
    revealed: bool


class Result:
    def __init__(self, rows: list[Any]) -> None:
        self.rows = rows

    def all(self) -> list[Any]:
        return self.rows

    def scalar(self) -> Any:
        return self.rows[0] if self.rows else None


class FakeDb:
    """Answers MOVE_LOG from ``records`` and SNAPSHOT from ``snapshots`` (by seq); counts reads."""

    def __init__(self, records: list[Record], snapshots: dict[int, str] | None = None) -> None:
        self.records = records
        self.snapshots = snapshots or {}
        self.reads: list[tuple[str, dict[str, Any]]] = []

    def execute(self, statement: Any, params: dict[str, Any]) -> Result:
        if statement is MOVE_LOG:
            self.reads.append(("log", params))
            return Result(list(self.records))
        assert statement is SNAPSHOT
        self.reads.append(("snapshot", params))
        found = self.snapshots.get(params["seq"])
        return Result([] if found is None else [found])


def db(fake: FakeDb) -> Db:
    return cast(Db, fake)


def row(game_id: str = "g1") -> GameRow:
    rules = get_ruleset(SLUG)
    state = rules.deal(DEAL, DEVELOPMENT_KEY)
    return GameRow.dealt(
        game_id, "p1", SLUG, DEAL, dumps(state), "playing", STAMP, rules=RULES_VERSION, rated=False
    )


class Played(NamedTuple):
    records: list[Record]
    states: list[State]  # the state after each number of moves in force (states[0]: the deal)
    snapshots: dict[int, str]  # as the move path stores them: every SNAPSHOT_EVERY-th in force


def play(moves_in_force: int, seed: int) -> Played:
    """A Quadrangle game with undos here and there, logged as the move path logs it."""
    rules = get_ruleset(SLUG)
    rng = random.Random(seed)
    states = [rules.deal(DEAL, DEVELOPMENT_KEY)]
    records: list[Record] = []
    snapshots: dict[int, str] = {}
    revealed: list[bool] = []
    while len(states) - 1 < moves_in_force:
        seq = len(records) + 1
        if len(states) > 1 and not revealed[-1] and rng.random() < 0.2:
            records.append(Record(seq, "undo", None, False))
            states.pop()
            revealed.pop()
            continue
        legal = rules.legal_moves(states[-1])
        assert legal, f"seed {seed}: the game ended after {len(states) - 1} moves"
        # Shuffling cards between tableau piles goes on for ever.
        choices = [m for m in legal if not m.target.startswith("f") and m.source != "stock"]
        choices = choices or legal
        step = rules.step(states[-1], rng.choice(choices))
        records.append(Record(seq, "move", str(step.move), step.revealed))
        states.append(step.after)
        revealed.append(step.revealed)
        if (len(states) - 1) % SNAPSHOT_EVERY == 0:
            snapshots[seq] = dumps(step.after)
    return Played(records, states, snapshots)


# -- the moves in force --------------------------------------------------------------------------


def test_each_undo_takes_back_the_latest_move_in_force() -> None:
    records = [
        Record(1, "move", "t1-t2", False),
        Record(2, "move", "t3-t4", True),
        Record(3, "move", "t5-t6", False),
        Record(4, "undo", None, False),
        Record(5, "move", "t7-t8", False),
    ]
    assert active_entries(records) == [
        Entry("t1-t2", False, 1),
        Entry("t3-t4", True, 2),
        Entry("t7-t8", False, 5),
    ]
    assert active_moves(records) == [("t1-t2", False), ("t3-t4", True), ("t7-t8", False)]


def test_resignations_moves_without_notation_and_undos_of_nothing_change_nothing() -> None:
    records = [
        Record(1, "undo", None, False),
        Record(2, "move", None, False),
        Record(3, "move", "t1-t2", False),
        Record(4, "resign", None, False),
    ]
    assert active_entries(records) == [Entry("t1-t2", False, 3)]
    assert active_moves(records) == [("t1-t2", False)]
    assert active_entries([]) == [] and active_moves([]) == []


def test_the_log_reads_its_game_and_gives_notations() -> None:
    fake = FakeDb([Record(1, "move", "t1-t2", False), Record(2, "move", "t3-t4", False)])
    log = MoveLog(DEVELOPMENT_KEY)
    assert log.notations(db(fake), "g7") == ["t1-t2", "t3-t4"]
    assert log.active_moves(db(fake), "g7") == [("t1-t2", False), ("t3-t4", False)]
    assert fake.reads == [("log", {"game_id": "g7"})] * 2


# -- states from snapshots -----------------------------------------------------------------------


def test_a_state_within_the_first_snapshot_replays_from_the_deal(replayed: list[int]) -> None:
    game = play(SNAPSHOT_EVERY - 1, seed=3)
    fake = FakeDb(game.records, game.snapshots)
    active = active_entries(game.records)
    log = MoveLog(DEVELOPMENT_KEY)
    for n in (0, 1, SNAPSHOT_EVERY - 1):
        assert log.state_at(db(fake), row(), active, n) == game.states[n]
    assert replayed == [0, 1, SNAPSHOT_EVERY - 1]
    assert [read for read, _ in fake.reads] == []  # no snapshot to look for


def test_a_later_state_starts_from_the_nearest_snapshot(replayed: list[int]) -> None:
    game = play(2 * SNAPSHOT_EVERY + 5, seed=4)
    assert len(game.snapshots) >= 2
    fake = FakeDb(game.records, game.snapshots)
    active = active_entries(game.records)
    assert len(active) == 2 * SNAPSHOT_EVERY + 5
    log = MoveLog(DEVELOPMENT_KEY)
    for n in (SNAPSHOT_EVERY, SNAPSHOT_EVERY + 1, 2 * SNAPSHOT_EVERY - 1, 2 * SNAPSHOT_EVERY + 5):
        replayed.clear()
        fake.reads.clear()
        assert log.state_at(db(fake), row(), active, n) == game.states[n], n
        assert replayed == [n % SNAPSHOT_EVERY]
        # The snapshot asked for is the one of the row that made the d-th move in force (its
        # seq, not d: undos make the two differ).
        d = n - n % SNAPSHOT_EVERY
        assert fake.reads == [("snapshot", {"game_id": "g1", "seq": active[d - 1].seq})]
    assert active[SNAPSHOT_EVERY - 1].seq != SNAPSHOT_EVERY  # this game had undos before it


def test_a_game_older_than_the_snapshots_replays_from_the_deal(replayed: list[int]) -> None:
    game = play(SNAPSHOT_EVERY + 3, seed=5)
    fake = FakeDb(game.records, {})  # no snapshot was stored
    active = active_entries(game.records)
    state = MoveLog(DEVELOPMENT_KEY).state_at(db(fake), row(), active, SNAPSHOT_EVERY + 3)
    assert state == game.states[-1]
    assert replayed == [SNAPSHOT_EVERY + 3]


def test_the_deal_is_dealt_with_the_logs_own_key() -> None:
    other = MoveLog(b"another deal key, thirty-two byte")
    state = other.state_at(db(FakeDb([])), row(), [], 0)
    assert state == get_ruleset(SLUG).deal(DEAL, b"another deal key, thirty-two byte")
    assert state != get_ruleset(SLUG).deal(DEAL, DEVELOPMENT_KEY)


# -- finished games, kept --------------------------------------------------------------------------


def test_a_finished_games_log_is_read_once() -> None:
    fake = FakeDb([Record(1, "move", "t1-t2", False)])
    log = MoveLog(DEVELOPMENT_KEY)
    first = log.finished_entries(db(fake), "g1")
    fake.records.append(Record(2, "move", "t3-t4", False))  # (a finished game never changes)
    assert log.finished_entries(db(fake), "g1") == first == [Entry("t1-t2", False, 1)]
    assert len(fake.reads) == 1


def test_kept_logs_are_bounded_least_recently_used_first_out() -> None:
    fake = FakeDb([Record(1, "move", "t1-t2", False)])
    log = MoveLog(DEVELOPMENT_KEY)
    for i in range(CACHED_LOGS):
        log.finished_entries(db(fake), f"g{i}")
    log.finished_entries(db(fake), "g0")  # used again: now the most recent
    log.finished_entries(db(fake), "new")  # pushes out the least recently used, g1
    fake.reads.clear()
    log.finished_entries(db(fake), "g0")
    assert fake.reads == []
    log.finished_entries(db(fake), "g1")
    assert fake.reads == [("log", {"game_id": "g1"})]


def test_a_finished_games_replay_states_are_kept(replayed: list[int]) -> None:
    game = play(10, seed=6)
    fake = FakeDb(game.records)
    active = active_entries(game.records)
    log = MoveLog(DEVELOPMENT_KEY)
    assert log.finished_state_at(db(fake), row(), active, 7) == game.states[7]
    assert log.finished_state_at(db(fake), row(), active, 7) == game.states[7]
    assert replayed == [7]
    # Another step, or the same step of another game, is its own.
    assert log.finished_state_at(db(fake), row(), active, 8) == game.states[8]
    log.finished_state_at(db(fake), row("g2"), active, 7)
    assert replayed == [7, 8, 7]
