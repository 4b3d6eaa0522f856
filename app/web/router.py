"""Assembles the routers; nothing else lives here.

The OpenAPI schema (/docs) describes the JSON API and the room's event stream only: the HTML
pages and their HTMX fragments are for browsers, and are left out of it.
"""

from fastapi import APIRouter

from app.web import (
    accounts,
    api,
    coach,
    health,
    live,
    newcomers,
    pages,
    play,
    room_pages,
    rooms_api,
    stats,
)

router = APIRouter()
# A request is matched against the routes in this order: the two move paths first.
router.include_router(api.router)
router.include_router(play.router, include_in_schema=False)
router.include_router(health.router)
router.include_router(pages.router, include_in_schema=False)
router.include_router(rooms_api.router)
router.include_router(live.router)
router.include_router(room_pages.router, include_in_schema=False)
router.include_router(stats.router)
router.include_router(coach.router, include_in_schema=False)
router.include_router(accounts.router)
router.include_router(newcomers.router, include_in_schema=False)
