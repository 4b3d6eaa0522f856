"""The operator commands (app/cli.py) through their entry function, on a migrated SQLite
database: what each prints and its exit code. Commands that spend solver time or play games
are tested with their features (tests/services/test_replays.py, tests/web/test_solver_routes.py,
tests/web/test_events.py, tests/web/test_accounts.py)."""

from __future__ import annotations

import json
import logging
import secrets
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import Engine, create_engine, func, select, text

from app.bootstrap import build
from app.cli import EX_CONFIG, main, say
from app.config import Settings
from app.db.models import Arena, Player
from app.db.session import make_engine
from tests.migrated import migrated_sqlite
from tests.settings import suite_settings


@pytest.fixture(scope="module")
def settings(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    return suite_settings(migrated_sqlite(tmp_path_factory, "cli"), json_logs=False)


@pytest.fixture()
def engine(settings: Settings) -> Iterator[Engine]:
    engine = make_engine(settings.database_url)
    yield engine
    engine.dispose()


def _player(settings: Settings, name: str) -> str:
    services = build(settings)
    try:
        player, _token = services.players.create_api_player(name)
        return player.id
    finally:
        services.close()


def test_an_operator_renames_bans_and_unbans_a_player(
    settings: Settings, engine: Engine, capsys: pytest.CaptureFixture[str]
) -> None:
    player_id = _player(settings, "Grace")
    assert main(["player", "rename", "Grace", "Hopper"], settings) == 0
    assert main(["player", "ban", "hopper"], settings) == 0  # names are found whatever the case
    with engine.connect() as db:
        name, banned = db.execute(
            select(Player.name, Player.banned_at).where(Player.id == player_id)
        ).one()
    assert name == "Hopper" and banned is not None
    assert main(["player", "ban", "Hopper", "--undo"], settings) == 0
    with engine.connect() as db:
        assert db.scalar(select(Player.banned_at).where(Player.id == player_id)) is None
    out = capsys.readouterr().out.splitlines()
    assert out == ["Grace is now Hopper.", "Hopper is banned.", "Hopper is no longer banned."]


def test_revoking_signs_out_every_session_and_drops_the_token(
    settings: Settings, engine: Engine, capsys: pytest.CaptureFixture[str]
) -> None:
    player_id = _player(settings, "Linus")
    assert main(["player", "revoke", "Linus"], settings) == 0
    with engine.connect() as db:
        version, token = db.execute(
            select(Player.session_version, Player.token_hash).where(Player.id == player_id)
        ).one()
    assert version == 1 and token is None
    assert "Linus: every session and the API token are revoked." in capsys.readouterr().out


def test_deleting_a_player_leaves_a_ghost_name(
    settings: Settings, engine: Engine, capsys: pytest.CaptureFixture[str]
) -> None:
    player_id = _player(settings, "Ghosted")
    assert main(["player", "delete", "Ghosted"], settings) == 0
    with engine.connect() as db:
        name = db.scalar(select(Player.name).where(Player.id == player_id))
    assert name is not None and name.startswith("deleted-")
    assert capsys.readouterr().out == f"Ghosted is deleted; their games stay as {name}.\n"


def test_an_unknown_player_is_an_error_on_stderr(
    settings: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["player", "ban", "Nobody"], settings) == 1
    said = capsys.readouterr()
    assert said.out == "" and said.err == "There is no player called 'Nobody'.\n"


def test_events_are_scheduled_one_or_a_series(
    settings: Settings, engine: Engine, capsys: pytest.CaptureFixture[str]
) -> None:
    with engine.connect() as db:
        before = db.scalar(select(func.count()).select_from(Arena))
    start = ["event", "create", "--game", "corners", "--starts", "2031-12-01T18:00Z"]
    assert main([*start, "--minutes", "60"], settings) == 0
    (line,) = capsys.readouterr().out.splitlines()
    assert line.endswith(": Corners, 2031-12-01T18:00:00+00:00 to 2031-12-01T19:00:00+00:00")
    assert main([*start[:-1], "2031-12-02T18:00+00:00", "--minutes", "30", "--every", "1440"],
                settings) == 0  # fmt: skip
    assert len(capsys.readouterr().out.splitlines()) == 7  # a week by default
    with engine.connect() as db:
        starts = db.scalars(select(Arena.starts_at).order_by(Arena.id)).all()[before:]
    assert len(starts) == 8 and starts[1] == datetime(2031, 12, 2, 18, 0, tzinfo=UTC)
    assert starts[-1] == datetime(2031, 12, 8, 18, 0, tzinfo=UTC)


def test_an_event_needs_a_date_and_time(
    settings: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["event", "create", "--game", "corners", "--starts", "tomorrow", "--minutes", "60"]
    assert main(args, settings) == 2
    assert "--starts is a date and time" in capsys.readouterr().err


def test_arguments_argparse_refuses(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as refused:
        main(["certify", "--game", "chess", "--count", "1"], Settings(_env_file=None))  # type: ignore[call-arg]
    assert refused.value.code == 2 and "invalid choice: 'chess'" in capsys.readouterr().err


def test_certify_refuses_numbers_that_are_not_positive(
    settings: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    for wrong in (["--count", "0"], ["--count", "1", "--seconds", "0"],
                  ["--count", "1", "--max-deals", "0"]):  # fmt: skip
        assert main(["certify", "--game", "corners", *wrong], settings) == 2
    assert capsys.readouterr().err.count("must be positive") == 3


def test_checks_of_an_empty_database_find_nothing_to_differ(
    tmp_path_factory: pytest.TempPathFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = suite_settings(migrated_sqlite(tmp_path_factory, "cli_empty"), json_logs=False)
    assert main(["check-replays"], empty) == 0
    assert main(["recount"], empty) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "Checked 0 games: 0 ok, 0 mismatched."
    assert out[1].startswith("Recounted 0 games:") and out[1].endswith("; 0 differences.")


def test_a_database_that_cannot_be_read_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bare = suite_settings(f"sqlite:///{tmp_path / 'bare.db'}", json_logs=False)
    assert main(["check-replays"], bare) == 2
    assert "Cannot read the database" in capsys.readouterr().err
    assert main(["player", "ban", "Anyone"], bare) == 2
    assert "Cannot use the database" in capsys.readouterr().err


def test_migrate_builds_a_new_database_then_records_its_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"sqlite:///{tmp_path / 'new.db'}"
    fresh = suite_settings(url, json_logs=False)
    assert main(["migrate"], fresh) == 0
    assert capsys.readouterr().err.endswith("patience-hall: ready (APP_ENV=test)\n")
    engine = create_engine(url)
    try:
        with engine.connect() as db:
            assert db.scalar(text("SELECT count(*) FROM alembic_version")) == 1
            assert db.scalar(text("SELECT count(*) FROM app_meta")) == 1  # the key's print
    finally:
        engine.dispose()
    assert main(["preflight"], fresh) == 0  # nothing more to do


def test_preflight_refuses_production_with_ex_config(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    production = Settings(  # type: ignore[call-arg]
        _env_file=None, app_env="production", database_url=f"sqlite:///{tmp_path / 'p.db'}",
        deal_key=secrets.token_urlsafe(48), session_secret=secrets.token_urlsafe(48),
        json_logs=True,
    )  # fmt: skip
    assert main(["migrate"], production) == EX_CONFIG
    (line,) = capsys.readouterr().err.splitlines()
    said = json.loads(line)
    assert said["level"] == "error" and "production on SQLite" in said["msg"]
    assert not (tmp_path / "p.db").exists()  # refused before migrating anything


def test_say_writes_one_plain_or_json_line(capsys: pytest.CaptureFixture[str]) -> None:
    say("ready", json_lines=False)
    assert capsys.readouterr().err == "patience-hall: ready\n"
    say("cannot start", logging.ERROR, json_lines=True)
    said = json.loads(capsys.readouterr().err)
    assert said["msg"] == "cannot start" and said["level"] == "error"
    assert said["logger"] == "patience_hall.cli"
