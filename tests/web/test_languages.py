"""Languages (contract v3, "Languages"; issue 25): every page in English, German, French and
Spanish, chosen by the account, the ``lang`` cookie or ``Accept-Language``; the engine's
refusals and move words in each; API error codes unchanged with their messages translated."""

from __future__ import annotations

import html as markup
import json
import re
from contextlib import closing
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from babel.messages.pofile import read_po
from fastapi import FastAPI
from fastapi.testclient import TestClient

from app.cli import main
from app.config import Settings
from app.db.models import QueuedRacer
from app.engine import GAMES, IllegalMove, Move, Words, dumps, get_ruleset
from app.services.hint_views import HintView
from app.services.solver_jobs import hint_job
from app.web.http.https import NeedsHttps
from app.web.i18n import LANGS, LOCALE_DIR, accept_language, speaking
from app.web.words import card_label, card_name, hint_message, say_words
from tests.visible import visible_parts
from tests.web.competition_support import GAME, ensure_fresh
from tests.web.support import csrf, new_game, post

TRANSLATED = ("de", "fr", "es")
GAME_NAMES = [rules.name for rules in GAMES.values()]
# Words the pages show that are the same in every language: the brand, the games' names (proper
# names), notation and key names.
KEEP = ["Patience Hall", *GAME_NAMES, "JSON", "UTC", "JavaScript", "Idempotency-Key"]
# Other programs' games, named on the rules pages, and the Wilson score interval.
KEEP += ["Castles End", "Chessboard", "Interchange", "Wilson"]
# Words that are English and also the language's own (French "but" is a goal, "suit" follows):
# the check cannot tell them apart, so they do not count as English left over.
FALSE_FRIENDS = {
    "de": frozenset(),
    "fr": frozenset({"but", "change", "chose", "part", "places", "second", "suit", "type"}),
    "es": frozenset(),
}


def visible_text(html: str) -> str:
    return " ".join(visible_parts(html))


def _words(text: str) -> set[str]:
    """The words of three letters or more that stand alone: not the letters inside a name or an
    id that has digits or underscores (a test's player ``Sec_b2ace562eb`` on the home page is
    not the English word "ace")."""
    return {
        w.lower()
        for w in re.findall(r"(?<!\w)[A-Za-zÀ-ÿ]{3,}(?!\w)", re.sub(r"%\(\w+\)s", " ", text))
    }


@cache
def english_only(lang: str) -> frozenset[str]:
    """The words of the English messages that the language's own messages never use: if one
    shows on a page in that language, an English message slipped through."""
    with (LOCALE_DIR / lang / "LC_MESSAGES" / "messages.po").open("rb") as f:
        catalog = read_po(f, locale=lang)
    english: set[str] = set()
    translated: set[str] = set()
    for message in catalog:
        if not message.id:
            continue
        ids = message.id if isinstance(message.id, tuple) else (message.id,)
        strings = message.string if isinstance(message.string, tuple) else (message.string,)
        for text in ids:
            english |= _words(re.sub(r"<[^>]+>", " ", str(text)))
        for said in strings:
            translated |= _words(re.sub(r"<[^>]+>", " ", str(said)))
    return frozenset(english - translated)


def english_left(html: str, lang: str, also: tuple[str, ...] = ()) -> set[str]:
    text = re.sub(r"(?:https?:/)?/[\w./?=&%-]*", " ", visible_text(html))  # addresses
    for kept in (*KEEP, *also):
        text = text.replace(kept, " ")
    return _words(text) & english_only(lang) - FALSE_FRIENDS[lang]


def _finished_game(client: TestClient) -> str:
    game_id = new_game(client, "corners", 11)
    assert post(client, f"/games/{game_id}/resign", {}).status_code == 200
    return game_id


