"""The database unavailable (or the app too busy): 503 with Retry-After, JSON under /api and a
friendly page elsewhere, and one log line instead of a traceback."""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.responses import Response
from sqlalchemy.exc import DBAPIError

from app.metrics import DB_ERRORS
from app.services.availability import UNAVAILABLE_ERRORS, is_unavailable, summary
from app.web.http.errors import error_json, error_page, is_api
from app.web.state import settings_of

logger = logging.getLogger("patience_hall.faults")

UNAVAILABLE_MESSAGE = (
    "Patience Hall cannot reach its database just now. Nothing you did was lost: "
    "try again in a few seconds."
)


def unavailable(request: Request, message: str = UNAVAILABLE_MESSAGE) -> Response:
    retry_after = str(settings_of(request).retry_after_seconds)
    if is_api(request):
        response: Response = error_json(503, "unavailable", message)
    else:
        response = error_page(request, 503, message)
    response.headers["Retry-After"] = retry_after
    return response


def install(app: FastAPI) -> None:
    async def _database_error(request: Request, exc: Exception) -> Response:
        if not is_unavailable(exc):
            raise exc  # a real bug: the server error handler logs its traceback
        DB_ERRORS.labels(summary(exc).split(":", 1)[0]).inc()
        logger.warning(
            "database unavailable: %s %s: %s", request.method, request.url.path, summary(exc)
        )
        return unavailable(request)

    for kind in (*UNAVAILABLE_ERRORS, DBAPIError):
        app.add_exception_handler(kind, _database_error)
