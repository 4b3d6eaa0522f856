"""A game's state text read through the process's memory of texts (app/services/state_texts.py):
the same states as parsing every time, and a text parsed only when it is not remembered."""

from __future__ import annotations

import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.engine import CorruptState, dumps, get_ruleset, loads, serialize
from app.services.state_texts import StateTexts

GAMES = ("quadrangle", "quadruple-interchange", "corners", "castles-end", "patriarchs")


def _texts(slug: str, number: int, moves: int) -> list[str]:
    rules = get_ruleset(slug)
    state = rules.deal(number)
    texts = [dumps(state)]
    for _ in range(moves):
        legal = rules.legal_moves(state)
        if not legal:
            break
        state = rules.step(state, legal[number % len(legal)]).after
        texts.append(dumps(state))
    return texts


def _parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    parsed: list[str] = []
    real = serialize.loads

    def counted(text: str) -> object:
        parsed.append(text)
        return real(text)

    monkeypatch.setattr("app.services.state_texts.loads", counted)
    return parsed


def test_a_text_this_process_wrote_is_read_back_without_parsing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    texts = StateTexts()
    state = get_ruleset("corners").deal(7)
    parsed = _parses(monkeypatch)
    text = texts.dumps(state)
    assert text == dumps(state)
    assert texts.loads(text) is state
    assert parsed == []


def test_a_text_read_once_is_parsed_once(monkeypatch: pytest.MonkeyPatch) -> None:
    texts = StateTexts()
    text = dumps(get_ruleset("patriarchs").deal(3))
    parsed = _parses(monkeypatch)
    first = texts.loads(text)
    again = (text + " ")[:-1]  # the same text, another object: as the next read of the row
    assert again is not text
    assert texts.loads(again) is first and first == loads(text)
    assert parsed == [text]


def test_a_damaged_text_is_refused_every_time_and_never_kept() -> None:
    texts = StateTexts()
    bad = dumps(get_ruleset("corners").deal(1))[:-2]  # a card short
    for _ in range(2):
        with pytest.raises(CorruptState):
            texts.loads(bad)
    assert not texts._known


def test_it_keeps_no_more_than_it_is_told_the_least_recently_used_going_first() -> None:
    texts = StateTexts(remembered=3)
    written = _texts("quadrangle", 5, 6)
    for text in written:
        texts.loads(text)
    assert list(texts._known) == written[-3:]
    texts.loads(written[-3])  # read again: now the most recently used
    texts.dumps(loads(written[0]))
    assert set(texts._known) == {written[-3], written[-1], written[0]}


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(GAMES), st.integers(1, 10_000), st.integers(0, 30), st.integers(1, 8))
def test_it_reads_every_text_as_parsing_it_does(
    slug: str, number: int, moves: int, remembered: int
) -> None:
    texts = StateTexts(remembered)
    written = _texts(slug, number, moves)
    for text in [*written, *reversed(written), *written]:
        assert texts.loads(text) == loads(text)
    for text in written:
        assert texts.dumps(loads(text)) == text
    assert len(texts._known) <= remembered


def test_threads_sharing_it_read_the_same_states() -> None:
    texts = StateTexts(remembered=8)
    written = [t for slug in GAMES for t in _texts(slug, 11, 10)]
    wrong: list[str] = []

    def read() -> None:
        for _ in range(20):
            for text in written:
                if texts.loads(text) != loads(text):
                    wrong.append(text)

    threads = [threading.Thread(target=read) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert wrong == [] and len(texts._known) <= 8
