"""The deal of the day (app/services/daily.py): one number per game and UTC date, from a keyed
hash that only the server's key can compute, and the recent day a deal was the deal of."""

from __future__ import annotations

from datetime import date, timedelta

import pytest

from app.engine import DEVELOPMENT_KEY, GAMES, MAX_DEAL
from app.services.daily import RECENT_DAYS, daily_deal, daily_deals, day_of, is_daily

DAY = date(2026, 11, 21)
OTHER_KEY = b"another server's deal key, 32 bytes"
CORNERS_ON_DAY, QUADRANGLE_ON_DAY = 4_089_713_949_774_637, 6_212_784_429_581_238


def test_the_deal_of_the_day_is_pinned_for_a_given_key_and_date() -> None:
    """A change to the hash would change every past day's deal (and their deal pages)."""
    assert daily_deal("corners", DAY, DEVELOPMENT_KEY) == CORNERS_ON_DAY
    assert daily_deal("quadrangle", DAY, DEVELOPMENT_KEY) == QUADRANGLE_ON_DAY


def test_each_game_and_day_has_its_own_deal_in_range() -> None:
    deals = daily_deals(DAY, DEVELOPMENT_KEY)
    assert set(deals) == set(GAMES)
    assert len(set(deals.values())) == len(deals)
    next_day = daily_deals(DAY + timedelta(days=1), DEVELOPMENT_KEY)
    assert all(deals[slug] != next_day[slug] for slug in GAMES)
    for day in (DAY + timedelta(days=n) for n in range(60)):
        for number in daily_deals(day, DEVELOPMENT_KEY).values():
            assert 1 <= number <= MAX_DEAL


def test_another_key_deals_other_cards() -> None:
    assert daily_deals(DAY, OTHER_KEY) != daily_deals(DAY, DEVELOPMENT_KEY)
    assert daily_deals(DAY, OTHER_KEY) == daily_deals(DAY, OTHER_KEY)


def test_is_daily_only_for_that_game_and_day() -> None:
    number = daily_deal("corners", DAY, DEVELOPMENT_KEY)
    assert is_daily("corners", number, DAY, DEVELOPMENT_KEY)
    assert not is_daily("corners", number, DAY + timedelta(days=1), DEVELOPMENT_KEY)
    assert not is_daily("corners", number + 1, DAY, DEVELOPMENT_KEY)
    assert not is_daily("corners", number, DAY, OTHER_KEY)
    assert not is_daily("no-such-game", number, DAY, DEVELOPMENT_KEY)


@pytest.mark.parametrize("back", [0, 1, RECENT_DAYS])
def test_day_of_names_a_recent_day_whose_deal_this_was(back: int) -> None:
    dealt = DAY - timedelta(days=back)
    number = daily_deal("patriarchs", dealt, DEVELOPMENT_KEY)
    assert day_of("patriarchs", number, DAY, DEVELOPMENT_KEY) == dealt


def test_day_of_forgets_older_days_and_other_deals() -> None:
    old = daily_deal("patriarchs", DAY - timedelta(days=RECENT_DAYS + 1), DEVELOPMENT_KEY)
    assert day_of("patriarchs", old, DAY, DEVELOPMENT_KEY) is None
    # A future day's deal is not named either (nobody may learn it early).
    future = daily_deal("patriarchs", DAY + timedelta(days=1), DEVELOPMENT_KEY)
    assert day_of("patriarchs", future, DAY, DEVELOPMENT_KEY) is None
