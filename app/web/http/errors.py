"""Errors as answers: JSON ``{"error": {"code", "message"}}`` under /api, pages elsewhere."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException
from starlette.routing import Match

from app.services.errors import ServiceError
from app.web.i18n import N_, gettext
from app.web.pages.templating import render
from app.web.state import settings_of
from app.web.words import service_message

_HTTP_CODES = {404: "not_found", 405: "method_not_allowed", 401: "unauthenticated"}
_UNREADABLE_BODY = (
    "There was an error parsing the body"  # FastAPI's words for a body it cannot decode
)


def is_api(request: Request) -> bool:
    return request.url.path.startswith("/api/")


def error_json(status: int, code: str, message: str, **extra: Any) -> JSONResponse:
    return JSONResponse({"error": {"code": code, "message": message, **extra}}, status_code=status)


# Refusals whose page deserves its own heading (the same-deal rule is not "not yours").
_TITLES = {
    "same_deal_in_play": N_("Finish your own game first"),
    "deal_not_finished": N_("Finish this deal first"),
}
_STATUS_TITLES = {
    404: N_("Not found"),
    403: N_("Not yours"),
    409: N_("Conflict"),
    429: N_("Slow down"),
    503: N_("Back in a moment"),
}


def error_page(request: Request, status: int, message: str, code: str = "") -> Response:
    title = gettext(_TITLES.get(code) or _STATUS_TITLES.get(status, N_("Something is off")))
    return render(request, "pages/error.html", {"title": title, "message": message}, status)


def _describe(errors: Any) -> str:
    parts = []
    for err in errors:
        where = ".".join(str(x) for x in err.get("loc", ()) if x not in ("body", "query", "path"))
        parts.append(f"{where}: {err.get('msg')}" if where else str(err.get("msg")))
    return "; ".join(parts) or gettext("The request is not valid.")


def install(app: FastAPI) -> None:
    @app.exception_handler(ServiceError)
    async def _service_error(request: Request, exc: ServiceError) -> Response:
        if is_api(request):
            response: Response = error_json(
                exc.status, exc.code, service_message(exc), **exc.details
            )
        else:
            response = error_page(request, exc.status, service_message(exc), exc.code)
        response.headers.update(getattr(exc, "headers", {}))
        if exc.status == 503:
            response.headers["Retry-After"] = str(settings_of(request).retry_after_seconds)
        return response

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> Response:
        message = _describe(exc.errors())
        if is_api(request):
            return error_json(422, "invalid_request", message)
        return error_page(request, 422, message)

    @app.exception_handler(HTTPException)
    async def _http(request: Request, exc: HTTPException) -> Response:
        if exc.status_code == 400 and exc.detail == _UNREADABLE_BODY:
            # A body that is not even text (bad UTF-8) is as malformed as bad JSON.
            message = gettext("The request body could not be read: send UTF-8 JSON.")
            if is_api(request):
                return error_json(422, "invalid_request", message)
            return error_page(request, 422, message)
        code = _HTTP_CODES.get(exc.status_code, "http_error")
        message = exc.detail if isinstance(exc.detail, str) else gettext("Request refused.")
        if exc.status_code == 404 and message == "Not Found":
            message = gettext("There is nothing at this address.")
        response = (
            error_json(exc.status_code, code, message)
            if is_api(request)
            else error_page(request, exc.status_code, message)
        )
        # Starlette's own headers of the refusal: above all ``Allow`` on a 405 (RFC 9110),
        # which names HEAD too wherever GET is allowed (app/web/http/headers.py answers it).
        headers = dict(exc.headers or {})
        allow = [m.strip() for m in headers.get("Allow", "").split(",") if m.strip()]
        if exc.status_code == 405:
            # Starlette names the methods of the first route of the path only; a path served
            # by several routes (GET, POST and DELETE /api/races/queue) allows them all.
            allow = sorted({*allow, *_methods_of_path(request)}, key=_METHOD_ORDER.index)
            headers["Allow"] = ", ".join(allow)
        if "GET" in allow and "HEAD" not in allow:
            headers["Allow"] = ", ".join([*allow, "HEAD"])
        response.headers.update(headers)
        return response


_METHOD_ORDER = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "CONNECT"]


def _methods_of_path(request: Request) -> set[str]:
    """Every method some route of the app serves at this request's path (routers included
    in the app are walked: each route carries its full path)."""
    found: set[str] = set()
    routes = list(request.app.router.routes)
    while routes:
        route = routes.pop()
        inner = getattr(route, "original_router", None)
        if inner is not None:
            routes.extend(inner.routes)
            continue
        methods = getattr(route, "methods", None)
        if methods and route.matches(request.scope)[0] is not Match.NONE:
            found |= {m for m in methods if m in _METHOD_ORDER}
    return found
