"""The API's documentation pages, Swagger UI (/docs) and ReDoc (/redoc), with their assets
served by the app (vendored by the pinned ``fastapi-offline`` package: no CDN) and no inline
script, so that they work under the site's content security policy."""

from __future__ import annotations

from functools import cache
from importlib.metadata import version
from pathlib import Path

import fastapi_offline
from fastapi import APIRouter
from fastapi.responses import HTMLResponse, Response

router = APIRouter(include_in_schema=False)
ASSETS = "/static/docs"
_V = version("fastapi-offline")  # in the asset URLs, so a new version is never served stale

_SWAGGER = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Patience Hall API · Swagger UI</title>
<link rel="stylesheet" href="{ASSETS}/swagger-ui.css?v={_V}">
<link rel="icon" href="/static/favicon.svg" type="image/svg+xml">
</head><body><div id="swagger-ui" data-openapi="/openapi.json"></div>
<script src="{ASSETS}/swagger-ui-bundle.js?v={_V}"></script>
<script src="/static/js/swagger-init.js"></script>
</body></html>"""

_REDOC = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Patience Hall API · ReDoc</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="/static/favicon.svg" type="image/svg+xml">
</head><body><redoc spec-url="/openapi.json"></redoc>
<script src="{ASSETS}/redoc.standalone.js?v={_V}"></script>
</body></html>"""


# ReDoc's side menu shows a logo it always fetches from Redocly's CDN: pointed at our own icon
# instead, nothing on the page leaves this site (and nothing breaks the CSP's img-src).
_REDOC_LOGO = b"https://cdn.redoc.ly/redoc/logo-mini.svg"


@cache
def _redoc_js() -> bytes:
    path = Path(fastapi_offline.__file__).parent / "static" / "redoc.standalone.js"
    return path.read_bytes().replace(_REDOC_LOGO, b"/static/favicon.svg")


@router.get(f"{ASSETS}/redoc.standalone.js")
async def redoc_js() -> Response:
    return Response(
        _redoc_js(),
        media_type="text/javascript",
        headers={"cache-control": "public, max-age=86400"},
    )


@router.get("/docs")
async def swagger_ui() -> HTMLResponse:
    return HTMLResponse(_SWAGGER)


@router.get("/redoc")
async def redoc() -> HTMLResponse:
    return HTMLResponse(_REDOC)