def _pages(client: TestClient) -> dict[str, str]:
    """Every kind of page and fragment a player meets, as this client gets it."""
    playing = new_game(client, "castles-end", 3)
    finished = _finished_game(client)
    me = client.get("/account").text.split("<h1>", 1)[1].split("</h1>", 1)[0]
    name = re.sub(r"<[^>]+>", "", me).split()[-1]
    room = client.post(
        "/rooms", data={"game": "corners", "csrftoken": csrf(client)}, follow_redirects=False
    )
    assert room.status_code == 303, room.text
    pages = {
        "/": "",
        "/leaderboard": "",
        "/leaderboard?period=7d": "",
        "/my-games": "",
        "/account": "",
        f"/games/{playing}": "",
        f"/games/{finished}": "",
        f"/games/{finished}/replay": "",
        "/deal/corners/11": "",
        "/deal/castles-end/2": "",
        f"/players/{name}": "",
        room.headers["location"]: "",
        "/rules": "",
        **{f"/rules/{slug}": "" for slug in GAMES},
        "/no/such/page": "",
    }
    for path in pages:
        answer = client.get(path)
        assert answer.status_code in (200, 404), (path, answer.status_code)
        pages[path] = answer.text
    # Fragments: a move, a refusal, an undo, a hint's refusal in a finished game.
    pages["move"] = post(
        client, f"/games/{playing}/moves", {"from": "t1", "to": "f1", "version": "0"}
    ).text
    pages["refusal"] = post(
        client, f"/games/{playing}/moves", {"from": "t1", "to": "t2", "version": "1"}
    ).text
    pages["undo"] = post(client, f"/games/{playing}/undo", {"version": "1"}).text
    return pages


@pytest.mark.parametrize("lang", TRANSLATED)
def test_every_page_speaks_the_language_with_no_english_left(client: TestClient, lang: str) -> None:
    client.cookies.set("lang", lang)
    for path, html in _pages(client).items():
        if (
            path.startswith("/rules")
            and not Path(
                f"docs/rules/{path.rsplit('/', 1)[-1] if path != '/rules' else 'README'}.{lang}.md"
            ).exists()
        ):
            continue  # checked by test_rule_pages_exist_in_every_language
        left = english_left(html, lang)
        assert left == set(), f"{lang} {path}: English words left: {sorted(left)}"
        if path.startswith("/"):
            assert f'<html lang="{lang}">' in html, path


def test_the_check_finds_english_when_there_is_some(client: TestClient) -> None:
    """The check above can fail: an English page, checked as German, is full of English."""
    html = client.get("/").text
    assert len(english_left(html, "de")) > 20


def test_accept_language_chooses_else_english(client: TestClient) -> None:
    def lang_of(header: str) -> str:
        answer = client.get("/", headers={"Accept-Language": header})
        assert answer.headers["content-language"] == answer.text.split('<html lang="', 1)[1][:2]
        return str(answer.headers["content-language"])

    assert lang_of("de-DE,de;q=0.9,en;q=0.8") == "de"
    assert lang_of("fr-CA") == "fr"
    assert lang_of("ja, es;q=0.5, fr;q=0.4") == "es"
    assert lang_of("ja, zh;q=0.9") == "en"
    assert lang_of("") == "en"
    assert accept_language("pt-BR, fr;q=0") is None


