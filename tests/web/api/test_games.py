"""The JSON API, route by route and status code by status code, as contract.md promises.

Every rejected move is followed by reading the game again: same version, same state, same
move log. Every test runs on SQLite and on PostgreSQL.
"""

from __future__ import annotations

import json
import random
import re
import uuid
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from app.engine import GAMES, MAX_DEAL
from app.web.api.schemas.base import PILE_ID
from tests.web.support import (
    GAME_SLUGS,
    error_code,
    log_rows,
    move,
    new_player,
    snapshot,
    start,
    start_as,
    stored_deal,
)

NAME_RE = re.compile(r"^[A-Za-z0-9_-]{3,24}$")


def unique_name(prefix: str = "p") -> str:
    return f"{prefix}{uuid.uuid4().hex[:12]}"


def other_player(api: TestClient) -> dict[str, str]:
    """Headers of a second API player."""
    created = api.post("/api/players", json={}, headers={"Authorization": ""})
    assert created.status_code == 201, created.text
    return {"Authorization": f"Bearer {created.json()['token']}"}


# -- POST /api/players ---------------------------------------------------------------------


def test_new_player_gets_id_random_name_and_token(client: TestClient) -> None:
    for body in ({}, {"name": None}):
        created = client.post("/api/players", json=body)
        assert created.status_code == 201, created.text
        data = created.json()
        assert set(data) == {"id", "name", "token"}
        assert NAME_RE.match(data["name"]), data
        assert len(data["token"]) >= 32
    assert client.post("/api/players").status_code == 201  # no body at all


def test_new_player_with_a_chosen_name(client: TestClient) -> None:
    name = unique_name("Ann_-")
    created = client.post("/api/players", json={"name": name})
    assert created.status_code == 201, created.text
    assert created.json()["name"] == name
    # The token works, and games show the chosen name.
    headers = {"Authorization": f"Bearer {created.json()['token']}"}
    game = client.post("/api/games", json={"game": "corners", "deal": 3}, headers=headers)
    assert game.status_code == 201
    assert game.json()["player"] == {"id": created.json()["id"], "name": name}


@pytest.mark.parametrize("name", ["x_3", "Y-" + "9" * 22])
def test_name_length_limits_are_inclusive(client: TestClient, name: str) -> None:
    created = client.post("/api/players", json={"name": name})
    assert created.status_code == 201, created.text
    assert created.json()["name"] == name


@pytest.mark.parametrize(
    "name",
    ["ab", "a" * 25, "has space", "émile", "semi;colon", "", "dot.ted", "<b>x</b>", "ab\x00cd"],
)
def test_name_rules(client: TestClient, name: str) -> None:
    assert error_code(client.post("/api/players", json={"name": name}), 422) == "invalid_request"


def test_taken_name_is_refused_whatever_its_case(client: TestClient) -> None:
    name = unique_name("Taken")
    assert client.post("/api/players", json={"name": name}).status_code == 201
    for variant in (name, name.upper(), name.lower()):
        response = client.post("/api/players", json={"name": variant})
        assert error_code(response, 409) == "name_taken"


@pytest.mark.parametrize(
    "body",
    [{"name": 5}, {"name": True}, {"name": ["abc"]}, {"name": {"x": 1}}, [], "abc", 3],
)
def test_new_player_bad_types(client: TestClient, body: Any) -> None:
    assert error_code(client.post("/api/players", json=body), 422) == "invalid_request"


def test_new_player_non_json_body(client: TestClient) -> None:
    response = client.post(
        "/api/players", content=b"name=abc", headers={"content-type": "application/json"}
    )
    assert error_code(response, 422) == "invalid_request"


# -- POST /api/games -------------------------------------------------------------------------


