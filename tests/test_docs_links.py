"""The README and the pages under docs/ (and bench/) link only to files that exist, and the
README opens with the two set-up commands."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = sorted([ROOT / "README.md", *(ROOT / "docs").rglob("*.md"), *(ROOT / "bench").glob("*.md")])
# [text](target) and ![alt](target), the target up to a space (a title) or the closing bracket.
LINK = re.compile(r"!?\[[^\]]*\]\(\s*(?:<([^>]+)>|([^)\s]+))(?:\s+\"[^\"]*\")?\s*\)", re.DOTALL)
FENCE = re.compile(r"^(```|~~~).*?^\1", re.DOTALL | re.MULTILINE)
CODE = re.compile(r"`[^`\n]*`")
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def relative_links(text: str) -> list[str]:
    """Every relative link target of a Markdown text, without its #anchor; code is skipped."""
    text = CODE.sub("", FENCE.sub("", text))
    targets = []
    for bracketed, bare in LINK.findall(text):
        target = bracketed or bare
        if SCHEME.match(target) or target.startswith("#"):
            continue
        targets.append(target.split("#", 1)[0])
    return targets


def test_the_scanner_finds_links_and_skips_code() -> None:
    text = (
        "See [a](docs/a.md#x), ![b](img/b.png), [c](https://example.org), [d](#here),\n"
        "`[e](not/a/link.md)` and [f](<g h.md>).\n```\n[i](in/code.md)\n```\n"
    )
    assert relative_links(text) == ["docs/a.md", "img/b.png", "g h.md"]


def test_pages_are_found() -> None:
    names = {p.relative_to(ROOT).as_posix() for p in PAGES}
    assert {"README.md", "docs/architecture.md", "docs/rules/README.md"} <= names


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_relative_link_resolves(page: Path) -> None:
    missing = [
        target
        for target in relative_links(page.read_text(encoding="utf-8"))
        if not (page.parent / target).exists()
    ]
    assert not missing, f"{page.relative_to(ROOT)} links to missing files: {missing}"


def test_the_readme_opens_with_the_two_commands() -> None:
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert lines[:5] == [
        "# Patience Hall",
        "",
        "```sh",
        "./scripts/serve.sh",
        "./scripts/test.sh",
    ]
    assert lines[5] == "```"
