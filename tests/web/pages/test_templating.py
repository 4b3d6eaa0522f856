"""The player's display preferences (app/web/pages/templating.py, ``Prefs``): the cookie read
and written, unknown flags dropped, and what the page makes of them."""

from __future__ import annotations

from typing import Any

import jinja2
import pytest

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


class _Box:
    version = 3


class _Mapping(dict[str, Any]):
    pass


@pytest.mark.parametrize(
    ("obj", "attribute"),
    [
        ({"version": 3}, "version"),  # a key: the item
        ({"version": 3}, "missing"),  # neither: undefined
        ({"items": "a key"}, "items"),  # a key named as a dict's method: the method
        ({}, "get"),
        ({"__class__": 1}, "__class__"),
        ({1: "a number"}, "1"),  # a key of another type is no attribute's name
        (_Box(), "version"),  # not a dict: Jinja2's own way
        (_Mapping(version=3), "version"),  # a dict's subclass may have attributes of its own
        (_Mapping(version=3), "missing"),
    ],
)
def test_a_templates_attribute_reads_are_jinja2s_own(obj: Any, attribute: str) -> None:
    """What ``obj.attribute`` gives a template is what Jinja2's own environment gives, dict or
    not, key or method or nothing (an undefined of the same name)."""
    ours = templates.env.getattr(obj, attribute)
    jinja2s = jinja2.Environment.getattr(templates.env, obj, attribute)
    if isinstance(jinja2s, jinja2.Undefined):
        assert isinstance(ours, jinja2.Undefined)
        assert ours._undefined_name == jinja2s._undefined_name == attribute
        assert ours._undefined_obj is jinja2s._undefined_obj is obj
    else:
        assert ours == jinja2s
    page = templates.env.from_string("{{ o.version }}|{{ o.items is callable }}|{{ o.nope }}")
    assert page.render(o={"version": 3, "items": "no"}) == "3|True|"


def test_a_cookies_preferences_are_parsed_once() -> None:
    raw = "four.sound.lang-es"
    assert Prefs.parse(raw) is Prefs.parse(raw)
    assert Prefs.parse(raw) == Prefs(frozenset({"four", "sound", "lang-es"}))


def test_a_template_once_loaded_is_not_looked_at_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """The templates ship with the release: rendering never stats their files (a board move
    renders four)."""
    names = ("components/move_response.html", "components/status.html")
    for name in names:
        templates.env.get_template(name)

    def no_stat(path: Any) -> float:
        raise AssertionError(f"looked at {path}")

    monkeypatch.setattr("os.path.getmtime", no_stat)
    for _ in range(2):
        for name in names:
            templates.env.get_template(name)
