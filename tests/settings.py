"""The settings of the apps the suite builds.

The functional tests step through replays and boards far faster than any person, on a CI
machine that may be loaded. Every app a test builds starts from :func:`suite_settings`, so that
no test meets a limit it is not about: the budget of expensive pages and the wait for a turn
are tested on their own (tests/web/http/test_limits.py), the rate limits too
(tests/web/test_security.py), and so is judging ended games' deals
(tests/web/test_solver_routes.py). The solver's searches are bounded by positions alone, so
that no answer depends on how fast the machine is at the moment.
"""

from __future__ import annotations

from typing import Any, TypedDict

from app.config import Settings


class RateLimits(TypedDict):
    """The rate-limit settings (a TypedDict, so that ``**TEST_LIMITS`` is type-checked)."""

    rate_limit_signin: str
    rate_limit_signin_name: str
    rate_limit_new_players: str
    rate_limit_new_games: str
    rate_limit_moves: str
    rate_limit_address: str
    rate_limit_room_joins: str
    rate_limit_hints: str
    rate_limit_analyses: str
    rate_limit_costly_address: str


# High enough never to be hit, yet counted.
TEST_LIMITS = RateLimits(
    rate_limit_signin="100000/minute",
    rate_limit_signin_name="100000/minute",
    rate_limit_new_players="100000/minute",
    rate_limit_new_games="100000/minute",
    rate_limit_moves="100000/minute",
    rate_limit_address="1000000/minute",
    rate_limit_room_joins="100000/minute",
    rate_limit_hints="100000/minute",
    rate_limit_analyses="100000/minute",
    rate_limit_costly_address="1000000/minute",
)


# Positions for the suite's own verdicts on Castle's End deals (and the apps' judging): its
# deals are decided in a few hundred to a few thousand positions (tests/solver).
SEARCH_NODES = 20_000


# What every server the suite builds shares: the in-process apps (:func:`suite_settings`) and
# the browser tests' server (tests/e2e/conftest.py, as environment variables: ``environment``).
SHARED: dict[str, Any] = {
    "app_env": "test",
    # A share below 1.0 keeps a budget of replay time: a loaded CI machine spent it
    # stepping through one replay and was answered 503 (twice, in two tests).
    "expensive_share": 1.0,
    # On a loaded CI machine a request may wait seconds for a thread; the default 2 s would be
    # a 503 a browser's board cannot recover from (tested on its own:
    # tests/web/http/test_limits.py).
    "queue_timeout_ms": 10_000,
    # Metered classes wait in line rather than shed, and one address (the test client's)
    # may hold as many requests and streams as a test makes; all tested on their own
    # (tests/web/http/test_limits_admission.py).
    "metered_queue": 10_000,
    "client_concurrency": 10_000,
    "client_streams": 10_000,
    "solver_judge_seconds": 0.0,
    # The suite keeps its processes busy: judging would wait for a quiet moment for good.
    "solver_judge_busy_share": 0.0,
    # Searches bounded by positions alone, in workers at the suite's own priority: on a
    # machine kept busy by others, idle-class workers got no CPU and every time budget ran
    # out ("unknown" hints, undecided analyses). Positions give the same answer anywhere.
    "solver_time_limits": False,
    "solver_idle_priority": False,
    # Smaller than production's budgets, decided the same: the search's first depth-first
    # pass takes 5% of its budget, and at 2,000,000 (300,000) positions that pass found
    # Castle's End deal 1 after 10,973 positions, a 401-move line, ~5 s to find and
    # shorten; at 100,000 the next pass wins in 805 (~1 s). Where cards are hidden, hints
    # keep their own smaller budgets (app/services/solver_jobs.py).
    "solver_hint_nodes": 100_000,
}


def environment(values: dict[str, Any]) -> dict[str, str]:
    """Settings as the environment variables a server process reads."""
    return {
        name.upper(): str(value).lower() if isinstance(value, bool) else str(value)
        for name, value in values.items()
    }


def suite_settings(database_url: str, **overrides: Any) -> Settings:
    """Test settings on ``database_url``; ``overrides`` name the limits a test is about."""
    values: dict[str, Any] = {
        **SHARED,
        "database_url": database_url,
        "solver_analysis_nodes": 100_000,
        "solver_judge_nodes": SEARCH_NODES,
        **TEST_LIMITS,
    }
    values.update(overrides)
    return Settings(**values)
