"""An event's live standings reach the clients of two app instances (two uvicorn processes on
one PostgreSQL): a win played through instance A is one standings row, streamed by both."""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import create_engine, select

from app.cli import main
from app.config import Settings
from app.db.models import DealVerdict, Game
from app.engine import DEVELOPMENT_KEY
from tests.databases import fresh_postgres_database, migrate
from tests.web.live_support import Api, SSEReader, free_port, uvicorn_server_on

# LIVE_PORT: two ports of one's own on a shared machine (it and the next), else any free.
BASE_PORT = int(os.environ.get("LIVE_PORT", "0"))


@pytest.fixture(scope="module")
def instances(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str, str]]:
    url = fresh_postgres_database("ph_event_instances")
    migrate(url)
    where = tmp_path_factory.mktemp("event-instances")
    ports = (BASE_PORT, BASE_PORT + 1) if BASE_PORT else (free_port(), free_port())
    fast = {"RATE_LIMIT_MOVES": "100000/minute"}  # a solver's line, played at once
    with (
        uvicorn_server_on(ports[0], url, Path(where / "a.log"), **fast) as a,
        uvicorn_server_on(ports[1], url, Path(where / "b.log"), **fast) as b,
    ):
        yield url, a, b


def _solution(url: str, game_id: str) -> list[str]:
    engine = create_engine(url)
    try:
        with engine.connect() as db:
            game, deal = db.execute(select(Game.game, Game.deal).where(Game.id == game_id)).one()
            text = db.scalar(
                select(DealVerdict.solution).where(
                    DealVerdict.game == game, DealVerdict.deal == deal
                )
            )
    finally:
        engine.dispose()
    assert text
    return str(text).split()


@pytest.mark.slow
def test_live_standings_reach_both_instances(
    instances: tuple[str, str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    url, a, b = instances
    settings = Settings(database_url=url, deal_key=DEVELOPMENT_KEY.decode())
    assert main(["certify", "--game", "corners", "--count", "2", "--nodes", "50000"], settings) == 0
    starts = (datetime.now(UTC) - timedelta(minutes=1)).isoformat()
    create = ["event", "create", "--game", "corners", "--starts", starts, "--minutes", "30"]
    assert main(create, settings) == 0
    event = int(capsys.readouterr().out.split("event ")[-1].split(":")[0])
    player = Api(a)
    player.ok("POST", f"/api/events/{event}/join")
    on_a = SSEReader(f"{a}/events/{event}/stream")
    on_b = SSEReader(f"{b}/events/{event}/stream")
    try:
        game = player.ok("POST", f"/api/events/{event}/next", 201)
        version = game["version"]
        for notation in _solution(url, game["id"]):
            pair, _, count = notation.partition("/")
            source, target = pair.split("-")
            body = {"from": source, "to": target, "count": int(count or 1), "version": version}
            version = player.ok("POST", f"/api/games/{game['id']}/moves", json=body)["version"]
        for stream in (on_a, on_b):
            (got,) = stream.take(1)
            assert got.event == "standings"
            top = got.data["standings"][0]
            assert (top["player"], top["points"], top["wins"]) == (player.name, 2, 1)
            assert stream.quiet(0.5) == []  # one row per change
    finally:
        on_a.close()
        on_b.close()
        player.close()
