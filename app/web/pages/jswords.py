"""The browser scripts' own words (static/js/**/*.js), in the page's language.

Every page carries them as JSON in ``<meta name="ph-words">`` (templates/base.html; no inline
script): English template → its translation. A script says
``w("Picked up %(cards)s. %(where)s", {cards, where})`` and gets the translation, or the English
when there is none. tests/web/test_languages.py checks that every ``w("…")`` of the scripts is
listed here, so each is in the catalogs.
"""

from __future__ import annotations

from app.web import i18n
from app.web.i18n import N_

JS_MESSAGES = (
    N_("%(count)s cards from %(first)s up"),
    N_("Put back."),
    N_("%(pile)s is empty."),
    N_("Face-down cards cannot be moved."),
    N_("It can go to %(piles)s."),
    N_("It has no legal move now."),
    N_("Picked up %(cards)s. %(where)s"),
    N_("After %(card)s goes to %(pile)s, no legal move is left. You could still undo it."),
    N_("No foundation takes %(card)s now."),
    N_("%(card)s fits more than one foundation: choose one."),
    N_("%(cards)s was dropped off the piles: it is back where it was. Drop it on a pile."),
    N_(
        "The browser took that drag for a scroll: the card is back. Try again from the card's face."
    ),
    N_("The server could not be reached: nothing was moved. Try again."),
    N_("That did not work: please reload the page."),
    N_("The action you made after it was not sent."),
    N_("The %(n)s actions you made after it were not sent."),
    N_("Link to this deal copied: %(url)s"),
    N_("Copy this link to share the deal:"),
    N_("▶ Play"),
    N_("⏸ Pause"),
    N_("Starts in %(seconds)s…"),
    N_("Go! The race is on."),
    N_(
        "This name has had many wrong passwords from elsewhere: this browser is doing about a "
        "second of work to show it is not a guessing machine…"
    ),
    N_("Ready."),
    N_("in %(h)s h %(m)s min"),
    N_("over"),
)


def js_words() -> dict[str, str]:
    """The scripts' words in the request's language (nothing for English: the scripts' own)."""
    if i18n.current_lang() == i18n.DEFAULT:
        return {}
    return {message: i18n.gettext(message) for message in JS_MESSAGES}
