"""An event's standings are published off the request that ended a game, and folded: changes
that come while a publication runs make one more publication, not one each."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from app.services.arenas import Arenas
from tests.waiting import wait_until


def arenas_publishing(
    monkeypatch: pytest.MonkeyPatch,
) -> tuple[Arenas, list[int], threading.Event, threading.Event]:
    arenas = Arenas(sessions=Any, games=Any, deal_key=b"")  # type: ignore[arg-type]
    published: list[int] = []
    started, release = threading.Event(), threading.Event()

    def publish(arena_id: int) -> None:
        started.set()
        release.wait(30)  # the first publication is still running while more games end
        published.append(arena_id)

    monkeypatch.setattr(arenas, "publish_standings", publish)
    return arenas, published, started, release


def test_changes_during_a_publication_are_folded_into_the_next(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    arenas, published, started, release = arenas_publishing(monkeypatch)
    arenas.standings_changed(1)  # returns at once: the publication runs in a thread
    assert started.wait(30) and published == []
    for arena_id in (1, 1, 2, 1):
        arenas.standings_changed(arena_id)
    release.set()
    wait_until(lambda: not arenas._publishing, "the publishing thread to finish")
    # The first publication, then one for each event that changed meanwhile.
    assert published == [1, 1, 2]
    arenas.standings_changed(2)  # a later change starts a publication again
    wait_until(lambda: published == [1, 1, 2, 2], "the next publication")


def test_a_failed_publication_is_logged_and_the_next_change_publishes(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    arenas, published, _, release = arenas_publishing(monkeypatch)
    release.set()
    calls = iter([RuntimeError("database away")])

    def flaky(arena_id: int) -> None:
        failure = next(calls, None)
        if failure is not None:
            raise failure
        published.append(arena_id)

    monkeypatch.setattr(arenas, "publish_standings", flaky)
    arenas.standings_changed(7)
    wait_until(lambda: not arenas._publishing, "the publishing thread to finish")
    assert published == [] and "publishing the standings of event 7 failed" in caplog.text
    arenas.standings_changed(7)
    wait_until(lambda: published == [7], "the next publication")