def test_the_picker_stores_a_cookie_and_wins_over_accept_language(client: TestClient) -> None:
    home = client.get("/").text
    for lang in LANGS:  # on every page: a button per language, and alternates for search engines
        assert f'name="lang" value="{lang}"' in home
        assert f'<link rel="alternate" hreflang="{lang}" href="/?lang={lang}">' in home
    chosen = client.post(
        "/lang",
        data={"lang": "fr", "back": "/leaderboard?period=7d", "csrftoken": csrf(client)},
        follow_redirects=False,
    )
    assert chosen.status_code == 303 and chosen.headers["location"] == "/leaderboard?period=7d"
    assert client.cookies["lang"] == "fr"
    page = client.get("/leaderboard?period=7d", headers={"Accept-Language": "de"}).text
    assert '<html lang="fr">' in page and "Classement" in page and "7 derniers jours" in page
    # ?lang= (the alternates' links) shows one page in another language without storing it.
    assert '<html lang="es">' in client.get("/?lang=es").text
    assert client.cookies["lang"] == "fr"
    # Choosing on such a page comes back to it without its ?lang=, which would outrank the choice.
    again = post(client, "/lang", {"lang": "de", "back": "/leaderboard?lang=es&period=7d"})
    assert again.headers["location"] == "/leaderboard?period=7d"
    assert '<html lang="de">' in client.get(again.headers["location"]).text
    alone = post(client, "/lang", {"lang": "fr", "back": "/?lang=es"})
    assert alone.headers["location"] == "/"
    refused = client.post(
        "/lang", data={"lang": "xx", "csrftoken": csrf(client)}, follow_redirects=False
    )
    assert refused.status_code == 422
    off_site = client.post(
        "/lang",
        data={"lang": "de", "back": "//evil.example/", "csrftoken": csrf(client)},
        follow_redirects=False,
    )
    assert off_site.headers["location"] == "/"


def test_a_players_language_is_kept_on_the_account(client: TestClient) -> None:
    game_id = new_game(client, "corners", 5)  # now the browser has a player
    assert post(client, "/lang", {"lang": "es", "back": f"/games/{game_id}"}).status_code == 303
    assert "lang-es" in client.cookies["ph_prefs"]
    # Another device of this session: no cookies of its own, a German browser. The account wins.
    client.cookies.delete("lang")
    client.cookies.delete("ph_prefs")
    board = client.get(f"/games/{game_id}", headers={"Accept-Language": "de"}).text
    assert '<html lang="es">' in board and "Deshacer" in board
    # Other preferences keep the language, and the language keeps them.
    assert post(client, "/prefs", {"theme": "dark"}).status_code == 204
    assert '<html lang="es">' in client.get("/").text
    assert post(client, "/lang", {"lang": "de"}).status_code == 303
    assert "theme-dark" in client.get("/").text


def test_api_error_codes_stay_and_messages_follow_the_language(api: TestClient) -> None:
    created = api.post("/api/games", json={"game": "castles-end", "deal": 3})
    game = created.json()
    move = {"from": "t1", "to": "t2", "count": 1, "version": game["version"]}
    said = {}
    for lang in LANGS:
        answer = api.post(
            f"/api/games/{game['id']}/moves", json=move, headers={"Accept-Language": lang}
        )
        assert answer.status_code == 422
        error = answer.json()["error"]
        assert error["code"] == "illegal_move"
        said[lang] = error["message"]
        missing = api.get("/api/games/nosuchgame", headers={"Accept-Language": lang}).json()
        assert missing["error"]["code"] == "not_found"
        said[f"404-{lang}"] = missing["error"]["message"]
    assert said["en"].startswith("First choose the base")
    assert said["de"].startswith("Wähle zuerst die Basis")
    assert said["fr"].startswith("Choisissez d’abord la base")
    assert said["es"].startswith("Elige primero la base")
    assert said["404-en"] == "There is no game with that id."
    assert said["404-de"] == "Es gibt keine Partie mit dieser ID."


def _refusals() -> dict[str, IllegalMove]:
    """One refusal of every kind the five games give, from every pile to every pile of a few
    deals and a few steps into them."""
    found: dict[str, IllegalMove] = {}
    for rules in GAMES.values():
        for number in (1, 2, 3):
            state = rules.deal(number)
            for _ in range(4):
                for src in rules.pile_ids:
                    for dst in rules.pile_ids:
                        for count in (1, 2, 3, 99):
                            try:
                                rules.step(state, Move(src, dst, count))
                            except IllegalMove as exc:
                                found.setdefault(exc.code, exc)
                legal = rules.legal_moves(state)
                if not legal:
                    break
                state = rules.apply(state, legal[-1])
    return found


