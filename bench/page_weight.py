"""How heavy the board is: the first load of a game page, and the fragments moves answer with.

    .venv/bin/python bench/page_weight.py            # measure, print, and record in RESULTS.md
    .venv/bin/python bench/page_weight.py --print    # measure and print only

The app runs in-process (Starlette's test client) on a fresh SQLite database, with its real
middleware, so the bytes counted are the bytes the server sends:

- **First load**: the game page's HTML plus every asset it links (CSS, the board script, htmx,
  the icon), each fetched with ``Accept-Encoding: gzip`` and counted as transferred (compressed
  by the app's GZip middleware; bodies under its 512-byte threshold go uncompressed).
- **Move fragments**: the HTMX answers to moves, uncompressed (the design's bar is on the
  uncompressed size), over seeded random play of several deals per game: a card move most of
  the time, otherwise a deal from the stock. "Typical" moves are those that change one or two
  piles (the design's "one- or two-pile move"); bigger ones (refills, Corners redeals) are
  listed apart.

The section "Board weight (bench/page_weight.py)" of bench/RESULTS.md is replaced if present,
else appended; nothing else in the file is touched.
"""

from __future__ import annotations

import argparse
import gzip
import os
import platform
import random
import re
import statistics
import sys
import tempfile
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fastapi.testclient import TestClient

from app.config import Settings
from app.engine import GAMES
from app.main import create_app
from tests.databases import migrate

RESULTS = Path(__file__).resolve().parent / "RESULTS.md"
HEADING = "## Board weight (bench/page_weight.py)"
DATE = datetime.now(UTC).date().isoformat()  # the day of the run, as recorded
PAGE_BUDGET = 60 * 1024
FRAGMENT_BUDGET = 2048
HX = {"HX-Request": "true"}
Asset = tuple[str, int, int]  # path, body bytes, bytes sent


@dataclass
class GameWeight:
    name: str
    html: int = 0
    html_gz: int = 0
    assets_gz: int = 0
    typical: list[int] = field(default_factory=list)  # fragments of 1–2-pile moves
    typical_gz: list[int] = field(default_factory=list)
    larger: list[int] = field(default_factory=list)  # fragments of moves changing 3+ piles
    deals: int = 0

    @property
    def first_load(self) -> int:
        return self.html_gz + self.assets_gz


def transferred(client: TestClient, url: str) -> tuple[int, int]:
    """(bytes of the body, bytes sent over the wire with gzip accepted)."""
    with client.stream("GET", url, headers={"accept-encoding": "gzip"}) as answer:
        assert answer.status_code == 200, url
        raw = b"".join(answer.iter_raw())
        gzipped = answer.headers.get("content-encoding") == "gzip"
    body = gzip.decompress(raw) if gzipped else raw
    return len(body), len(raw)


_TOKEN: dict[int, str] = {}


def csrf(client: TestClient) -> str:
    """The session's CSRF token, read from a page's form as a browser gets it."""
    if id(client) not in _TOKEN:
        found = re.search(r'name="csrftoken" value="([^"]+)"', client.get("/account").text)
        assert found, "no CSRF token on the account page"
        _TOKEN[id(client)] = found.group(1)
    return _TOKEN[id(client)]


def start(client: TestClient, slug: str, deal: int) -> str:
    answer = client.post(
        "/games",
        data={"game": slug, "deal": str(deal), "csrftoken": csrf(client)},
        follow_redirects=False,
    )
    assert answer.status_code == 303, answer.text
    return str(answer.headers["location"])


def play(client: TestClient, where: str, rng: random.Random, moves: int, out: GameWeight) -> None:
    for _ in range(moves):
        state = client.get(f"/api{where}").json()
        if state["status"] != "playing" or not state["legal_moves"]:  # over, or no move left
            return
        legal = state["legal_moves"]
        cards = [m for m in legal if m["from"] != "stock" and m["to"] != "stock"]
        pool = cards if cards and rng.random() < 0.8 else legal
        m = rng.choice(pool)
        data = {
            "from": m["from"],
            "to": m["to"],
            "count": str(m["count"]),
            "version": str(state["version"]),
            "csrftoken": csrf(client),
        }
        answer = client.post(f"{where}/moves", data=data, headers=HX)
        assert answer.status_code == 200, answer.text
        after = client.get(f"/api{where}").json()
        if after["status"] != "playing":
            return  # the last move of a game sends the whole board, every card shown
        piles = len(re.findall(r'<ol id="pile-', answer.text))
        size = len(answer.content)
        if piles <= 2:
            out.typical.append(size)
            out.typical_gz.append(len(gzip.compress(answer.content)))
        else:
            out.larger.append(size)


