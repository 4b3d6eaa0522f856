"""Jinja2 set-up and the small helpers templates use to draw cards."""

from __future__ import annotations

from typing import Any

from fastapi import Request
from fastapi.templating import Jinja2Templates
from starlette.responses import Response

from app.config import PROJECT_DIR
from app.engine import GAMES
from app.engine.cards import SUIT_SYMBOLS, SUITS, label_of, name_of, parse_code

templates = Jinja2Templates(directory=PROJECT_DIR / "templates")


def card_label(code: str) -> str:
    return label_of(parse_code(code))


def card_name(code: str) -> str:
    return name_of(parse_code(code))


def card_suit(code: str) -> str:
    return ("clubs", "diamonds", "hearts", "spades")[SUITS.index(code[1])]


templates.env.globals.update(
    card_label=card_label,
    card_name=card_name,
    card_suit=card_suit,
    suit_symbols=SUIT_SYMBOLS,
    games=GAMES,
)


def csrf_token(request: Request) -> str:
    getter = request.scope.get("csrftoken")
    return str(getter()) if callable(getter) else ""


def render(request: Request, template: str, context: dict[str, Any], status: int = 200) -> Response:
    context = {"csrf": csrf_token(request), **context}
    return templates.TemplateResponse(request, template, context, status_code=status)