def test_illegal_move_reasons_are_codes_and_say_themselves_in_each_language() -> None:
    refusals = _refusals()
    assert len(refusals) >= 15, sorted(refusals)
    for code, exc in refusals.items():
        with speaking("en"):
            english = say_words(exc.words)
        assert english == str(exc), code  # the web's English is the engine's own message
        for lang in TRANSLATED:
            with speaking(lang):
                said = say_words(exc.words)
            assert said != english, (lang, code)
            assert "%(" not in said, (lang, code)
            assert not english_left(said, lang), (lang, code, said)


def test_cards_are_named_as_each_language_writes_them() -> None:
    jack, queen, king, ace = 10, 11, 12, 0  # of clubs (faces 0…12)
    expected = {
        "en": ("J♣", "Q♣", "K♣", "A♣", "queen of clubs"),
        "de": ("B♣", "D♣", "K♣", "A♣", "Kreuz Dame"),
        "fr": ("V♣", "D♣", "R♣", "A♣", "dame de trèfle"),
        "es": ("S♣", "C♣", "R♣", "A♣", "caballo de tréboles"),
    }
    for lang, (j, q, k, a, spoken) in expected.items():
        with speaking(lang):
            assert (card_label(jack), card_label(queen), card_label(king), card_label(ace)) == (
                j,
                q,
                k,
                a,
            )
            assert card_name(queen) == spoken


def test_move_words_in_each_language() -> None:
    rules = get_ruleset("castles-end")
    start = rules.deal(3)
    step = rules.step(start, Move("t1", "f1"))
    said = {}
    for lang in LANGS:
        with speaking(lang):
            said[lang] = " ".join(say_words(w) for w in rules.step_words(step))
    assert said["en"] == rules.describe(step)
    assert said["en"].startswith("Moved J♠ from pile t1 to foundation f1")
    assert said["de"].startswith("B♠ von Stapel t1 nach Fundament f1 gelegt")
    assert said["fr"].startswith("Déplacement : V♠ de la pile t1 vers la fondation f1")
    assert said["es"].startswith("Movida: S♠ desde la pila t1 a la fundación f1")


@pytest.mark.parametrize(
    ("lang", "one", "two"),
    [
        ("en", "1 move", "2 moves"),
        ("de", "1 Zug", "2 Züge"),
        ("fr", "1 coup", "2 coups"),
        ("es", "1 jugada", "2 jugadas"),
    ],
)
def test_plural_forms(client: TestClient, lang: str, one: str, two: str) -> None:
    from app.web.i18n import say_n

    with speaking(lang):
        assert say_n("%(n)s move", "%(n)s moves", 1) == one
        assert say_n("%(n)s move", "%(n)s moves", 2) == two
        if lang == "fr":  # French counts 0 as singular
            assert say_n("%(n)s move", "%(n)s moves", 0) == "0 coup"
    # On a page: the home page's games in progress say how many moves each has had.
    client.cookies.set("lang", lang)
    game_id = new_game(client, "castles-end", 3)
    none = "0 coup" if lang == "fr" else two.replace("2", "0", 1)  # French: 0 is singular
    assert f"— {none}</li>" in client.get("/").text
    post(client, f"/games/{game_id}/moves", {"from": "t1", "to": "f1", "version": "0"})
    assert f"— {one}</li>" in client.get("/").text


def test_numbers_and_durations_follow_the_locale() -> None:
    from app.web.i18n import decimal, duration, percent, seconds

    with speaking("de"):
        assert seconds(12_345) == "12,3\u00a0s"
        assert percent(0.456, 1) == "45,6\u00a0%"
        assert duration(120) == "2 Minuten"
        assert decimal(1234.5, 1) == "1.234,5"
    with speaking("en"):
        assert seconds(12_345) == "12.3\u00a0s"
        assert duration(90) == "90 seconds"
    with speaking("fr"):
        assert duration(60) == "1 minute"