@pytest.mark.parametrize("slug", GAME_SLUGS)
def test_start_a_given_deal(api: TestClient, slug: str) -> None:
    game = start(api, slug, 12345)
    rules = GAMES[slug]
    assert game["game"] == slug and game["deal"] == 12345 and game["rules"] == "v1"
    assert game["player"] == {"id": api.player["id"], "name": api.player["name"]}  # type: ignore[attr-defined]
    assert game["status"] == "playing" and game["version"] == 0 and game["moves"] == 0
    assert len(game["id"]) >= 22  # at least 128 random bits, base64url
    assert set(game["piles"]) == set(rules.pile_ids)  # every pile, even when empty
    for pid, pile in game["piles"].items():
        assert pile == {"count": pile["count"]} if pid == "stock" else set(pile) == {"cards"}
    legal = [(m["from"], m["to"], m["count"]) for m in game["legal_moves"]]
    assert legal and len(legal) == len(set(legal))
    assert "base_rank" in game and "redeals_left" in game
    assert "log" not in game
    assert game["rated"] is False  # a chosen deal is casual
    # The same deal is the same layout, for anyone.
    again = start_as(api, new_player(api), slug, 12345)
    assert again["id"] != game["id"] and again["piles"] == game["piles"]
    # One unfinished game per deal and player: a second start points at the first.
    refused = api.post("/api/games", json={"game": slug, "deal": 12345})
    assert error_code(refused, 409) == "deal_in_play"
    assert refused.json()["error"]["game"] == game["id"]


def test_start_a_random_deal(app: FastAPI, api: TestClient) -> None:
    deals = set()
    for _ in range(3):
        response = api.post("/api/games", json={"game": "patriarchs"})
        assert response.status_code == 201, response.text
        assert response.json()["deal"] is None  # a rated game's number is sealed (contract v3)
        deal = stored_deal(app, response.json()["id"])
        assert 1 <= deal <= MAX_DEAL
        deals.add(deal)
    assert len(deals) > 1
    null_deal = api.post("/api/games", json={"game": "patriarchs", "deal": None})
    assert null_deal.status_code == 201


@pytest.mark.parametrize(
    "body",
    [
        {"game": "klondike", "deal": 1},
        {"game": "", "deal": 1},
        {"game": "Corners", "deal": 1},
        {"game": "corners", "deal": 0},
        {"game": "corners", "deal": -1},
        {"game": "corners", "deal": 2**53},
        {"game": "corners", "deal": 10**30},
        {"game": "corners", "deal": "7"},
        {"game": "corners", "deal": 7.5},
        {"game": "corners", "deal": True},
        {"game": "corners", "deal": [7]},
        {"deal": 7},
        {"game": 5},
        {"game": None},
        {},
        [],
        "corners",
    ],
)
def test_start_refuses_bad_requests(api: TestClient, body: Any) -> None:
    assert error_code(api.post("/api/games", json=body), 422) == "invalid_request"


def test_start_largest_deal(api: TestClient) -> None:
    assert start(api, "corners", MAX_DEAL)["deal"] == MAX_DEAL


@pytest.mark.parametrize(
    "authorization", [None, "", "Bearer", "Bearer ", "Bearer not-a-token", "Basic abc", "token"]
)
def test_start_needs_a_valid_token(client: TestClient, authorization: str | None) -> None:
    headers = {} if authorization is None else {"Authorization": authorization}
    response = client.post("/api/games", json={"game": "corners", "deal": 1}, headers=headers)
    assert error_code(response, 401) == "unauthenticated"


# -- GET /api/games/{id} ---------------------------------------------------------------------


def test_anyone_may_read_a_game(api: TestClient, client: TestClient) -> None:
    game = start(api, "castles-end", 2)
    for reader in (client, api):
        read = reader.get(f"/api/games/{game['id']}")
        assert read.status_code == 200, read.text
        assert read.json() == game
        assert "log" not in read.json()


@pytest.mark.parametrize(
    "game_id", ["nope", "A" * 22, "x" * 200, "%00", "a%00b", "%E2%99%A0", "..%2f..", "' or 1=1"]
)
def test_unknown_game_is_404(client: TestClient, game_id: str) -> None:
    assert error_code(client.get(f"/api/games/{game_id}"), 404) == "not_found"


