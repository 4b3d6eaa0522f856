"""A card as the board draws it (``card_html``): made once per card and language, in the
language asked for whatever the request speaks, and drawn as the template drew it; and a pile
(``PileView.html``), drawn as the template's macro drew it."""

from __future__ import annotations

import re
from html import unescape

import pytest
from markupsafe import Markup

from app.engine import Card
from app.engine.cards import RANKS, SUITS
from app.web import i18n
from app.web.pages import board
from app.web.pages.board import PileView, card_html
from app.web.pages.templating import templates
from app.web.words import card_name, rank_index

CODES = [r + s for r in RANKS for s in SUITS]
CARD = re.compile(r'<li class="([a-z])" aria-label="([^"<>]*)">([^<>]*)</li>')
# The template's own drawing of a card, before it was made in Python: the reference.
TEMPLATE_CARD = templates.env.from_string(
    '{% if code %}<li class="{{ suit }}" aria-label="{{ name }}">{{ rank }}</li>'
    '{% else %}<li class="b" aria-label="{{ _(\'face-down card\') }}"></li>{% endif %}'
)


def test_every_card_has_its_suit_name_and_index_in_every_language() -> None:
    for lang in i18n.LANGS:
        names = set()
        for code in CODES:
            found = CARD.fullmatch(card_html(code, lang))
            assert found is not None, (code, lang)
            suit, name, index = found.groups()
            assert suit == code[1].lower()
            assert index and len(unescape(index)) <= 2
            names.add(unescape(name))
        assert len(names) == len(CODES), lang  # every card has a name of its own
    with i18n.speaking("de"):
        assert card_html("QS", "de") == '<li class="s" aria-label="Pik Dame">D</li>'
    assert card_html("QS", "en") == '<li class="s" aria-label="queen of spades">Q</li>'


def test_a_face_down_card_is_a_back_and_nothing_else() -> None:
    for lang in i18n.LANGS:
        back = card_html(None, lang)
        with i18n.speaking(lang):
            label = i18n.gettext("face-down card")
        assert back == f'<li class="b" aria-label="{label}"></li>'
    assert card_html(None, "de") != card_html(None, "en")


def test_a_card_is_drawn_as_the_template_drew_it() -> None:
    for lang in i18n.LANGS:
        with i18n.speaking(lang):
            for code in [*CODES, None]:
                if code is None:
                    expected = TEMPLATE_CARD.render(code=None)
                else:
                    card = Card.parse(code)
                    expected = TEMPLATE_CARD.render(
                        code=code,
                        suit=code[1].lower(),
                        name=card_name(card.face),
                        rank=rank_index(card.rank),
                    )
                assert card_html(code, lang) == expected, (code, lang)


@pytest.mark.parametrize("speaking", ["en", "fr"])
def test_the_language_asked_for_wins_over_the_one_spoken(speaking: str) -> None:
    """The cache is by language: a card first made while the request speaks another language
    is still made in the one asked for."""
    board._CARD_HTML.clear()
    with i18n.speaking(speaking):
        spanish = card_html("KH", "es")
    assert spanish == '<li class="h" aria-label="rey de corazones">R</li>'
    assert card_html("KH", "es") is spanish  # made once


# The pile as the template's macro drew it, before it was made in Python: the reference.
TEMPLATE_PILE = templates.env.from_string(
    '<ol id="pile-{{ p.id }}" class="pile {{ p.kind }}{{ \' fanned\' if p.fanned }}" '
    'data-count="{{ p.count }}" aria-label="{{ p.label }}" tabindex="0"'
    "{{ ' hx-swap-oob=\"true\"'|safe if oob }}>{{- p.cards -}}</ol>"
)


@pytest.mark.parametrize("oob", [False, True])
@pytest.mark.parametrize("fanned", [False, True])
@pytest.mark.parametrize("label", ["Pile t1, 3 cards", 'Pile "t1" <b>&', "Stapel t1 ♣, 1 Karte"])
def test_a_pile_is_drawn_as_the_template_drew_it(oob: bool, fanned: bool, label: str) -> None:
    cards = Markup("".join(card_html(c, "en") for c in ("AS", None, "TH")))
    for shown in (cards, Markup("")):
        pile = PileView("t1", "tableau", fanned, label, shown, 3)
        drawn = pile.html(oob=oob) if oob else pile.html()
        assert drawn == TEMPLATE_PILE.render(p=pile, oob=oob)
        assert isinstance(drawn, Markup)  # markup: a template does not escape it again
    assert "<b>" not in PileView("t1", "tableau", fanned, label, cards, 3).html()
