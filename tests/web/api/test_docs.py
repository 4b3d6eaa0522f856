"""The API's documentation pages (app/web/api/docs.py): served by the app with no inline script
and no address of another site."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from app.web.api import docs


@pytest.fixture(scope="module")
def bare() -> Iterator[TestClient]:
    app = FastAPI(docs_url=None, redoc_url=None)
    app.include_router(docs.router)
    with TestClient(app) as client:
        yield client


@pytest.mark.parametrize("path", ["/docs", "/redoc"])
def test_the_pages_load_scripts_from_this_site_only(bare: TestClient, path: str) -> None:
    page = bare.get(path)
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert "/openapi.json" in page.text
    for tag in re.findall(r"<script[^>]*>", page.text):
        assert re.search(r'src="/static/', tag), tag  # no inline script
    assert "http://" not in page.text and "https://" not in page.text


def test_redoc_is_served_with_its_logo_pointed_at_our_own_icon(bare: TestClient) -> None:
    script = bare.get(f"{docs.ASSETS}/redoc.standalone.js")
    assert script.status_code == 200
    assert script.headers["content-type"].startswith("text/javascript")
    assert "max-age=86400" in script.headers["cache-control"]
    assert b"cdn.redoc.ly/redoc/logo-mini.svg" not in script.content
    assert b"/static/favicon.svg" in script.content


def test_the_pages_are_not_in_the_schema() -> None:
    assert all(not getattr(route, "include_in_schema", True) for route in docs.router.routes)