def test_a_finished_game_exposes_its_log_and_cards(api: TestClient, client: TestClient) -> None:
    game = start(api, "quadrangle", 1)
    assert move(api, game["id"], "t5-t9", 0).status_code == 200
    assert move(api, game["id"], "stock-waste", 1).status_code == 200
    assert api.post(f"/api/games/{game['id']}/resign").status_code == 200
    read = api.get(f"/api/games/{game['id']}").json()  # its owner
    assert read["status"] == "lost"
    assert read["log"] == ["t5-t9", "stock-waste"]
    assert len(read["piles"]["stock"]["cards"]) == read["piles"]["stock"]["count"]
    assert read["legal_moves"] == []
    # Anyone who has not finished the deal sees it as its owner saw it, without the log.
    anonymous = client.get(f"/api/games/{game['id']}").json()
    assert anonymous["status"] == "lost" and "log" not in anonymous
    assert anonymous["piles"]["stock"] == {"count": read["piles"]["stock"]["count"]}


# -- POST /api/games/{id}/moves --------------------------------------------------------------


def test_a_legal_move(api: TestClient, app: FastAPI) -> None:
    game = start(api, "quadrangle", 1)
    moved = move(api, game["id"], "t5-t9", 0)
    assert moved.status_code == 200, moved.text
    after = moved.json()
    assert after["version"] == 1 and after["moves"] == 1 and after["status"] == "playing"
    assert after["piles"]["t5"]["cards"] == game["piles"]["t5"]["cards"][:-1]
    assert after["piles"]["t9"]["cards"] == [
        *game["piles"]["t9"]["cards"],
        game["piles"]["t5"]["cards"][-1],
    ]
    assert log_rows(app, game["id"]) == [(1, "move", "t5-t9")]
    assert api.get(f"/api/games/{game['id']}").json() == after


def test_an_illegal_move_says_why_and_changes_nothing(api: TestClient, app: FastAPI) -> None:
    game = start(api, "quadrangle", 1)
    before = snapshot(app, api, game["id"])
    refused = move(api, game["id"], "t1-t2", 0)
    assert error_code(refused, 422) == "illegal_move"
    message = refused.json()["error"]["message"]
    assert "A♦ cannot go on 5♠" in message and "tableau" in message
    for notation in ("t1-f1", "f1-t1", "waste-t1", "stock-t1", "t1-t1", "t1-t2/2"):
        response = move(api, game["id"], notation, 0)
        assert error_code(response, 422) == "illegal_move"
        assert "Traceback" not in response.text and "IllegalMove" not in response.text
    assert snapshot(app, api, game["id"]) == before


def test_a_stale_version_is_refused(api: TestClient, app: FastAPI) -> None:
    game = start(api, "quadrangle", 1)
    for version in (1, 7):
        assert error_code(move(api, game["id"], "t5-t9", version), 409) == "stale_version"
    assert move(api, game["id"], "t5-t9", 0).status_code == 200
    before = snapshot(app, api, game["id"])
    # A second tab still showing version 0 sends its own move.
    assert error_code(move(api, game["id"], "t8-t10", 0), 409) == "stale_version"
    assert snapshot(app, api, game["id"]) == before


def test_a_finished_game_takes_no_moves(api: TestClient, app: FastAPI) -> None:
    game = start(api, "corners", 1)
    assert api.post(f"/api/games/{game['id']}/resign").status_code == 200
    before = snapshot(app, api, game["id"])
    for version in (0, 1):
        assert error_code(move(api, game["id"], "r5-f1", version), 409) == "game_over"
    assert snapshot(app, api, game["id"]) == before


def test_another_players_game_is_403(api: TestClient, app: FastAPI) -> None:
    game = start(api, "corners", 1)
    before = snapshot(app, api, game["id"])
    intruder = other_player(api)
    body = {"from": "r5", "to": "f1", "count": 1, "version": 0}
    refusals = [
        api.post(f"/api/games/{game['id']}/moves", json=body, headers=intruder),
        api.post(f"/api/games/{game['id']}/undo", headers=intruder),
        api.post(f"/api/games/{game['id']}/resign", headers=intruder),
    ]
    for response in refusals:
        assert error_code(response, 403) == "forbidden"
    assert snapshot(app, api, game["id"]) == before


