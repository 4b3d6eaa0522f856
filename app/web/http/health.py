"""Liveness for load balancers and the container health check."""

from __future__ import annotations

from anyio import CapacityLimiter, to_thread
from fastapi import APIRouter
from fastapi.responses import JSONResponse

from app.web.deps import HealthDep

router = APIRouter()
# A thread of its own: a busy or stuck pool of request threads must not silence /healthz.
_HEALTH_THREAD = CapacityLimiter(1)


@router.get("/healthz", include_in_schema=False)
async def health(checks: HealthDep) -> JSONResponse:
    if not await to_thread.run_sync(checks.database_answers, limiter=_HEALTH_THREAD):
        return JSONResponse({"status": "database unavailable"}, status_code=503)
    return JSONResponse({"status": "ok"})
