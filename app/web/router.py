"""Assembles the routers; nothing else lives here."""

from fastapi import APIRouter

from app.web import api, health, live, pages, play, room_pages, rooms_api, stats

router = APIRouter()
router.include_router(api.router)
router.include_router(health.router)
router.include_router(pages.router)
router.include_router(play.router)
router.include_router(rooms_api.router)
router.include_router(live.router)
router.include_router(room_pages.router)
router.include_router(stats.router)