def test_unknown_game_actions_are_404(api: TestClient) -> None:
    body = {"from": "r5", "to": "f1", "count": 1, "version": 0}
    for game_id in ("nope", "x" * 200, "%00"):
        responses = [
            api.post(f"/api/games/{game_id}/moves", json=body),
            api.post(f"/api/games/{game_id}/undo"),
            api.post(f"/api/games/{game_id}/resign"),
        ]
        for response in responses:
            assert error_code(response, 404) == "not_found"


def test_actions_need_a_token(api: TestClient, client: TestClient, app: FastAPI) -> None:
    game = start(api, "corners", 1)
    before = snapshot(app, api, game["id"])
    body = {"from": "r5", "to": "f1", "count": 1, "version": 0}
    responses = [
        client.post(f"/api/games/{game['id']}/moves", json=body),
        client.post(f"/api/games/{game['id']}/undo"),
        client.post(f"/api/games/{game['id']}/resign"),
        client.post(
            f"/api/games/{game['id']}/moves", json=body, headers={"Authorization": "Bearer x"}
        ),
    ]
    for response in responses:
        assert error_code(response, 401) == "unauthenticated"
    assert snapshot(app, api, game["id"]) == before


GOOD = {"from": "t5", "to": "t9", "count": 1, "version": 0}


def _without(key: str) -> dict[str, Any]:
    return {k: v for k, v in GOOD.items() if k != key}


INVALID_MOVE_BODIES: list[Any] = [
    {**GOOD, "from": "x1"},  # no such pile anywhere
    {**GOOD, "to": "r1"},  # Quadrangle has no reserves
    {**GOOD, "to": "t13"},  # nor a 13th tableau pile
    {**GOOD, "from": ""},
    {**GOOD, "from": "T5"},
    {**GOOD, "from": "t5 "},
    {**GOOD, "from": "a" * 100},
    {**GOOD, "count": 0},
    {**GOOD, "count": -1},
    {**GOOD, "count": 10**30},
    {**GOOD, "count": "2"},
    {**GOOD, "count": "1"},
    {**GOOD, "count": True},
    {**GOOD, "count": None},
    {**GOOD, "version": -1},
    {**GOOD, "version": 10**30},
    {**GOOD, "version": 2**31},
    {**GOOD, "version": "0"},
    {**GOOD, "version": False},
    {**GOOD, "version": None},
    {**GOOD, "from": 5},
    {**GOOD, "from": None},
    {**GOOD, "to": ["t9"]},
    {**GOOD, "to": {"pile": "t9"}},
    _without("from"),
    _without("to"),
    _without("version"),
    {},
    [],
    [GOOD],
    "t5-t9",
    0,
    None,
]


def test_malformed_moves_are_invalid_requests(api: TestClient, app: FastAPI) -> None:
    game = start(api, "quadrangle", 1)
    before = snapshot(app, api, game["id"])
    for body in INVALID_MOVE_BODIES:
        response = api.post(
            f"/api/games/{game['id']}/moves",
            content=json.dumps(body).encode(),
            headers={"content-type": "application/json"},
        )
        assert error_code(response, 422) == "invalid_request", body
        assert snapshot(app, api, game["id"]) == before, body


def test_non_json_moves_are_invalid_requests(api: TestClient, app: FastAPI) -> None:
    game = start(api, "quadrangle", 1)
    before = snapshot(app, api, game["id"])
    raws = [b"", b"{", b"from=t5&to=t9", b"\xff\xfe", b"{'from': 't5'}", b"NaN", b"[1, 2", b"\xc3("]
    for raw in raws:
        response = api.post(
            f"/api/games/{game['id']}/moves",
            content=raw,
            headers={"content-type": "application/json"},
        )
        assert error_code(response, 422) == "invalid_request", raw
    assert snapshot(app, api, game["id"]) == before


