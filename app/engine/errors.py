"""Domain errors. The web layer maps them to HTTP and words them in the player's language.

A refusal carries its reason as data (``words``: a code, an English template and parameters,
app/engine/reasons.py); ``str(exc)`` is the English sentence.
"""

from __future__ import annotations

from typing import Self

from app.engine.reasons import Param, Words


class EngineError(ValueError):
    """Base class of everything the engine refuses."""

    def __init__(self, template: str, code: str = "", /, **params: Param) -> None:
        self._say(Words(code or type(self).__name__, template, params))

    def _say(self, words: Words) -> None:
        self.words = words
        ValueError.__init__(self, words.english() if words.params else words.template)

    @classmethod
    def counted(cls, code: str, forms: tuple[str, str], n: int, /, **params: Param) -> Self:
        """A refusal whose words depend on a count ``n`` (``forms``: singular and plural,
        marked with ``Nn_``); ``%(n)s`` is the count."""
        exc = cls.__new__(cls)
        exc._say(Words(code, forms[0], {**params, "n": n}, forms[1], n))
        return exc

    @property
    def code(self) -> str:
        return self.words.code


class IllegalMove(EngineError):
    """A well-formed move that the rules do not allow right now."""


class InvalidMove(EngineError):
    """A move that cannot even be asked for: unknown pile, bad count, bad notation."""


class UnknownGame(EngineError):
    """A game slug that is not in the registry."""


class InvalidDeal(EngineError):
    """A deal number outside 1 … 2^53 − 1."""


class CorruptState(EngineError):
    """A serialized state that cannot be read back."""
