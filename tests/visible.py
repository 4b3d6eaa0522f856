"""The text of a page a player sees or hears: text outside script, style, code and kbd, and
the attributes that are read out or shown (titles, labels, confirmations). The language tests
read pages with it, and the catalog check reads templates with it."""

from __future__ import annotations

from html.parser import HTMLParser

ATTRIBUTES = ("title", "aria-label", "placeholder", "alt", "hx-confirm", "data-confirm")
_HIDDEN = ("script", "style", "code", "kbd")


class Visible(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _HIDDEN:
            self._skip += 1
        self.parts += [value for name, value in attrs if name in ATTRIBUTES and value]

    def handle_endtag(self, tag: str) -> None:
        if tag in _HIDDEN:
            self._skip -= 1

    def handle_data(self, data: str) -> None:
        if not self._skip:
            self.parts.append(data)


def visible_parts(html: str) -> list[str]:
    parser = Visible()
    parser.feed(html)
    parser.close()
    return parser.parts