def test_the_game_layout_decides_which_piles_exist(api: TestClient, app: FastAPI) -> None:
    game = start(api, "castles-end", 1)  # no stock and no waste
    before = snapshot(app, api, game["id"])
    for source, target in (("stock", "waste"), ("t1", "r1"), ("t11", "f1"), ("t1", "f5")):
        body = {"from": source, "to": target, "count": 1, "version": 0}
        response = api.post(f"/api/games/{game['id']}/moves", json=body)
        assert error_code(response, 422) == "invalid_request"
    assert snapshot(app, api, game["id"]) == before


# -- Idempotency-Key -------------------------------------------------------------------------


def test_same_idempotency_key_applies_once(api: TestClient, app: FastAPI) -> None:
    game = start(api, "quadrangle", 1)
    key = {"Idempotency-Key": f"k-{uuid.uuid4()}"}
    first = move(api, game["id"], "t5-t9", 0, key)
    again = move(api, game["id"], "t5-t9", 0, key)
    assert first.status_code == again.status_code == 200
    assert again.json() == first.json()
    # The first answer is the JSON stored with the key, byte for byte (serialized once).
    assert again.content == first.content
    assert first.json()["version"] == 1
    assert log_rows(app, game["id"]) == [(1, "move", "t5-t9")]
    # The game moves on; a late retry still gets the first answer and changes nothing.
    assert move(api, game["id"], "t8-t10", 1).status_code == 200
    before = snapshot(app, api, game["id"])
    late = move(api, game["id"], "t5-t9", 0, key)
    assert late.status_code == 200 and late.json() == first.json()
    assert snapshot(app, api, game["id"]) == before


def test_different_idempotency_keys_are_different_moves(api: TestClient, app: FastAPI) -> None:
    game = start(api, "quadrangle", 1)
    one = move(api, game["id"], "t5-t9", 0, {"Idempotency-Key": f"a-{uuid.uuid4()}"})
    two = move(api, game["id"], "t8-t10", 1, {"Idempotency-Key": f"b-{uuid.uuid4()}"})
    assert one.status_code == two.status_code == 200
    assert two.json()["version"] == 2
    assert [row[2] for row in log_rows(app, game["id"])] == ["t5-t9", "t8-t10"]


def test_a_key_is_per_game(api: TestClient) -> None:
    key = {"Idempotency-Key": f"shared-{uuid.uuid4()}"}
    other = new_player(api)
    one, two = start(api, "quadrangle", 1), start_as(api, other, "quadrangle", 1)
    assert move(api, one["id"], "t5-t9", 0, key).json()["id"] == one["id"]
    assert move(api, two["id"], "t5-t9", 0, {**key, **other}).json()["id"] == two["id"]


def test_a_refused_move_does_not_use_up_its_key(api: TestClient, app: FastAPI) -> None:
    game = start(api, "quadrangle", 1)
    key = {"Idempotency-Key": f"k-{uuid.uuid4()}"}
    assert error_code(move(api, game["id"], "t1-t2", 0, key), 422) == "illegal_move"
    assert move(api, game["id"], "t5-t9", 0, key).status_code == 200
    assert log_rows(app, game["id"]) == [(1, "move", "t5-t9")]


@pytest.mark.parametrize("key", ["", "k" * 101])
def test_bad_idempotency_keys(api: TestClient, app: FastAPI, key: str) -> None:
    game = start(api, "quadrangle", 1)
    before = snapshot(app, api, game["id"])
    response = move(api, game["id"], "t5-t9", 0, {"Idempotency-Key": key})
    assert error_code(response, 422) == "invalid_request"
    assert snapshot(app, api, game["id"]) == before


# -- undo ------------------------------------------------------------------------------------


