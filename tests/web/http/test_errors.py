"""Errors as answers (app/web/http/errors.py), on a bare app with only its handlers: JSON with
a code under /api, an error page elsewhere, validation messages in the request's language,
and 405s that name every method of the path."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from pydantic import BaseModel, Field

from app.services.errors import NotFound, ServiceError, StaleVersion
from app.web.http import errors
from app.web.http.errors import validation_message
from app.web.i18n import LanguageMiddleware, gettext, speaking
from tests.settings import suite_settings


class Body(BaseModel):
    name: str = Field(min_length=3)
    count: int


class Busy(ServiceError):
    status, code = 503, "busy"


@pytest.fixture(scope="module")
def bare() -> Iterator[TestClient]:
    app = FastAPI()
    app.state.settings = suite_settings("sqlite://", retry_after_seconds=7)
    errors.install(app)
    app.add_middleware(LanguageMiddleware)

    def refuse(kind: str) -> None:
        if kind == "gone":
            raise NotFound("No game %(id)s.", id="g1")
        if kind == "busy":
            raise Busy("Busy.")
        raise StaleVersion("Stale version.")

    @app.get("/api/refuse/{kind}")
    def api_refuse(kind: str) -> None:
        refuse(kind)

    @app.get("/page/refuse/{kind}")
    def page_refuse(kind: str) -> None:
        refuse(kind)

    @app.post("/api/things")
    def api_things(body: Body) -> dict[str, Any]:
        return body.model_dump()

    @app.get("/api/things")
    def list_things() -> list[str]:
        return []

    @app.delete("/api/things")
    def clear_things() -> None:
        return None

    with TestClient(app) as client:
        yield client


def test_a_service_error_under_api_is_json_with_its_code(bare: TestClient) -> None:
    answer = bare.get("/api/refuse/gone")
    assert answer.status_code == 404
    assert answer.json() == {"error": {"code": "not_found", "message": "No game g1."}}


def test_a_service_error_on_a_page_is_a_page_with_its_title(bare: TestClient) -> None:
    answer = bare.get("/page/refuse/conflict")
    assert answer.status_code == 409
    assert answer.headers["content-type"].startswith("text/html")
    assert "Conflict" in answer.text and "Stale version." in answer.text


def test_a_503_says_when_to_come_back(bare: TestClient) -> None:
    answer = bare.get("/api/refuse/busy")
    assert answer.status_code == 503 and answer.headers["retry-after"] == "7"


def test_invalid_bodies_are_422_with_where_and_why(bare: TestClient) -> None:
    answer = bare.post("/api/things", json={"name": "ab"})
    assert answer.status_code == 422
    error = answer.json()["error"]
    assert error["code"] == "invalid_request"
    assert "name: String should have at least 3 characters" in error["message"]
    assert "count: Field required" in error["message"]


def test_invalid_bodies_are_worded_in_the_callers_language(bare: TestClient) -> None:
    answer = bare.post("/api/things", json={"name": "abcd"}, headers={"accept-language": "de"})
    message = answer.json()["error"]["message"]
    assert message.startswith("count: ") and "Field required" not in message


def test_a_body_that_is_not_utf8_is_malformed_not_a_400(bare: TestClient) -> None:
    answer = bare.post(
        "/api/things", content=b'{"name": "\xff"}', headers={"content-type": "application/json"}
    )
    assert answer.status_code == 422
    assert answer.json()["error"]["code"] == "invalid_request"


def test_unknown_addresses_and_methods(bare: TestClient) -> None:
    missing = bare.get("/api/nothing")
    assert missing.status_code == 404
    assert missing.json()["error"] == {
        "code": "not_found",
        "message": "There is nothing at this address.",
    }
    assert bare.get("/nothing").headers["content-type"].startswith("text/html")
    wrong = bare.put("/api/things")
    assert wrong.status_code == 405
    assert wrong.json()["error"]["code"] == "method_not_allowed"
    # Every route of the path, and HEAD beside GET.
    allowed = wrong.headers["allow"].split(", ")
    assert sorted(allowed) == ["DELETE", "GET", "HEAD", "POST"]


def test_english_validation_messages_are_pydantics_own() -> None:
    error = {"type": "string_too_long", "msg": "pydantic's words", "ctx": {"max_length": 1}}
    with speaking("en"):
        assert validation_message(error) == "pydantic's words"


def test_an_unlisted_kind_says_the_value_is_not_valid() -> None:
    with speaking("de"):
        said = validation_message({"type": "no_such_kind", "msg": "x"})
        assert said == gettext("The value is not valid.") != "The value is not valid."
        missing = validation_message({"type": "missing", "msg": "Field required"})
        assert missing == gettext("Field required") != "Field required"


def test_counted_and_choice_messages_follow_the_language() -> None:
    with speaking("fr"):
        one = validation_message({"type": "string_too_long", "msg": "", "ctx": {"max_length": 1}})
        many = validation_message({"type": "string_too_long", "msg": "", "ctx": {"max_length": 5}})
        choice = validation_message(
            {"type": "enum", "msg": "", "ctx": {"expected": "'a', 'b' or 'c'"}}
        )
    assert one != many and "5" in many
    assert "'a', 'b'" in choice and " or " not in choice
