"""Liveness for load balancers and the container health check."""

from __future__ import annotations

from anyio import CapacityLimiter, to_thread
from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from sqlalchemy import text
from sqlalchemy.exc import SQLAlchemyError

from app.db.faults import is_unavailable

router = APIRouter()
# A thread of its own: a busy or stuck pool of request threads must not silence /healthz.
_HEALTH_THREAD = CapacityLimiter(1)


def _database_answers(request: Request) -> bool:
    try:
        with request.app.state.sessions() as db:
            db.execute(text("SELECT 1"))
    except Exception as exc:
        if not (is_unavailable(exc) or isinstance(exc, SQLAlchemyError)):
            raise
        return False
    return True


@router.get("/healthz", include_in_schema=False)
async def health(request: Request) -> JSONResponse:
    if not await to_thread.run_sync(_database_answers, request, limiter=_HEALTH_THREAD):
        return JSONResponse({"status": "database unavailable"}, status_code=503)
    return JSONResponse({"status": "ok"})