def test_undo_goes_back_one_step(api: TestClient, app: FastAPI) -> None:
    game = start(api, "quadrangle", 1)
    assert move(api, game["id"], "t5-t9", 0).status_code == 200
    assert move(api, game["id"], "t8-t10", 1).status_code == 200
    undone = api.post(f"/api/games/{game['id']}/undo")
    assert undone.status_code == 200, undone.text
    after = undone.json()
    assert after["version"] == 3 and after["undos"] == 1
    other = new_player(api)
    one_move = start_as(api, other, "quadrangle", 1)
    moved = move(api, one_move["id"], "t5-t9", 0, other)
    assert after["piles"] == moved.json()["piles"]
    undone = api.post(f"/api/games/{game['id']}/undo")
    assert undone.status_code == 200
    assert undone.json()["piles"] == game["piles"]
    assert undone.json()["legal_moves"] == game["legal_moves"]
    assert undone.json()["version"] == 4
    # Back at the deal: nothing left to undo.
    before = snapshot(app, api, game["id"])
    assert error_code(api.post(f"/api/games/{game['id']}/undo"), 409) == "undo_unavailable"
    assert snapshot(app, api, game["id"]) == before


def test_nothing_to_undo_on_a_fresh_game(api: TestClient, app: FastAPI) -> None:
    game = start(api, "castles-end", 1)
    before = snapshot(app, api, game["id"])
    assert error_code(api.post(f"/api/games/{game['id']}/undo"), 409) == "undo_unavailable"
    assert snapshot(app, api, game["id"]) == before


@pytest.mark.parametrize(
    ("slug", "moves"),
    [
        ("corners", ["stock-waste"]),  # a deal from the stock
        ("corners", ["r5-f1"]),  # a reserve refilled from the stock
        ("patriarchs", ["r3-f8"]),  # a reserve refilled from the stock
        ("quadruple-interchange", ["t5-t9"]),  # a face-down card turned up
        ("quadrangle", ["t5-t9", "stock-waste"]),  # undoable move, then a deal
    ],
)
def test_undo_never_takes_back_a_revealing_step(
    api: TestClient, app: FastAPI, slug: str, moves: list[str]
) -> None:
    game = start(api, slug, 1)
    for version, notation in enumerate(moves):
        assert move(api, game["id"], notation, version).status_code == 200
    assert api.get(f"/api/games/{game['id']}").json()["can_undo"] is False
    before = snapshot(app, api, game["id"])
    response = api.post(f"/api/games/{game['id']}/undo")
    assert error_code(response, 409) == "undo_unavailable"
    assert snapshot(app, api, game["id"]) == before


def test_no_undo_in_a_finished_game(api: TestClient, app: FastAPI) -> None:
    game = start(api, "quadrangle", 1)
    assert move(api, game["id"], "t5-t9", 0).json()["can_undo"] is True
    assert api.post(f"/api/games/{game['id']}/resign").status_code == 200
    before = snapshot(app, api, game["id"])
    assert error_code(api.post(f"/api/games/{game['id']}/undo"), 409) == "undo_unavailable"
    assert snapshot(app, api, game["id"]) == before


# -- resign ----------------------------------------------------------------------------------


def test_resign(api: TestClient, app: FastAPI) -> None:
    game = start(api, "patriarchs", 1)
    resigned = api.post(f"/api/games/{game['id']}/resign")
    assert resigned.status_code == 200, resigned.text
    assert resigned.json()["status"] == "lost"
    assert resigned.json()["version"] == 1
    assert resigned.json()["log"] == []
    before = snapshot(app, api, game["id"])
    assert error_code(api.post(f"/api/games/{game['id']}/resign"), 409) == "game_over"
    assert snapshot(app, api, game["id"]) == before


# -- never a 500 -----------------------------------------------------------------------------

_VALUES: list[Any] = [
    None, True, False, 0, 1, -1, 7, 2**31, 2**53, 10**30, -(10**30), 0.5, 1.0, 1e308, "", "0",
    "1", "t5", "t9", "stock", "waste", "f1", "x9", "T5", "t5\x00", "💥", "a" * 5000, [], [1],
    {}, {"a": 1}, [[[[[]]]]],
]  # fmt: skip
_KEYS = ["from", "to", "count", "version", "game", "deal", "name", "extra", "", "From"]