@pytest.mark.parametrize("lang", TRANSLATED)
def test_rule_pages_exist_in_every_language(client: TestClient, lang: str) -> None:
    for slug in ["README", *GAMES]:
        assert Path(f"docs/rules/{slug}.{lang}.md").is_file(), f"docs/rules/{slug}.{lang}.md"
    client.cookies.set("lang", lang)
    page = client.get("/rules/castles-end").text
    english = client.get("/rules/castles-end?lang=en").text
    assert visible_text(page) != visible_text(english)
    assert not english_left(page, lang)


def test_the_scripts_words_are_in_the_catalogs(client: TestClient) -> None:
    """Every ``w("…")`` of the browser scripts is a message of the catalogs, and every page
    carries the scripts' words in its language."""
    from app.web.pages.jswords import JS_MESSAGES

    said: set[str] = set()
    for script in Path("static/js").rglob("*.js"):
        text = script.read_text()
        said |= {
            re.sub(r'"\s*\+?\s*"', "", m) for m in re.findall(r'\bw\(\s*"((?:[^"\\]|\\.)*)"', text)
        }
    assert said, "no script says anything through w()"
    assert said <= set(JS_MESSAGES), sorted(said - set(JS_MESSAGES))
    client.cookies.set("lang", "de")
    page = client.get("/").text
    words = json.loads(
        markup.unescape(page.split('<meta name="ph-words" content=\'', 1)[1].split("'>")[0])
    )
    assert words["Put back."] == "Zurückgelegt."
    assert words["Go! The race is on."] == "Los! Das Rennen läuft."
    client.cookies.set("lang", "en")
    assert "<meta name=\"ph-words\" content='{}'>" in client.get("/").text


def test_a_winnable_deal_of_an_unknown_game_is_refused_in_the_players_language(
    client: TestClient,
) -> None:
    """The form's game is free text: the solver's refusal of a game it does not know keeps
    the engine's words, so the player reads it in their language, not in English."""
    said = {}
    for lang in LANGS:
        client.cookies.set("lang", lang)
        page = post(client, "/games", {"game": "no-such-game", "winnable": "1"}, htmx=False)
        assert page.status_code == 422, page.text
        said[lang] = visible_text(page.text)
    assert "There is no game called 'no-such-game'." in said["en"]
    assert "Es gibt kein Spiel namens 'no-such-game'." in said["de"]
    for lang in TRANSLATED:
        assert "There is no game" not in said[lang], (lang, said[lang])
        assert not english_left(said[lang], lang, also=("no-such-game",)), (lang, said[lang])


# -- the competition pages, the HTTPS page, hint estimates and validation messages -----------


def _competition_pages(
    app: FastAPI, settings: Settings, capsys: pytest.CaptureFixture[str], lang: str
) -> dict[str, str]:
    """Every competition page as players of ``lang`` get it: the daily challenge (before and
    after a game of it), an event (joined, with standings), the race queue (waiting, and not
    in it), a rated race's room and the race leaderboard."""
    ensure_fresh(app, 4)
    starts = datetime.now(UTC) - timedelta(minutes=1)
    args = ["event", "create", "--game", GAME, "--starts", starts.isoformat(), "--minutes", "60"]
    assert main(args, settings) == 0
    event = int(capsys.readouterr().out.split()[1].rstrip(":"))
    pages: dict[str, str] = {}
    addresses = ("192.0.2.31", "198.51.100.32", "203.0.113.33")
    # Not entered (``with TestClient``): that runs the app's lifespan again, and its end would
    # close the services the test's own client still uses.
    a, b, c = (TestClient(app, base_url="http://testserver", client=(ip, 1)) for ip in addresses)
    with closing(a), closing(b), closing(c):
        for browser in (a, b, c):
            browser.cookies.set("lang", lang)
        pages["challenge"] = a.get(f"/daily/{GAME}/challenge").text
        started = post(a, f"/daily/{GAME}/challenge", {}, htmx=False)
        assert started.status_code == 303, started.text
        pages["challenge, played"] = a.get(f"/daily/{GAME}/challenge").text
        assert post(b, f"/events/{event}/join", {}, htmx=False).status_code == 303
        assert post(b, f"/events/{event}/next", {}, htmx=False).status_code == 303
        pages["event"] = b.get(f"/events/{event}").text
        pages["queue, not in it"] = c.get("/races/queue").text
        assert post(c, "/races/queue", {"game": GAME}, htmx=False).status_code == 303
        pages["queue, waiting"] = c.get("/races/queue").text
        pages["queue, polled"] = c.get("/races/queue", headers={"HX-Request": "true"}).text
        formed = post(a, "/races/queue", {"game": GAME}, htmx=False)
        assert formed.headers["location"].startswith("/rooms/"), formed.text
        pages["rated room"] = c.get(formed.headers["location"]).text
        pages["race leaderboard"] = c.get(f"/leaderboard/races/{GAME}").text
    return pages


