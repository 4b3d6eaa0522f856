"""The API against its own OpenAPI schema: a bounded Schemathesis run (issue 12).

A live uvicorn (tests/web/live_support.py) on a fresh database of each backend, and the
Schemathesis CLI against its ``/openapi.json``: every check (``--checks all``), every phase
(examples, coverage, fuzzing and the stateful phase, whose links Schemathesis infers from the
answers' schemas: a created game's id feeds its moves, undo, resign, hint and replay), a fixed
seed, and a time cap well under two minutes. Zero failures is the bar: an undocumented status or
content type, a schema-valid request refused, a 405 without ``Allow`` or an answer that does not
match its model all fail it. What is widened, and why, is in tests/web/schemathesis.toml and
tests/web/schemathesis_hooks.py.

The room's event stream is left out: it is documented, but it never ends, and Schemathesis
waits for a whole answer.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from app.config import PROJECT_DIR
from app.engine import GAMES
from tests.databases import database_url, migrate
from tests.settings import TEST_LIMITS
from tests.web.live_support import uvicorn_server

HERE = Path(__file__).resolve().parent
SEED = 20261124
# Per operation and phase in each round; fuzzing and stateful rounds repeat until the budget is
# spent, and Schemathesis holds a share of the budget back for every phase, the stateful one too.
MAX_EXAMPLES = 10
MAX_SECONDS = 60  # the whole run (the bound is two minutes)


def _token(base: str) -> str:
    request = urllib.request.Request(
        f"{base}/api/players",
        data=b"{}",
        headers={"content-type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=10) as answer:
        return str(json.loads(answer.read())["token"])


@pytest.mark.slow
# One backend: the schema is the web layer's, the same over both databases, and a minute's
# bounded run each was two minutes of the suite; PostgreSQL is what production runs.
@pytest.mark.parametrize("backend", ["postgres"])
def test_the_api_conforms_to_its_schema(backend: str, tmp_path: Path) -> None:
    url = database_url(
        backend, tmp_path, f"ph_schema_{os.environ.get('PYTEST_XDIST_WORKER', 'main')}"
    )
    migrate(url)
    limits = {key.upper(): str(value) for key, value in TEST_LIMITS.items()}
    with uvicorn_server(url, tmp_path / "server.log", EXPENSIVE_SHARE="1.0", **limits) as base:
        token = _token(base)
        command = [
            str(Path(sys.executable).with_name("st")),
            "--config-file",
            str(HERE / "schemathesis.toml"),
            "--no-color",
            "run",
            f"{base}/openapi.json",
            "--checks",
            "all",
            "--seed",
            str(SEED),
            "--max-examples",
            str(MAX_EXAMPLES),
            "--max-time",
            str(MAX_SECONDS),
            "--workers",
            "1",
            "--header",
            f"Authorization: Bearer {token}",
            "--exclude-path",
            "/rooms/{code}/events",
            # Deleting the account would end the run's player half-way
            # (tests/web/api/test_accounts.py)
            "--exclude-path",
            "/api/me",
        ]
        environment = {
            **os.environ,
            "SCHEMATHESIS_HOOKS": "tests.web.schemathesis_hooks",
            "PYTHONPATH": str(PROJECT_DIR),
        }
        run = subprocess.run(
            command,
            cwd=tmp_path,  # its report directory, if any, goes there
            env=environment,
            capture_output=True,
            text=True,
            timeout=MAX_SECONDS + 60,
            check=False,
        )
    report = run.stdout + run.stderr
    assert run.returncode == 0, report[-12000:]
    # The stateful phase ran (links were found), it was not skipped for want of them.
    assert "✅ Stateful" in report, report[-4000:]


# -- the schema itself (no server: fast) ----------------------------------------------------------


def test_the_schema_documents_the_api_and_nothing_else(app: FastAPI) -> None:
    paths = app.openapi()["paths"]
    assert all(p.startswith("/api/") or p == "/rooms/{code}/events" for p in paths), paths
    assert "/api/games/{game_id}/moves" in paths and "/games/{game_id}/moves" not in paths
    for path, operations in paths.items():
        for method, operation in operations.items():
            responses = operation["responses"]
            assert any(s.startswith("2") for s in responses), (method, path)
            if path.startswith("/api/"):
                for status in ("413", "422", "431", "503"):  # checked before any route
                    error = responses[status]["content"]["application/json"]["schema"]
                    assert error == {"$ref": "#/components/schemas/ErrorAnswer"}, (path, status)


def test_answers_are_typed_and_games_are_an_enum(app: FastAPI) -> None:
    schema = app.openapi()
    schemas = schema["components"]["schemas"]
    moves = schema["paths"]["/api/games/{game_id}/moves"]["post"]["responses"]
    assert moves["200"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/GameState"
    }
    assert {"401", "403", "404", "409", "422", "429"} <= set(moves)
    state = schemas["GameState"]
    assert state["additionalProperties"] is False
    assert {"rated", "can_undo", "deal_winnable", "legal_moves", "piles"} <= set(
        state["properties"]
    )
    assert state["properties"]["game"]["enum"] == list(GAMES)
    assert schemas["NewGame"]["properties"]["game"]["enum"] == list(GAMES)
    board = schema["paths"]["/api/leaderboard"]["get"]["parameters"]
    game = next(p for p in board if p["name"] == "game")
    assert set(GAMES) | {"all"} <= set(game["schema"]["anyOf"][0]["enum"])


def test_405_says_what_is_allowed(client: TestClient) -> None:
    refused = client.delete("/api/games/anything")
    assert refused.status_code == 405
    assert refused.headers["allow"] == "GET, HEAD"
    assert refused.json()["error"]["code"] == "method_not_allowed"
    assert client.get("/api/games/anything/moves").headers["allow"] == "POST"
