"""The same-deal rule (app/services/same_deal.py): a viewer's own games of a deal decide what
they may see of somebody else's game of it."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from sqlalchemy import insert
from sqlalchemy.orm import Session, sessionmaker

from app.db.game_rows import GAME, GameRow
from app.db.session import make_engine, make_sessionmaker
from app.engine import RULES_VERSION
from app.services.errors import SameDealInPlay
from app.services.players import create_player
from app.services.same_deal import (
    Relation,
    check_may_see,
    may_see,
    relation,
    relations,
    sees_everything,
)
from tests.migrated import migrated_sqlite

NOW = datetime(2026, 11, 23, 20, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("related", "sees", "everything"),
    [
        (Relation.NONE, True, False),  # the game as its owner sees it in play, no log
        (Relation.IN_PLAY, False, False),  # nothing: it would show the viewer's hidden cards
        (Relation.FINISHED, True, True),  # they know the cards already
    ],
)
def test_what_another_viewer_may_see(related: Relation, sees: bool, everything: bool) -> None:
    assert may_see("owner", "viewer", related) is sees
    assert sees_everything("owner", "viewer", related) is everything
    if sees:
        check_may_see("owner", "viewer", related)
    else:
        with pytest.raises(SameDealInPlay):
            check_may_see("owner", "viewer", related)


@pytest.mark.parametrize("related", list(Relation))
def test_the_owner_sees_everything_of_their_own_game(related: Relation) -> None:
    assert may_see("owner", "owner", related)
    assert sees_everything("owner", "owner", related)


def test_anonymous_viewers_are_strangers_to_every_deal() -> None:
    assert may_see("owner", None, Relation.NONE)
    assert not sees_everything("owner", None, Relation.NONE)


@pytest.fixture(scope="module")
def db_players(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[sessionmaker[Session], str, str]]:
    """A database where the viewer has: corners 1 in play and finished, corners 2 finished,
    quadrangle 3 in play; someone else has corners 4 in play."""
    url = migrated_sqlite(tmp_path_factory, "same_deal")
    engine = make_engine(url)
    sessions = make_sessionmaker(engine)
    with sessions.begin() as db:
        viewer, other = create_player(db, "viewer")[0].id, create_player(db, "other")[0].id
        games = [
            (viewer, "corners", 1, "playing"), (viewer, "corners", 1, "lost"),
            (viewer, "corners", 2, "won"), (viewer, "quadrangle", 3, "playing"),
            (other, "corners", 4, "playing"),
        ]  # fmt: skip
        for n, (owner, slug, deal, status) in enumerate(games):
            row = GameRow.dealt(f"game-{n}", owner, slug, deal, "{}", status, NOW,
                                rules=RULES_VERSION, rated=False)  # fmt: skip
            db.execute(insert(GAME).values(**vars(row)))
    yield sessions, viewer, other
    engine.dispose()


EXPECTED = {
    ("corners", 1): Relation.IN_PLAY,  # one in play is enough
    ("corners", 2): Relation.FINISHED,
    ("corners", 3): Relation.NONE,  # the viewer's deal 3 is another game's
    ("quadrangle", 3): Relation.IN_PLAY,
    ("corners", 4): Relation.NONE,  # someone else's game of it
}


def test_relation_from_the_viewers_own_games(
    db_players: tuple[sessionmaker[Session], str, str],
) -> None:
    sessions, viewer, _ = db_players
    with sessions() as db:
        assert {key: relation(db, viewer, *key) for key in EXPECTED} == EXPECTED
        assert relation(db, None, "corners", 1) is Relation.NONE


def test_relations_of_many_deals_agree_with_one_at_a_time(
    db_players: tuple[sessionmaker[Session], str, str],
) -> None:
    sessions, viewer, other = db_players
    with sessions() as db:
        assert relations(db, viewer, list(EXPECTED) * 2) == EXPECTED
        assert relations(db, None, EXPECTED) == dict.fromkeys(EXPECTED, Relation.NONE)
        assert relations(db, viewer, []) == {}
        assert relations(db, other, [("corners", 4)]) == {("corners", 4): Relation.IN_PLAY}
