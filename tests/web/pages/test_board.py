"""The board page and its HTMX fragments: what a move sends back, how refusals read, the deal
button, the auto-move preference, the player's games, and the page's weight.

Every response here also passes the hidden-card guard (tests/web/hidden.py).
"""

from __future__ import annotations

import gzip
import json
import re
import statistics
from html.parser import HTMLParser
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.engine import GAMES, Move, State, get_ruleset
from app.engine.cards import face
from app.web import i18n
from app.web.pages.board import CLOCK_FORMATS, clock_text, game_over_text
from app.web.pages.templating import templates
from tests.web.support import GAME_SLUGS, new_game, post

HX = {"HX-Request": "true"}
FRAGMENT_BUDGET = 2048  # bytes, uncompressed, for a typical one- or two-pile move
PAGE_BUDGET = 60 * 1024  # bytes, gzip, for the first load of a game page with its assets


class TopLevel(HTMLParser):
    """The ids and attributes of a fragment's top-level elements."""

    VOID = frozenset({"input", "br", "img", "meta", "link", "hr"})

    def __init__(self) -> None:
        super().__init__()
        self.depth = 0
        self.elements: list[dict[str, str | None]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self.depth == 0:
            self.elements.append({"tag": tag, **dict(attrs)})
        if tag not in self.VOID:
            self.depth += 1

    def handle_endtag(self, tag: str) -> None:
        if tag not in self.VOID:
            self.depth -= 1


def top_level(html: str) -> list[dict[str, str | None]]:
    parser = TopLevel()
    parser.feed(html)
    assert parser.depth == 0, "unbalanced markup"
    return parser.elements


def state_of(client: TestClient, game_id: str) -> dict[str, Any]:
    answer = client.get(f"/api/games/{game_id}")
    assert answer.status_code == 200
    data: dict[str, Any] = answer.json()
    return data


def play(client: TestClient, game_id: str, notation: str) -> Any:
    version = state_of(client, game_id)["version"]
    return post(client, f"/games/{game_id}/moves", {"move": notation, "version": str(version)})


def changed(before: dict[str, Any], after: dict[str, Any]) -> set[str]:
    return {p for p in before["piles"] if before["piles"][p] != after["piles"][p]}


def pick_move(legal: list[dict[str, Any]]) -> str:
    """A plain policy for walking a game: a card move if there is one, else the deal."""
    for m in legal:
        if m["from"] != "stock" and m["to"] != "stock":
            text = f"{m['from']}-{m['to']}"
            return text if m["count"] == 1 else f"{text}/{m['count']}"
    m = legal[0]
    return f"{m['from']}-{m['to']}" + (f"/{m['count']}" if m["count"] != 1 else "")


# -- the page ------------------------------------------------------------------------------


@pytest.mark.parametrize("slug", GAME_SLUGS)
def test_the_board_page_draws_every_pile_once(client: TestClient, slug: str) -> None:
    game_id = new_game(client, slug)
    page = client.get(f"/games/{game_id}")
    assert page.status_code == 200
    html = page.text
    for spec in GAMES[slug].layout.piles:
        assert html.count(f'id="pile-{spec.id}"') == 1, spec.id
        # Where the pile sits comes once, with the page, not with each fragment.
        assert f"#pile-{spec.id}{{grid-area:{spec.row + 1}/{spec.col + 1}}}" in html
    assert html.count('id="game-status"') == 1
    assert 'id="announce"' in html and 'aria-live="polite"' in html
    assert 'id="move-form"' in html and "/static/js/board/board.js" in html
    # Every card is named for screen readers; every pile says what it is.
    bodies = re.findall(r'<ol id="pile-[^>]*>(.*?)</ol>', html, re.S)
    cards = re.findall(r"<li\b[^>]*>", "".join(bodies))
    assert cards and all("aria-label=" in c for c in cards)
    assert all('aria-label="' in m for m in re.findall(r'<ol id="pile-[^>]*>', html)), (
        "a pile without a name"
    )
    # The legal moves ride on the status for the script to light up destinations, as data
    # (from, to, count), so the script never parses a move's notation.
    legal = re.search(r"data-moves='([^']*)'", html)
    assert legal is not None
    expected = {(m["from"], m["to"], m["count"]) for m in state_of(client, game_id)["legal_moves"]}
    assert {(f, t, n) for f, t, n, *_ in json.loads(legal[1])} == expected


def test_someone_elses_game_is_shown_but_not_playable(client: TestClient, api: TestClient) -> None:
    theirs = api.post("/api/games", json={"game": "corners", "deal": 5}).json()["id"]
    page = client.get(f"/games/{theirs}")
    assert page.status_code == 200
    assert 'id="move-form"' not in page.text and "data-play" not in page.text


def test_a_quadruple_interchange_board_shows_backs_but_never_their_cards(
    client: TestClient,
) -> None:
    game_id = new_game(client, "quadruple-interchange", 1)
    html = client.get(f"/games/{game_id}").text
    # Golden layout, deal 1: t1 is 5C (AC) 6H (KH) 7S (QC) 8S (2D) JC (TD) TS.
    t1 = re.search(r'<ol id="pile-t1"[^>]*>(.*?)</ol>', html, re.S)
    assert t1 is not None
    names = re.findall(r'aria-label="([^"]+)"', t1[1])
    assert names == [
        "5 of clubs", "face-down card", "6 of hearts", "face-down card", "7 of spades",
        "face-down card", "8 of spades", "face-down card", "jack of clubs", "face-down card",
        "10 of spades",
    ]  # fmt: skip
    assert 'aria-label="Stock, 87 cards"' in html


# -- fragments -----------------------------------------------------------------------------


@pytest.mark.parametrize("slug", GAME_SLUGS)
def test_a_move_answers_with_only_the_changed_piles_and_the_status(
    client: TestClient, slug: str
) -> None:
    game_id = new_game(client, slug)
    for _ in range(3):  # a few moves in a row, deals included where the policy picks them
        before = state_of(client, game_id)
        if not before["legal_moves"]:  # no move left, but the last one can be undone
            assert before["status"] == "playing" and before["can_undo"]
            break
        notation = pick_move(before["legal_moves"])
        answer = play(client, game_id, notation)
        assert answer.status_code == 200, answer.text
        after = state_of(client, game_id)
        elements = top_level(answer.text)
        piles = {str(e["id"])[5:] for e in elements if str(e["id"]).startswith("pile-")}
        if after["status"] != "playing":  # the end shows every card: the whole board comes
            assert piles == set(GAMES[slug].pile_ids)
            break
        assert piles == changed(before, after), notation
        others = {e["id"] for e in elements if not str(e["id"]).startswith("pile-")}
        assert others == {"game-status", "announce"}
        assert all(e.get("hx-swap-oob") for e in elements)
        assert "<html" not in answer.text.lower() and 'id="table"' not in answer.text
        assert "hx-request" in answer.headers["vary"].lower()
        assert f'data-version="{after["version"]}"' in answer.text


def test_undo_answers_with_the_piles_it_put_back(client: TestClient) -> None:
    game_id = new_game(client, "castles-end")
    assert play(client, game_id, "t2-f1").status_code == 200
    assert play(client, game_id, "t1-t5").status_code == 200
    before = state_of(client, game_id)
    answer = post(client, f"/games/{game_id}/undo", {})
    assert answer.status_code == 200
    after = state_of(client, game_id)
    elements = top_level(answer.text)
    assert {str(e["id"])[5:] for e in elements if str(e["id"]).startswith("pile-")} == changed(
        before, after
    )
    assert "Took back a move: 7♦ is back on pile t1." in answer.text


def test_the_announcement_names_the_cards_that_moved(client: TestClient) -> None:
    game_id = new_game(client, "corners", 1)  # golden: r5 is A♣, f1 K♣, stock top 9♣
    answer = play(client, game_id, "r5-f1")
    assert "Moved A♣ from reserve r5 to foundation f1. Reserve r5 was refilled with 9♣." in (
        answer.text
    )
    dealt = play(client, game_id, "stock-waste")
    assert "Dealt 5♣ to the waste." in dealt.text


def test_an_illegal_move_says_why_and_sends_the_whole_board(client: TestClient) -> None:
    game_id = new_game(client, "quadrangle", 1)
    answer = post(client, f"/games/{game_id}/moves", {"move": "t1-t2", "version": "0"})
    assert answer.status_code == 422
    ids = {str(e["id"]) for e in top_level(answer.text)}
    assert {f"pile-{p}" for p in GAMES["quadrangle"].pile_ids} <= ids
    assert '<span class="error">A♦ cannot go on 5♠' in answer.text


def test_a_stale_move_is_refused_with_the_current_board(client: TestClient) -> None:
    game_id = new_game(client, "castles-end", 1)
    assert play(client, game_id, "t2-f1").status_code == 200
    answer = post(client, f"/games/{game_id}/moves", {"move": "t1-f2", "version": "0"})
    assert answer.status_code == 409
    assert "The board has changed since you saw it" in answer.text
    assert 'data-version="1"' in answer.text
    assert answer.text.count('hx-swap-oob="true"') == len(GAMES["castles-end"].pile_ids) + 1


@pytest.mark.slow
def test_typical_move_fragments_stay_small(client: TestClient) -> None:
    """The design's bar: ≤ 2 KB for a typical one- or two-pile move, ≤ 15% of the page."""
    for slug in GAME_SLUGS:
        game_id = new_game(client, slug, 3)
        page = len(client.get(f"/games/{game_id}").content)
        sizes = []
        for _ in range(25):
            before = state_of(client, game_id)
            if before["status"] != "playing" or not before["legal_moves"]:
                break
            answer = play(client, game_id, pick_move(before["legal_moves"]))
            assert answer.status_code == 200
            if len(changed(before, state_of(client, game_id))) <= 2:
                sizes.append(len(answer.content))
        typical = statistics.median(sizes)
        assert typical <= FRAGMENT_BUDGET, (slug, typical)
        assert typical <= 0.15 * page, (slug, typical, page)


# -- the move form's other ways in -------------------------------------------------------


def test_the_deal_button_deals_and_then_redeals(client: TestClient) -> None:
    game_id = new_game(client, "corners", 1)
    for n in range(43):
        answer = post(client, f"/games/{game_id}/moves", {"move": "deal", "version": str(n)})
        assert answer.status_code == 200, answer.text
    assert state_of(client, game_id)["piles"]["stock"] == {"count": 0}
    redeal = post(client, f"/games/{game_id}/moves", {"move": "deal", "version": "43"})
    assert redeal.status_code == 200
    assert "Turned the waste over: 43 cards are back in the stock." in redeal.text
    after = state_of(client, game_id)
    assert after["piles"]["stock"] == {"count": 43} and after["redeals_left"] == 1


def test_the_deal_button_in_a_game_without_a_stock_is_refused(client: TestClient) -> None:
    game_id = new_game(client, "castles-end", 1)
    answer = post(client, f"/games/{game_id}/moves", {"move": "deal", "version": "0"})
    assert answer.status_code == 422


def test_without_javascript_the_board_says_what_happened(client: TestClient) -> None:
    game_id = new_game(client, "castles-end", 1)
    moved = post(client, f"/games/{game_id}/moves", {"move": "t2-f1", "version": "0"}, False)
    assert moved.status_code == 303
    page = client.get(f"/games/{game_id}").text
    assert '<span class="said">Moved A♣ from pile t2 to foundation f1.</span>' in page
    assert "<noscript>" in page and 'value="t1-f1"' not in page  # f1 now has a suit
    refused = post(
        client,
        f"/games/{game_id}/moves",
        {"from": "t1", "to": "t2", "count": "1", "version": "1"},
        False,
    )
    assert refused.status_code == 303
    page = client.get(f"/games/{game_id}").text
    assert '<span class="error">7♦ cannot go on J♦' in page
    # The message is shown once, not on every later visit.
    assert "cannot go on" not in client.get(f"/games/{game_id}").text


def test_the_no_javascript_move_list_names_the_cards(client: TestClient) -> None:
    game_id = new_game(client, "corners", 1)
    page = client.get(f"/games/{game_id}").text
    assert '<button type="submit" form="move-form" name="move" value="r5-f1" formnovalidate>' in (
        page
    )
    assert "A♣: r5 → f1" in page and "Deal from the stock" in page


# -- auto-move -----------------------------------------------------------------------------


def _quadrangle(piles: dict[str, tuple[int, ...]]) -> State:
    rules = get_ruleset("quadrangle")
    return State("quadrangle", tuple(piles.get(p, ()) for p in rules.pile_ids))


def test_auto_move_never_pulls_back_the_card_just_moved() -> None:
    rules = get_ruleset("quadrangle")
    five, six, seven = face(5, 3), face(6, 3), face(7, 3)  # spades
    # The player just put 6♠ on 7♠ in t3; 6♠ would also fit on 5♠ on the foundation.
    state = _quadrangle({"f1": (five,), "t3": (seven, six), "stock": (face(9, 0),)})
    legal = rules.legal_moves(state)
    assert Move("t3", "f1") in legal
    assert rules.auto_move(state, legal, keep="t3") is None
    assert rules.auto_move(state, legal, keep="t9") == Move("t3", "f1")


def test_auto_move_leaves_choices_to_the_player() -> None:
    rules = get_ruleset("quadrangle")
    # A base-rank card may start any empty foundation: the player chooses which.
    state = _quadrangle({"f1": (face(5, 3),), "t1": (face(5, 2),), "stock": (face(9, 0),)})
    assert rules.auto_move(state, rules.legal_moves(state), keep="t9") is None
    # Patriarchs: a card that fits both foundations of its suit (P6) is never routed.
    pat = get_ruleset("patriarchs")
    ups = [(face(1, s), *(face(r, s) for r in range(2, 7))) for s in range(4)]  # A..6
    downs = [tuple(face(r, s) for r in range(13, 7, -1)) for s in range(4)]  # K..8
    piles: dict[str, tuple[int, ...]] = dict.fromkeys(pat.pile_ids, ())
    piles.update({f"f{s + 1}": ups[s] for s in range(4)})
    piles.update({f"f{s + 5}": downs[s] for s in range(4)})
    piles["r1"] = (face(7, 0),)  # 7♣ fits on 6♣ and under 8♣
    state = State("patriarchs", tuple(piles[p] for p in pat.pile_ids))
    legal = pat.legal_moves(state)
    assert {Move("r1", "f1"), Move("r1", "f5")} <= set(legal)
    assert pat.auto_move(state, legal, keep="f9") is None
    # ... and it never takes a card off a foundation (the transfers of P5).
    assert all(m.source != "f1" for m in [pat.auto_move(state, legal, "x")] if m)


def test_auto_move_over_http_is_ordinary_moves_in_one_fragment(client: TestClient) -> None:
    client.cookies.set("ph_prefs", "auto")
    try:
        game_id = new_game(client, "corners", 3)
        before = state_of(client, game_id)
        answer = play(client, game_id, "r3-f3")
        assert answer.status_code == 200
        after = state_of(client, game_id)
        assert after["moves"] == 5 and after["version"] == 5
        piles = {
            str(e["id"])[5:] for e in top_level(answer.text) if str(e["id"]).startswith("pile-")
        }
        assert piles == changed(before, after)
        assert answer.text.count("Auto-moved") == 4
        # Undo takes back one move only and is not followed by any auto-move.
        assert post(client, f"/games/{game_id}/undo", {}).status_code in (200, 409)
    finally:
        client.cookies.delete("ph_prefs")


# -- preferences, my games, the end of a game ----------------------------------------------


def test_preferences_are_a_cookie_and_classes_on_the_page(client: TestClient) -> None:
    answer = post(client, "/prefs", {"four": "1", "large": "1", "back": "/my-games"}, htmx=False)
    assert answer.status_code == 303 and answer.headers["location"] == "/my-games"
    assert client.cookies["ph_prefs"] == "four.large"
    assert '<body class="pref-four pref-large"' in client.get("/").text
    for bad in ("//evil.example/", "/\\evil.example", "https://evil.example/"):
        answer = post(client, "/prefs", {"back": bad}, htmx=False)
        assert answer.headers["location"] == "/"
    assert client.cookies["ph_prefs"] in ("", '""')  # nothing chosen: all off


def test_my_games_lists_games_in_progress_and_finished(client: TestClient) -> None:
    playing = new_game(client, "patriarchs", 11)
    done = new_game(client, "corners", 12)
    assert post(client, f"/games/{done}/resign", {}).status_code == 200
    page = client.get("/my-games").text
    assert f'href="/games/{playing}">Resume</a>' in page
    assert f'href="/games/{done}/replay"' in page
    home = client.get("/").text
    assert f'href="/games/{playing}"' in home and "Carry on where you left off" in home


@pytest.mark.parametrize(
    ("lang", "column", "verb"),
    [
        ("en", "Deal", None),
        ("de", "Spiel Nr.", "Austeilen"),
        ("fr", "Donne", "Distribuer"),
        ("es", "Reparto", "Repartir"),
    ],
)
def test_my_games_heads_the_deal_column_with_the_noun(
    client: TestClient, lang: str, column: str, verb: str | None
) -> None:
    """The column of deal numbers is "the deal" (pgettext), not the verb of the Deal button."""
    new_game(client, "patriarchs", 11)
    done = new_game(client, "corners", 12)
    assert post(client, f"/games/{done}/resign", {}).status_code == 200
    page = client.get(f"/my-games?lang={lang}").text
    heads = re.findall(r"<th>([^<]*)</th>", page)
    assert heads.count(column) == 2, heads
    assert verb is None or verb not in heads
    # The buttons and action links of the tables never break inside a word on a phone.
    assert page.count('<td class="act">') == 2


def test_the_end_of_a_game_offers_what_next(client: TestClient) -> None:
    game_id = new_game(client, "quadrangle", 9)
    answer = post(client, f"/games/{game_id}/resign", {})
    assert answer.status_code == 200
    html = answer.text
    assert '<h2 id="summary-title">Game over</h2>' in html
    assert "Play this deal again" in html and "New rated game" in html
    assert 'href="/deal/quadrangle/9" data-share>Share this deal' in html
    # The game is over, so every card is shown again: the whole board comes back.
    assert html.count('hx-swap-oob="true"') == len(GAMES["quadrangle"].pile_ids) + 1


@pytest.mark.parametrize(
    ("lang", "one", "two"),
    [
        (
            "fr",
            "1 carte sur 52 a atteint les fondations en 2 coups.",
            "2 cartes sur 52 ont atteint les fondations en 2 coups.",
        ),
        (
            "de",
            "1 von 52 Karten kam auf die Fundamente (2 Züge).",
            "2 von 52 Karten kamen auf die Fundamente (2 Züge).",
        ),
        (
            "es",
            "1 de 52 cartas llegó a las fundaciones en 2 jugadas.",
            "2 de 52 cartas llegaron a las fundaciones en 2 jugadas.",
        ),
        (
            "en",
            "1 of 52 cards reached the foundations in 2 moves.",
            "2 of 52 cards reached the foundations in 2 moves.",
        ),
    ],
)
def test_the_end_of_a_lost_game_counts_the_cards_home_in_the_right_number(
    lang: str, one: str, two: str
) -> None:
    """ "1 cartes sur 52 ont atteint…" was a walk's find: the count home is a plural message."""
    with i18n.speaking(lang):
        moves = i18n.say_n("%(n)s move", "%(n)s moves", 2)
        assert game_over_text(1, 52, moves) == one
        assert game_over_text(2, 52, moves) == two
    with i18n.speaking("fr"):
        assert game_over_text(0, 104, "0 coup").startswith("0 carte sur 104 a atteint")


def test_a_racers_progress_counts_the_cards_home_in_the_right_number() -> None:
    racer = templates.env.get_template("components/racer.html").module.racer  # type: ignore[attr-defined]

    def label(n: int) -> str:
        r = {"player": "ann", "game": "g1", "moves": 3, "foundation_cards": n, "status": "lost"}
        found: list[str] = re.findall(r'aria-label="([^"]*)"', str(racer(r, 52, False, "ROOM")))
        return found[0]

    with i18n.speaking("fr"):
        assert label(1) == "ann : 1 carte sur 52 dans les fondations"
        assert label(2) == "ann : 2 cartes sur 52 dans les fondations"
    with i18n.speaking("de"):
        assert label(1) == "ann: 1 von 52 Karten auf den Fundamenten"


# -- pages around the board, assets, weight ------------------------------------------------


def test_home_offers_the_five_games_with_their_rules(client: TestClient) -> None:
    home = client.get("/").text
    for slug, rules in GAMES.items():
        assert f"<h2>{rules.name}</h2>" in home.replace("&#39;", "'")
        assert f'href="/rules/{slug}"' in home
        assert client.get(f"/rules/{slug}").status_code == 200


def test_every_asset_is_served_by_the_app(client: TestClient) -> None:
    game_id = new_game(client, "corners", 2)
    html = client.get(f"/games/{game_id}").text
    assets = re.findall(r'(?:src|href)="(/static/[^"]+)"', html)
    assert set(assets) >= {
        "/static/css/site.css",
        "/static/js/board/board.js",
        "/static/js/board/send.js",
        "/static/vendor/htmx-2.0.11.min.js",
    }
    for asset in [*assets, "/static/vendor/htmx-LICENSE.txt"]:
        assert client.get(asset).status_code == 200, asset
    assert not re.search(r'(?:src|href)="(?:https?:)?//', html), "an asset from elsewhere"


def test_the_first_load_of_a_game_page_is_light(client: TestClient) -> None:
    """HTML, CSS, the board script and htmx together, gzip-compressed, stay under 60 KB."""
    for slug in GAME_SLUGS:
        game_id = new_game(client, slug, 1)
        html = client.get(f"/games/{game_id}").content
        total = len(gzip.compress(html))
        for asset in re.findall(rb'(?:src|href)="(/static/[^"]+)"', html):
            total += len(gzip.compress(client.get(asset.decode()).content))
        assert total <= PAGE_BUDGET, (slug, total)


# -- moves in a player's words (replays) ----------------------------------------------------


def test_moves_in_a_players_words() -> None:
    from tests.engine.builders import position

    def said(state: State, notation: str) -> str:
        return get_ruleset(state.game).replay_words(state, [notation])[0]

    q = position("quadrangle", f1="2H", t1="AC 9C", t2="TC", waste="3H", stock="KS QS")
    assert said(q, "waste-f1") == "3♥ to the ♥ foundation"
    assert said(q, "t1-t2") == "9♣ onto 10♣"
    assert said(q, "t1-t3") == "9♣ to the empty pile t3"
    assert said(q, "stock-waste") == "Dealt Q♠"
    qi = position("quadruple-interchange", t1="(KH) 7S 6S 5S", t2="8S")
    assert said(qi, "t1-t2/3") == "7♠–5♠ onto 8♠"
    c = position("corners", f1="KC", f2="8D", f3="7H", f4="5S", r1="9D", waste="AC")
    assert said(c, "r1-f2") == "9♦ to the ♦ foundation"
    assert said(position("corners", waste="AC", redeals=0), "waste-stock/1") == (
        "Turned the waste over"
    )
    p = position("patriarchs", f2="AD 2D 3D 4D", f6="KD QD JD TD 9D 8D 7D 6D 5D")
    assert said(p, "f6-f2") == "5♦ from the ♦ K↓ foundation to the ♦ A↑ foundation"


def test_the_rules_index_and_its_links(client: TestClient) -> None:
    index = client.get("/rules")
    assert index.status_code == 200 and "Rules of the games" in index.text
    for slug in GAMES:
        page = client.get(f"/rules/{slug}").text
        assert 'href="README.md"' not in page and 'href="/rules"' in page
        assert client.get("/rules").status_code == 200
    assert 'href="/rules/corners"' in index.text


def test_the_deal_page_says_times_are_active_time(client: TestClient) -> None:
    page = client.get("/deal/corners/7").text
    assert "Times are active time" in page and "counts up to 2 minutes" in page


def test_the_clock_is_active_time_with_its_cap(client: TestClient) -> None:
    game_id = new_game(client, "castles-end", 5)
    answer = post(client, f"/games/{game_id}/moves", {"move": "t2-f1", "version": "0"})
    # The page's clock goes on from the count now and stops where the idle cap is reached.
    assert 'data-elapsed="0" data-running data-until="120"' in answer.text
    page = client.get(f"/games/{game_id}").text
    assert "each pause between two actions counts up to 2 minutes" in page
    assert state_of(client, game_id)["active_ms"] == 0


def test_a_watcher_gets_the_board_only_when_it_changed(client: TestClient, api: TestClient) -> None:
    game = api.post("/api/games", json={"game": "castles-end", "deal": 12}).json()
    url = f"/games/{game['id']}/board"
    same = client.get(f"{url}?version=0", headers=HX)
    assert same.status_code == 204
    moved = api.post(
        f"/api/games/{game['id']}/moves", json={"from": "t2", "to": "f1", "count": 1, "version": 0}
    )
    assert moved.status_code == 200, moved.text
    # The watcher's page asks every few seconds by an htmx trigger on the status, for the
    # version it shows; the owner's page never does.
    page = client.get(f"/games/{game['id']}").text
    assert f'hx-get="{url}?version=1" hx-trigger="every 4s"' in page
    own = new_game(client, "corners", 5)
    assert "every 4s" not in client.get(f"/games/{own}").text
    fresh = client.get(f"{url}?version=0", headers=HX)
    assert fresh.status_code == 200 and 'data-version="1"' in fresh.text
    assert f'hx-get="{url}?version=1" hx-trigger="every 4s"' in fresh.text
    assert fresh.text.count('hx-swap-oob="true"') == len(GAMES["castles-end"].pile_ids) + 1
    assert "hx-request" in fresh.headers["vary"].lower()
    assert client.get(f"{url}?version=1", headers=HX).status_code == 204
    # A finished game is not asked for again.
    api.post(f"/api/games/{game['id']}/resign", json={"version": 1})
    ended = client.get(f"{url}?version=1", headers=HX)
    assert ended.status_code == 200 and "every 4s" not in ended.text


def _deal_move(html: str) -> list[Any] | None:
    """What the status says the Deal button does now (the legal move marked "deal")."""
    moves = json.loads(html.split("data-moves='", 1)[1].split("'", 1)[0])
    marked = [m[:3] for m in moves if m[3:] == ["deal"]]
    assert len(marked) <= 1, marked
    return marked[0] if marked else None


def test_the_status_says_what_the_deal_button_does(client: TestClient) -> None:
    """A deal while the stock lasts, then the redeal of the whole waste: the service's choice,
    sent with the legal moves, so the page never decides it (it sends "deal")."""
    game_id = new_game(client, "corners", 5)
    assert _deal_move(client.get(f"/games/{game_id}").text) == ["stock", "waste", 1]
    answer = None
    for version in range(60):
        answer = post(client, f"/games/{game_id}/moves", {"move": "deal", "version": str(version)})
        assert answer.status_code == 200, answer.text
        if _deal_move(answer.text) != ["stock", "waste", 1]:
            break
    assert answer is not None
    waste = re.search(r'id="pile-waste"[^>]*data-count="(\d+)"', answer.text)
    assert waste is not None
    assert _deal_move(answer.text) == ["waste", "stock", int(waste[1])]
    # "deal" now turns the waste over: the stock is full again and deals once more.
    redealt = post(client, f"/games/{game_id}/moves", {"move": "deal", "version": str(version + 1)})
    assert redealt.status_code == 200 and _deal_move(redealt.text) == ["stock", "waste", 1]


@pytest.mark.parametrize(
    ("seconds", "shown"),
    [(0, "0:00"), (59, "0:59"), (61, "1:01"), (3599, "59:59"), (3600, "1:00:00"), (3725, "1:02:05"),
     (36000 + 61, "10:01:01")],
)  # fmt: skip
def test_the_clock_reads_as_the_page_reads_its_formats(seconds: int, shown: str) -> None:
    """The server's clock face and the one board.js runs between answers come from the same
    patterns (CLOCK_FORMATS: m:ss under an hour, h:mm:ss from an hour)."""
    assert clock_text(seconds) == shown
    assert CLOCK_FORMATS == ("m:ss", "h:mm:ss")
