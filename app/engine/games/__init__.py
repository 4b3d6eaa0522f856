"""The registry: game slug → ruleset."""

from __future__ import annotations

from app.engine.errors import UnknownGame
from app.engine.games.castles_end import CastlesEnd
from app.engine.games.corners import Corners
from app.engine.games.patriarchs import Patriarchs
from app.engine.games.quadrangle import Quadrangle
from app.engine.games.quadruple_interchange import QuadrupleInterchange
from app.engine.reasons import N_
from app.engine.ruleset import Ruleset

GAMES: dict[str, Ruleset] = {
    r.slug: r for r in (Quadrangle(), QuadrupleInterchange(), Corners(), CastlesEnd(), Patriarchs())
}


def get_ruleset(slug: str) -> Ruleset:
    try:
        return GAMES[slug]
    except (KeyError, TypeError):
        raise UnknownGame(
            N_("There is no game called %(game)s."), "unknown_game", game=repr(slug)
        ) from None
