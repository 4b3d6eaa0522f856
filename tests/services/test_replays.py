"""The move log is the audit trail: replaying it from the deal reproduces every stored state."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from app.cli import main
from app.config import Settings
from app.db.models import Game
from app.engine import dumps, get_ruleset
from app.services.replays import check_replay, game_ids
from tests.settings import suite_settings
from tests.web.support import move, start

# A few games of every kind, with undos and a resignation, so the database is never empty.
SESSIONS = [
    ("quadrangle", ["t5-t9", "t8-t10", "undo", "stock-waste", "t9-t10"]),
    ("quadruple-interchange", ["t5-t9", "stock-waste"]),
    ("corners", ["r5-f1", "stock-waste", "resign"]),
    ("castles-end", ["t4-f1", "undo", "t2-f3"]),
    ("patriarchs", ["stock-waste", "r3-f8"]),
]


def _play(api: TestClient) -> list[str]:
    ids = []
    for slug, actions in SESSIONS:
        game = start(api, slug, 1)
        version = 0
        for action in actions:
            if action in ("undo", "resign"):
                response = api.post(f"/api/games/{game['id']}/{action}")
            else:
                response = move(api, game["id"], action, version)
            assert response.status_code == 200, (slug, action, response.text)
            version = response.json()["version"]
        ids.append(game["id"])
    return ids


def test_every_game_replays_to_its_stored_state(api: TestClient, app: FastAPI) -> None:
    played = _play(api)
    everything = game_ids(app.state.services.games)
    assert set(played) <= set(everything)
    for game_id in everything:
        stored, replayed = app.state.services.games.replay(game_id)
        assert stored == replayed, game_id
        assert check_replay(app.state.services.games, game_id).ok


def test_check_replays_command(
    api: TestClient,
    app: FastAPI,
    settings: Settings,
    db_url: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    played = _play(api)
    monkeypatch.setenv("DATABASE_URL", db_url)
    monkeypatch.setenv("APP_ENV", "test")
    assert main(["check-replays"]) == 0  # settings from the environment, like an operator
    summary = capsys.readouterr().out
    total = len(game_ids(app.state.services.games))
    assert f"Checked {total} games: {total} ok, 0 mismatched." in summary
    # "=": a random id may start with "-", which argparse would take for an option.
    assert main(["check-replays", f"--game-id={played[0]}"], settings) == 0
    assert "Checked 1 game: 1 ok, 0 mismatched." in capsys.readouterr().out
    assert main(["check-replays", "--game-id", "no-such-game"], settings) == 1
    assert "MISMATCH no-such-game" in capsys.readouterr().out

    # A stored state that the log does not explain is reported, and the command fails.
    victim = played[0]
    with app.state.services.sessions.begin() as db:
        record = db.get(Game, victim)
        assert record is not None
        original = record.state
        record.state = dumps(get_ruleset(record.game).deal(record.deal + 1))
    try:
        assert main(["check-replays", f"--game-id={victim}"], settings) == 1
        out = capsys.readouterr().out
        assert f"MISMATCH {victim}:" in out
        assert "Checked 1 game: 0 ok, 1 mismatched." in out
    finally:
        with app.state.services.sessions.begin() as db:
            record = db.get(Game, victim)
            assert record is not None
            record.state = original
    assert main(["check-replays", f"--game-id={victim}"], settings) == 0


def test_check_replays_reports_an_unreadable_database(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = suite_settings(f"sqlite:///{tmp_path}/empty.db")
    assert main(["check-replays"], empty) == 2
    assert "Cannot read the database" in capsys.readouterr().err
