"""The assembly of the routes (app/web/router.py): the order they are matched in and that
they are put on the app as they are."""

from __future__ import annotations

from fastapi import APIRouter, FastAPI
from fastapi.routing import APIRoute

from app.web import api, pages
from app.web.router import ROUTERS, add_routes


def test_the_two_move_paths_are_matched_first() -> None:
    assert ROUTERS[:2] == (api.games.router, pages.play.router)


def test_every_router_of_the_api_and_the_pages_is_assembled_once() -> None:
    assert len(set(map(id, ROUTERS))) == len(ROUTERS)
    for package in (api, pages):
        for name in package.__all__:
            assert getattr(package, name).router in ROUTERS, name


def test_only_api_routes_and_the_event_stream_are_in_the_schema() -> None:
    for router in ROUTERS:
        for route in router.routes:
            if isinstance(route, APIRoute) and route.include_in_schema:
                assert route.path.startswith(("/api/", "/rooms/")), route.path


def test_add_routes_appends_each_route_in_order() -> None:
    first, second = APIRouter(prefix="/a"), APIRouter()

    @first.get("/x")
    def x() -> None: ...

    @second.get("/y")
    def y() -> None: ...

    app = FastAPI()
    before = len(app.router.routes)
    add_routes(app, (first, second))
    paths = [getattr(r, "path", "") for r in app.router.routes[before:]]
    assert paths == ["/a/x", "/y"]
