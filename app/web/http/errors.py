"""Errors as answers: JSON ``{"error": {"code", "message"}}`` under /api, pages elsewhere."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from babel.lists import format_list
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException
from starlette.routing import Match

from app.services.errors import ServiceError
from app.web.i18n import DEFAULT, N_, current_lang, gettext, say_n
from app.web.pages.templating import render
from app.web.state import settings_of
from app.web.words import service_message


def Nn_(singular: str, plural: str) -> tuple[str, str]:
    """Marks a singular and a plural message as one message of the catalogs (ngettext)."""
    return singular, plural


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
# A constant of its own: pybabel does not extract a marker nested in another call's argument.
_ANY_TITLE = N_("Something is off")


def error_page(request: Request, status: int, message: str, code: str = "") -> Response:
    title = gettext(_TITLES.get(code) or _STATUS_TITLES.get(status, _ANY_TITLE))
    return render(request, "pages/error.html", {"title": title, "message": message}, status)


# Pydantic's validation messages (by error ``type``) as catalog messages: the same English
# sentences with ``%(name)s`` for the error's context, so German, French and Spanish callers
# read them in their language. Field names are the API's own and stay as they are.
_VALIDATION = {
    "missing": N_("Field required"),
    "extra_forbidden": N_("Extra inputs are not permitted"),
    "int_type": N_("Input should be a valid integer"),
    "int_parsing": N_("Input should be a valid integer, unable to parse string as an integer"),
    "int_from_float": N_("Input should be a valid integer, got a number with a fractional part"),
    "float_type": N_("Input should be a valid number"),
    "float_parsing": N_("Input should be a valid number, unable to parse string as a number"),
    "bool_type": N_("Input should be a valid boolean"),
    "bool_parsing": N_("Input should be a valid boolean, unable to interpret input"),
    "string_type": N_("Input should be a valid string"),
    "string_pattern_mismatch": N_("String should match pattern '%(pattern)s'"),
    "list_type": N_("Input should be a valid list"),
    "dict_type": N_("Input should be a valid dictionary"),
    "model_attributes_type": N_(
        "Input should be a valid dictionary or object to extract fields from"
    ),
    "greater_than": N_("Input should be greater than %(gt)s"),
    "greater_than_equal": N_("Input should be greater than or equal to %(ge)s"),
    "less_than": N_("Input should be less than %(lt)s"),
    "less_than_equal": N_("Input should be less than or equal to %(le)s"),
    "json_invalid": N_("JSON decode error"),
    "literal_error": N_("Input should be %(expected)s"),
    "enum": N_("Input should be %(expected)s"),
}
# Counted ones: the context's number chooses the plural form.
_VALIDATION_COUNTED = {
    "string_too_short": (
        "min_length",
        Nn_(
            "String should have at least %(n)s character",
            "String should have at least %(n)s characters",
        ),
    ),
    "string_too_long": (
        "max_length",
        Nn_(
            "String should have at most %(n)s character",
            "String should have at most %(n)s characters",
        ),
    ),
    "too_short": (
        "min_length",
        Nn_("List should have at least %(n)s item", "List should have at least %(n)s items"),
    ),
    "too_long": (
        "max_length",
        Nn_("List should have at most %(n)s item", "List should have at most %(n)s items"),
    ),
}
# The app's own validators' messages (app/web/api/schemas/base.py), said after "Value error, ".
_VALUE_ERRORS = (N_("Input should be a whole number"),)


def _choices(expected: str) -> str:
    """Pydantic's "'a', 'b' or 'c'" as the language lists alternatives ("'a', 'b' oder 'c'")."""
    found = re.findall(r"'[^']*'|\d+", expected)
    if len(found) < 2:
        return expected
    return str(format_list(found, style="or", locale=current_lang()))


def validation_message(err: Mapping[str, Any]) -> str:
    """One of pydantic's validation errors in the request's language (English: pydantic's own
    words); an error of a kind not listed says that the value is not valid."""
    kind, ctx = str(err.get("type", "")), dict(err.get("ctx") or {})
    if current_lang() == DEFAULT:
        return str(err.get("msg"))
    if kind == "value_error":
        return gettext(str(ctx.get("error", ""))) or gettext("The value is not valid.")
    if kind in _VALIDATION_COUNTED:
        key, (singular, plural) = _VALIDATION_COUNTED[kind]
        return say_n(singular, plural, int(ctx.get(key, 0)))
    template = _VALIDATION.get(kind)
    if template is None:
        return gettext("The value is not valid.")
    params = {k: str(v) for k, v in ctx.items()}
    if "expected" in params:
        params["expected"] = _choices(params["expected"])
    try:
        return gettext(template) % params
    except (KeyError, ValueError):  # a context pydantic words differently: its template alone
        return gettext("The value is not valid.")


def _describe(errors: Any) -> str:
    parts = []
    for err in errors:
        where = ".".join(str(x) for x in err.get("loc", ()) if x not in ("body", "query", "path"))
        said = validation_message(err)
        parts.append(f"{where}: {said}" if where else said)
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
