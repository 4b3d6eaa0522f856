"""The player's display preferences (app/web/pages/templating.py, ``Prefs``): the cookie read
and written, unknown flags dropped, and what the page makes of them."""

from __future__ import annotations

from app.web.pages.templating import Prefs, templates


def test_known_flags_are_kept_and_unknown_ones_dropped() -> None:
    prefs = Prefs.parse("dark.evil.auto.guide-corners.guide-nogame.lang-fr.lang-xx")
    assert prefs.flags == {"dark", "auto", "guide-corners", "lang-fr"}
    assert Prefs.parse(prefs.cookie()) == prefs
    assert prefs.cookie() == "auto.dark.guide-corners.lang-fr"


def test_what_the_preferences_mean() -> None:
    prefs = Prefs.parse("dark.back-red.four.guide-corners.lang-de")
    assert prefs.theme == "dark" and prefs.back == "red" and not prefs.auto
    assert prefs.guide_seen("corners") and not prefs.guide_seen("patriarchs")
    assert prefs.lang == "de"
    assert prefs.classes == "back-red pref-four theme-dark"


def test_nothing_set_is_the_default_look() -> None:
    for prefs in (Prefs.parse(None), Prefs.parse(""), Prefs()):
        assert (prefs.theme, prefs.back, prefs.auto, prefs.lang) == ("light", "blue", False, None)
        assert prefs.classes == "" and prefs.cookie() == ""


def test_the_templates_speak_through_the_catalogs_and_escape() -> None:
    page = templates.env.from_string("{{ _('Hello %(name)s', name=who) }}|{{ 0.5|pct }}")
    assert page.render(who="<b>") == "Hello &lt;b&gt;|50%"


def test_a_templates_globals_are_one_plain_dict_of_every_global() -> None:
    """Each template's globals are a dict (not Jinja2's ChainMap, copied key by key in Python
    at every render, include and import) holding every global of the environment, and a
    template's own globals stay its own."""
    template = templates.env.get_template("components/move_response.html")
    assert type(template.globals) is dict
    assert template.globals == dict(templates.env.globals)
    own = templates.env.from_string("{{ here }} {{ current_lang() }}", globals={"here": "x"})
    assert own.render() == "x en" and "here" not in templates.env.globals
