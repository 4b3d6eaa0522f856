"""Deals of one's own (app/services/pool.py): the keyed draw, the fresh certified deals, and a
claim that gives a deal to one player only."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import delete, insert, select
from sqlalchemy.orm import Session, sessionmaker

from app.db.game_rows import GAME, GameRow
from app.db.models import CompetitionDeal, DealVerdict, Game
from app.engine import DEVELOPMENT_KEY, RULES_VERSION
from app.services.errors import NoCertifiedDeals
from app.services.players import create_player
from app.services.pool import CHALLENGE, claim, fresh_deals, has_fresh, pick
from tests.migrated import sqlite_sessions

NOW = datetime(2026, 11, 23, 20, 0, tzinfo=UTC)
UNTIL = NOW + timedelta(hours=4)


def test_pick_is_a_keyed_index_within_the_count() -> None:
    first = pick(DEVELOPMENT_KEY, "corners|2026-11-23|p1", 1000)
    assert first == pick(DEVELOPMENT_KEY, "corners|2026-11-23|p1", 1000)  # the same, always
    assert 0 <= first < 1000
    labels = {pick(DEVELOPMENT_KEY, f"corners|2026-11-23|p{n}", 1000) for n in range(50)}
    assert len(labels) > 40  # spread over the range
    keys = {pick(bytes([n]) * 32, "corners|2026-11-23|p1", 1000) for n in range(50)}
    assert len(keys) > 40  # nobody without the key can tell which
    assert pick(DEVELOPMENT_KEY, "any", 1) == 0


@pytest.fixture(scope="module")
def database(tmp_path_factory: pytest.TempPathFactory) -> Iterator[sessionmaker[Session]]:
    with sqlite_sessions(tmp_path_factory, "pool") as sessions:
        yield sessions


@pytest.fixture()
def sessions(database: sessionmaker[Session]) -> sessionmaker[Session]:
    """Certified corners deals 10 to 15 (13 not certified), with pars; deal 11 has a game."""
    with database.begin() as db:
        for table in (CompetitionDeal, Game, DealVerdict):
            db.execute(delete(table))
        for deal in range(10, 16):
            db.add(
                DealVerdict(
                    game="corners", deal=deal, outcome="winnable", positions=1,
                    certified=deal != 13, created_at=NOW,
                    par=None if deal == 12 else 40 + deal, solution="t1-f1 t2-f1 t3-f1",
                )
            )  # fmt: skip
    return database


def player(sessions: sessionmaker[Session], name: str) -> str:
    with sessions.begin() as db:
        return create_player(db, name)[0].id


def test_fresh_deals_are_certified_unplayed_and_unclaimed(sessions: sessionmaker[Session]) -> None:
    ann = player(sessions, "fresh-ann")
    with sessions.begin() as db:
        row = GameRow.dealt("game-11", ann, "corners", 11, "{}", "playing", NOW,
                            rules=RULES_VERSION, rated=False)  # fmt: skip
        db.execute(insert(GAME).values(**vars(row)))
        db.add(CompetitionDeal(game="corners", deal=14, kind=CHALLENGE, player_id=ann,
                               sealed_until=UNTIL, created_at=NOW))  # fmt: skip
    with sessions() as db:
        # Deal 12 has no par stored: its solution's length is.
        assert fresh_deals(db, "corners") == [(10, 50), (12, 3), (15, 55)]
        assert fresh_deals(db, "quadrangle") == []


def draw(sessions: sessionmaker[Session], player_id: str, label: str) -> tuple[int, int]:
    with sessions.begin() as db:
        return claim(db, "corners", DEVELOPMENT_KEY, label, player_id=player_id,
                     kind=CHALLENGE, sealed_until=UNTIL, stamp=NOW)  # fmt: skip


def test_a_claim_gives_each_deal_to_one_player(
    sessions: sessionmaker[Session], caplog: pytest.LogCaptureFixture
) -> None:
    players = [player(sessions, f"claim-{n}") for n in range(5)]
    drawn = [draw(sessions, p, f"corners|2026-11-23|{p}") for p in players]
    assert sorted(deal for deal, _ in drawn) == [10, 11, 12, 14, 15]  # all but uncertified 13
    assert dict(drawn)[12] == 3 and dict(drawn)[15] == 55
    with sessions() as db:
        claims = dict(db.execute(select(CompetitionDeal.deal, CompetitionDeal.player_id)).all())
        assert claims == {deal: p for (deal, _), p in zip(drawn, players, strict=True)}
        assert fresh_deals(db, "corners") == [] and not has_fresh(db, "corners")
    with pytest.raises(NoCertifiedDeals) as none_left, caplog.at_level(logging.WARNING):
        draw(sessions, players[0], "one more")
    # The player is told to come back; the operator reads in the log how to refill the pool.
    assert "try again later" in none_left.value.message
    assert "python -m app.cli certify --game corners" in caplog.text


def test_a_label_draws_the_same_deal_while_it_is_fresh(sessions: sessionmaker[Session]) -> None:
    ann = player(sessions, "same-ann")
    with sessions.begin() as db:
        first = claim(db, "corners", DEVELOPMENT_KEY, "label", player_id=ann, kind=CHALLENGE,
                      sealed_until=UNTIL, stamp=NOW)  # fmt: skip
        db.rollback()  # nothing claimed: the same draw again gives the same deal
    assert draw(sessions, ann, "label") == first
    # Claimed now: the same label moves on to the next fresh deal (wrapping round).
    second = draw(sessions, ann, "label")
    assert second != first
    fresh = [10, 11, 12, 14, 15]
    assert fresh.index(second[0]) == (fresh.index(first[0]) + 1) % len(fresh)


def test_no_certified_pool_at_all(sessions: sessionmaker[Session]) -> None:
    with sessions.begin() as db, pytest.raises(NoCertifiedDeals):
        claim(db, "quadrangle", DEVELOPMENT_KEY, "label", player_id="nobody", kind=CHALLENGE,
              sealed_until=UNTIL, stamp=NOW)  # fmt: skip