def _fuzz_bodies(rng: random.Random, n: int) -> list[bytes]:
    bodies: list[bytes] = []
    for _ in range(n):
        shape = rng.random()
        if shape < 0.7:
            obj: Any = {rng.choice(_KEYS): rng.choice(_VALUES) for _ in range(rng.randint(0, 6))}
            if rng.random() < 0.5:  # mostly well-formed: few fields wrong at a time
                obj = {**GOOD, **obj}
            # version is never the current 0, so no body is a legal move.
            if obj.get("version") == 0 and type(obj.get("version")) is int:
                obj["version"] = 1
        elif shape < 0.85:
            obj = rng.choice(_VALUES)
        else:
            raw = json.dumps({**GOOD, "version": 3}).encode()
            cut = rng.randint(0, len(raw))
            bodies.append(raw[:cut] + bytes([rng.randint(0, 255)]) + raw[cut + 1 :])
            continue
        bodies.append(json.dumps(obj).encode())
    bodies += [b"[" * 5000, b"{" * 5000, b'"' + b"\\u0000" * 10 + b'"', b"1" * 5000, b"\x00"]
    return bodies


@pytest.mark.slow
def test_fuzzed_bodies_never_cause_a_server_error(api: TestClient, app: FastAPI) -> None:
    game = start(api, "quadrangle", 1)
    before = snapshot(app, api, game["id"])
    rng = random.Random(20261121)
    routes = [f"/api/games/{game['id']}/moves", "/api/games", "/api/players"]
    content_types = ["application/json", "text/plain", None, "application/x-www-form-urlencoded"]
    seen: set[tuple[str, int, str]] = set()
    for body in _fuzz_bodies(rng, 150):
        route = rng.choice(routes)
        kind = rng.choice(content_types)
        headers = {"content-type": kind} if kind else {}
        response = api.post(route, content=body, headers=headers)
        assert response.status_code < 500, (route, body[:200], response.text)
        if response.status_code >= 400:
            code = error_code(response, response.status_code)
            seen.add((route.rsplit("/", 1)[-1], response.status_code, code))
            if route.endswith("/moves"):
                assert (response.status_code, code) in {
                    (422, "invalid_request"),
                    (409, "stale_version"),
                }, (body[:200], response.text)
    # Nothing that reached the moves route changed the game.
    assert snapshot(app, api, game["id"]) == before
    assert ("moves", 422, "invalid_request") in seen


def test_every_api_error_has_the_error_shape(api: TestClient) -> None:
    responses = [
        api.get("/api/nowhere"),
        api.delete("/api/games/nope"),
        api.put("/api/players", json={}),
        api.get("/api/games/nope"),
        api.post("/api/games", json={}),
    ]
    for response in responses:
        assert 400 <= response.status_code < 500
        error_code(response, response.status_code)


def test_integer_valued_numbers_are_integers_as_the_schema_says(api: TestClient) -> None:
    """JSON Schema's integer takes 651.0 (no fraction); 651.5, "651" and true stay refused."""
    started = api.post("/api/games", json={"game": "corners", "deal": 651.0})
    assert started.status_code == 201 and started.json()["deal"] == 651
    game = started.json()
    body = {"from": "stock", "to": "waste", "count": 1.0, "version": 0.0}
    assert api.post(f"/api/games/{game['id']}/moves", json=body).status_code in (200, 409)


def test_pile_ids_have_a_pattern_in_the_schema(app: FastAPI) -> None:
    schema = app.openapi()["components"]["schemas"]["MoveRequest"]["properties"]
    assert schema["from"]["pattern"] == schema["to"]["pattern"] == PILE_ID
    import re

    pattern = re.compile(PILE_ID)
    assert all(pattern.match(p) for p in ["stock", "waste", "t1", "t12", "f16", "r9"])
    assert not any(pattern.match(p) for p in ["x1", "T5", "t0", "t5 ", "t100", ""])


def test_an_unknown_method_is_405_with_allow_on_browser_routes_too(client: TestClient) -> None:
    """TRACE can change nothing: the router answers it, not the CSRF check."""
    for path in ("/", "/games/nope/moves", "/api/games"):
        answer = client.request("TRACE", path)
        assert answer.status_code == 405, (path, answer.status_code)
        assert answer.headers.get("allow"), path