@pytest.mark.parametrize("lang", TRANSLATED)
def test_the_competition_pages_speak_the_language_with_no_english_left(
    app: FastAPI,
    settings: Settings,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    lang: str,
) -> None:
    monkeypatch.setattr(app.state.services.race_queue, "wait_s", 0.0)  # a race forms at once
    with app.state.services.sessions.begin() as db:  # earlier tests' queue is not ours
        db.query(QueuedRacer).delete()
    pages = _competition_pages(app, settings, capsys, lang)
    assert (
        "queue-waiting" in pages["queue, waiting"]
        and 'class="share rated-race"' in (pages["rated room"])
    )
    assert 'id="standings"' in pages["challenge, played"]
    for name, html in pages.items():
        left = english_left(html, lang)
        assert left == set(), f"{lang} {name}: English words left: {sorted(left)}"
        if not name.endswith("polled"):
            assert f'<html lang="{lang}">' in html, name


@pytest.mark.parametrize("lang", TRANSLATED)
def test_the_https_page_speaks_the_browsers_language(lang: str) -> None:
    async def inner(scope: Any, receive: Any, send: Any) -> None:
        raise AssertionError("plain HTTP in production never reaches the app")

    c = TestClient(NeedsHttps(inner, secure=True), base_url="http://games.example.org")
    page = c.get("/", headers={"Accept-Language": lang})
    assert page.status_code == 400 and page.headers["content-language"] == lang
    assert f'<html lang="{lang}">' in page.text and "games.example.org" in page.text
    assert "FORWARDED_ALLOW_IPS" in page.text  # the settings' names stay as they are
    assert english_left(page.text, lang, also=("games.example.org",)) == set()


def _estimates() -> list[HintView]:
    """Hints as the solver's worker gives them, from positions with hidden cards: an
    estimate that found wins, one that found none (a fallback's reason), and the busy prefix."""
    hints = []
    for slug, deal, nodes in (("corners", 5, 20_000), ("patriarchs", 4, 200)):
        state = get_ruleset(slug).deal(deal)
        hints.append(HintView.of(hint_job(dumps(state), 5.0, nodes, 4)))
    busy = Words("busy_estimate", "The solver is busy: a quick estimate.")
    hints.append(replace(hints[-1], words=[busy, *hints[-1].words]))
    return hints


def test_hint_estimates_are_words_said_in_each_language() -> None:
    hints = _estimates()
    assert {h.outcome for h in hints} == {"estimate"}
    assert all(h.words for h in hints)
    for hint in hints:
        with speaking("en"):
            english = hint_message(hint)
        if hint.words[0].code != "busy_estimate":
            assert english == hint.message  # the web's English is the solver's own
        assert english.startswith(("Estimated chance of winning: ", "The solver is busy"))
        for lang in TRANSLATED:
            with speaking(lang):
                said = hint_message(hint)
            assert said != english and "%(" not in said, (lang, said)
            assert not english_left(said, lang), (lang, said)
    with speaking("de"):
        chance = hint_message(replace(hints[0], words=[hints[0].words[0]], message=""))
    assert chance.startswith("Geschätzte Gewinnchance: ") and "\u00a0%" in chance


