"""Domain errors. The web layer maps them to HTTP; their messages are shown to players."""


class EngineError(ValueError):
    """Base class of everything the engine refuses."""


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
