"""Assembles the routes; nothing else lives here.

The OpenAPI schema (/docs) describes the JSON API and the room's event stream only: the HTML
pages and their HTMX fragments are for browsers, and are left out of it (their routers say so).
"""

from fastapi import APIRouter, FastAPI
from fastapi.routing import APIRoute

from app.web import api, pages
from app.web.direct import bind_directly
from app.web.http import health, newcomers

# A request is matched against the routes in this order: the two move paths first.
ROUTERS: tuple[APIRouter, ...] = (
    api.games.router,
    pages.play.router,
    health.router,
    pages.home.router,
    pages.prefs.router,
    pages.rules.router,
    api.rooms.router,
    pages.live.router,
    pages.rooms.router,
    api.stats.router,
    api.competition.router,
    pages.stats.router,
    pages.competition.router,
    pages.coach.router,
    api.accounts.router,
    pages.accounts.router,
    newcomers.router,
)


def add_routes(app: FastAPI, routers: tuple[APIRouter, ...]) -> None:
    """Puts each router's routes straight on the app's router, in order.

    Not ``include_router``: since FastAPI 0.137 an included router stays a node of its own that
    every request resolves again (its routes' version, its effective routes), and with 17 of
    them that was about a tenth of the CPU of an API move (bench/RESULTS.md, issue 26). The
    routers here take no options at inclusion (their prefixes, tags and ``include_in_schema``
    are their own), so their routes need nothing from it.
    """
    for router in routers:
        for route in router.routes:
            if isinstance(route, APIRoute):
                bind_directly(route)  # the move routes (app/web/direct.py)
            app.router.routes.append(route)