def test_the_api_hint_message_follows_the_language(api: TestClient) -> None:
    game = api.post("/api/games", json={"game": "corners", "deal": 5}).json()
    answer = api.get(f"/api/games/{game['id']}/hint", headers={"Accept-Language": "fr"})
    assert answer.status_code == 200, answer.text
    hint = answer.json()
    assert hint["outcome"] == "estimate" and "words" not in hint
    assert hint["message"].startswith(("Chance de gagner estimée", "Le solveur est occupé"))
    assert not english_left(hint["message"], "fr")


def test_validation_messages_follow_the_language(api: TestClient) -> None:
    bad = {"game": "no-such-game", "deal": "seven"}
    said = {}
    for lang in LANGS:
        answer = api.post("/api/games", json=bad, headers={"Accept-Language": lang})
        assert answer.status_code == 422
        error = answer.json()["error"]
        assert error["code"] == "invalid_request"  # codes never change
        said[lang] = error["message"]
    assert "Input should be 'quadrangle'" in said["en"]  # pydantic's own words in English
    assert "deal: Value error, Input should be a whole number" in said["en"]
    assert "deal: Erwartet wird eine ganze Zahl" in said["de"]  # the app's own validator
    assert "'castles-end' oder 'patriarchs'" in said["de"]  # the language's "or"
    assert "deal: Un nombre entier est attendu" in said["fr"]
    api_words = ("game:", "deal:", *GAMES)  # the API's field names and slugs are code
    for lang in TRANSLATED:
        assert not english_left(said[lang], lang, also=api_words), (lang, said[lang])
    long_name = api.get("/api/players/" + "x" * 65, headers={"Accept-Language": "es"}).json()
    assert "como máximo 64 caracteres" in long_name["error"]["message"], long_name


def test_a_page_opened_in_another_language_speaks_it_in_its_own_requests(
    client: TestClient,
) -> None:
    """A page opened by a ``?lang=`` link (the alternates) is answered in that language by
    everything it asks for later — its moves' fragments, the parts it loads — as htmx sends the
    page's address with each request; a request from a page without one keeps the player's."""
    game_id = new_game(client, "corners", 5)
    page = client.get(f"/games/{game_id}?lang=de", headers={"Accept-Language": "en"})
    assert '<html lang="de">' in page.text
    from_page = {"HX-Current-URL": f"http://testserver/games/{game_id}?lang=de"}
    resigned = client.post(
        f"/games/{game_id}/resign",
        data={"csrftoken": csrf(client)},
        headers={"HX-Request": "true", "Accept-Language": "en", **from_page},
    )
    assert resigned.status_code == 200 and resigned.headers["content-language"] == "de"
    assert "Aufgeben" not in resigned.text and "Spiel" in resigned.text
    board = client.get(f"/games/{game_id}", headers={"Accept-Language": "en"})
    analysis = re.search(r'hx-get="([^"]+/analysis[^"]*)"', board.text)
    assert analysis is not None
    for current, lang in ((from_page["HX-Current-URL"], "de"), (f"/games/{game_id}", "en")):
        part = client.get(
            analysis[1],
            headers={"HX-Request": "true", "Accept-Language": "en", "HX-Current-URL": current},
        )
        assert part.status_code == 200 and part.headers["content-language"] == lang
    # A language that is not one of ours in the page's address changes nothing.
    odd_page = {"HX-Current-URL": f"/games/{game_id}?lang=xx", "Accept-Language": "fr"}
    odd = client.get(analysis[1], headers=odd_page)
    assert odd.headers["content-language"] == "fr"


def test_a_rooms_live_parts_speak_the_language_of_its_page(client: TestClient) -> None:
    """The room's event stream (EventSource sends no page address) is opened in the language
    the page was shown in."""
    code = post(client, "/rooms", {"game": "corners", "deal": "3"}, htmx=False).headers["location"]
    room = client.get(f"{code}?lang=es", headers={"Accept-Language": "en"}).text
    stream = re.search(r'sse-connect="([^"]+)"', room)
    assert stream is not None and markup.unescape(stream[1]).endswith("&lang=es")
