"""A game's state as its row holds it (the text of app/engine/serialize.py), read back without
parsing it again when this process has just written or read the same text.

Every move reads its game's state from the row and writes the next one: parsing the text back
into cards was about a fiftieth of a move's CPU (bench/RESULTS.md, issue 26), and a player's
next move nearly always reads the very text their last move wrote (one connection, one
worker). A text is only ever the state it spells (``loads`` is a pure function of it, and a
:class:`~app.engine.State` is immutable), so remembering some of them cannot change what any
read returns; a text not remembered is parsed, and checked, as before.
"""

from __future__ import annotations

import threading

from cachetools import LRUCache

from app.engine import State, dumps, loads

REMEMBERED = 4096  # texts kept per process, the least recently used going first: ~1 KB each


class StateTexts:
    """``loads`` and ``dumps`` through a memory of the last texts seen. Request threads share
    it (SQLite's moves run in the thread pool), hence the lock."""

    def __init__(self, remembered: int = REMEMBERED) -> None:
        self._lock = threading.Lock()
        self._known: LRUCache[str, State] = LRUCache(remembered)

    def loads(self, text: str) -> State:
        with self._lock:
            state = self._known.get(text)
        if state is None:
            state = loads(text)
            self._keep(text, state)
        return state

    def dumps(self, state: State) -> str:
        text = dumps(state)
        self._keep(text, state)
        return text

    def _keep(self, text: str, state: State) -> None:
        with self._lock:
            self._known[text] = state


STATES = StateTexts()
