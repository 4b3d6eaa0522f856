"""Assembles the routers; nothing else lives here.

The OpenAPI schema (/docs) describes the JSON API and the room's event stream only: the HTML
pages and their HTMX fragments are for browsers, and are left out of it.
"""

from fastapi import APIRouter

from app.web import api, pages
from app.web.http import health, newcomers

router = APIRouter()
# A request is matched against the routes in this order: the two move paths first.
router.include_router(api.games.router)
router.include_router(pages.play.router, include_in_schema=False)
router.include_router(health.router)
router.include_router(pages.home.router, include_in_schema=False)
router.include_router(pages.prefs.router, include_in_schema=False)
router.include_router(pages.rules.router, include_in_schema=False)
router.include_router(api.rooms.router)
router.include_router(pages.live.router)
router.include_router(pages.rooms.router, include_in_schema=False)
router.include_router(api.stats.router)
router.include_router(api.competition.router)
router.include_router(pages.stats.router, include_in_schema=False)
router.include_router(pages.competition.router, include_in_schema=False)
router.include_router(pages.coach.router, include_in_schema=False)
router.include_router(api.accounts.router)
router.include_router(pages.accounts.router, include_in_schema=False)
router.include_router(newcomers.router, include_in_schema=False)