def measure(deals: int, moves: int, seed: int) -> tuple[list[GameWeight], list[Asset]]:
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{tmp}/weight.db"
        migrate(url)
        # Bytes, not limits, are measured here: its client plays faster than a person.
        app = create_app(Settings(app_env="test", database_url=url, rate_limits_enabled=False))
        with TestClient(app) as client:
            for slug, rules in GAMES.items():
                out = GameWeight(rules.name)
                where = start(client, slug, 1)
                out.html, out.html_gz = transferred(client, where)
                page = client.get(where).text
                assets = sorted(set(re.findall(r'(?:src|href)="(/static/[^"]+)"', page)))
                out.assets_gz = sum(transferred(client, a)[1] for a in assets)
                rng = random.Random(seed)
                # Castle's End deals often die within a few moves: play more of them, until
                # each game has as many typical moves as the others would get from ``deals``.
                deal = 0
                while deal < deals or (len(out.typical) < deals * moves // 2 and deal < 20 * deals):
                    deal += 1
                    play(client, start(client, slug, deal), rng, moves, out)
                out.deals = deal
                results.append(out)
            asset_rows = [(a, *transferred(client, a)) for a in assets]
        app.state.services.engine.dispose()
    return results, asset_rows


def pct(values: list[int], q: float) -> int:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def kb(n: float) -> str:
    return f"{n / 1024:.1f} KB"


def machine() -> str:
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (
        f'`nproc` {os.cpu_count()}; CPU "{cpu}"; {platform.system()} {platform.release()}; '
        f"Python {platform.python_version()} ({platform.python_implementation()})"
    )


def report(
    results: list[GameWeight], assets: list[Asset], deals: int, moves: int, seed: int
) -> str:
    lines = [
        HEADING,
        "",
        f"- **Date:** {DATE}",
        f"- **Machine:** {machine()}. Sizes do not depend on the machine.",
        f"- **Command:** `.venv/bin/python bench/page_weight.py` (defaults: `--deals {deals} "
        f"--moves {moves} --seed {seed}`)",
        "- **How:** the app in-process with its real middleware on a fresh SQLite database. "
        "First load = the game page's HTML and every asset it links, each as transferred with "
        "`Accept-Encoding: gzip`. Fragments = HTMX answers to moves, uncompressed, over seeded "
        f"random play ({deals} deals per game, more for Castle's End whose deals end early; up to "
        f"{moves} moves each: a card move 80% of the time when there is one, otherwise any legal "
        "move, deals included); a typical move is one that changes one or two piles.",
        "",
        "### First load of a game page (target ≤ 60 KB compressed, all assets from the app)",
        "",
        "| Asset | Bytes | Sent (gzip) |",
        "| --- | ---: | ---: |",
    ]
    for name, body, sent in assets:
        lines.append(f"| `{name}` | {body:,} | {sent:,} |")
    lines += [
        "",
        "| Game | Page HTML | HTML sent (gzip) | Assets sent | First load | Target | Met |",
        "| --- | ---: | ---: | ---: | ---: | ---: | :---: |",
    ]
    for r in results:
        met = "yes" if r.first_load <= PAGE_BUDGET else "**no**"
        lines.append(
            f"| {r.name} | {r.html:,} | {r.html_gz:,} | {r.assets_gz:,} | "
            f"{r.first_load:,} ({kb(r.first_load)}) | ≤ 60 KB | {met} |"
        )
    lines += [
        "",
        "### Move fragments (target ≤ 2 KB uncompressed for a typical move, ≤ 15% of the page)",
        "",
        "| Game | Deals | Typical moves | Median | p90 | Max | ≤ 2 KB | Median gzip | % of page "
        "| 3+-pile moves (median) | Met |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | :---: |",
    ]
    for r in results:
        median = statistics.median(r.typical)
        under = sum(s <= FRAGMENT_BUDGET for s in r.typical) / len(r.typical)
        share = median / r.html
        met = "yes" if median <= FRAGMENT_BUDGET and share <= 0.15 else "**no**"
        larger = f"{len(r.larger)} ({statistics.median(r.larger):,.0f})" if r.larger else "0"
        lines.append(
            f"| {r.name} | {r.deals} | {len(r.typical)} | {median:,.0f} | "
            f"{pct(r.typical, 0.9):,} | {max(r.typical):,} | {under:.0%} | "
            f"{statistics.median(r.typical_gz):,.0f} | {share:.1%} | {larger} | {met} |"
        )
    lines += [
        "",
        "Sizes in bytes. A fragment holds only the piles that changed (out-of-band swaps: a "
        "squared pile is its top card and a count, a fanned pile every card), the status (with "
        "the legal moves for highlighting) and the announcement. The longest fragments are "
        "Quadruple Interchange moves between two deep fanned piles, the widest status is Castle's "
        "End's before the base is chosen (40 legal moves). A refused move and the last move of a "
        "game answer with the whole board instead, and are not counted here.",
        "",
    ]
    return "\n".join(lines)


def record(section: str) -> None:
    text = RESULTS.read_text(encoding="utf-8") if RESULTS.exists() else "# Benchmark results\n"
    start = text.find(HEADING)
    if start >= 0:
        rest = text.find("\n## ", start + len(HEADING))
        text = text[:start] + section + ("" if rest < 0 else text[rest + 1 :])
    else:
        text = text.rstrip("\n") + "\n\n" + section
    RESULTS.write_text(text, encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--deals", type=int, default=5)
    parser.add_argument("--moves", type=int, default=40)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--print", action="store_true", help="do not write RESULTS.md")
    args = parser.parse_args()
    results, assets = measure(args.deals, args.moves, args.seed)
    section = report(results, assets, args.deals, args.moves, args.seed)
    print(section)
    if not args.print:
        record(section)
        print(f"recorded in {RESULTS}")


if __name__ == "__main__":
    main()
