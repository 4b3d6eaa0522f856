"""Settings, read once from the environment (and an optional .env file)."""

from __future__ import annotations

import math
from collections import Counter
from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import Field, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict
from sqlalchemy.engine import make_url

from app.engine import DEVELOPMENT_KEY

PROJECT_DIR = Path(__file__).resolve().parent.parent
DEVELOPMENT_SESSION_SECRET = "patience-hall-development-session-secret"


SECRET_HELP = 'Make one with: python3 -c "import secrets; print(secrets.token_urlsafe(48))"'
MIN_SECRET_BITS = 80  # Shannon estimate of the whole string (a random 32-hex-digit key: 92–125)
MIN_BITS_PER_CHAR = 2.5  # repeated patterns and few distinct characters fall below this


def secret_bits(secret: str) -> float:
    """An estimate of a secret's entropy: Shannon entropy of its characters times its length.

    It cannot prove a secret random, but it refuses the usual mistakes: ``"a" * 32``, a short
    pattern repeated, too few different characters.
    """
    if not secret or _repeats(secret):
        return 0.0
    counts = Counter(secret)
    n = len(secret)
    per_char = -sum(c / n * math.log2(c / n) for c in counts.values())
    return per_char * n if per_char >= MIN_BITS_PER_CHAR else 0.0


def _repeats(secret: str) -> bool:
    """Whether the secret is a shorter string repeated (``"0123456789abcdef" * 2``)."""
    n = len(secret)
    return any(secret == (secret[:p] * (n // p + 1))[:n] for p in range(1, n // 2 + 1))


def strong_secret(secret: str) -> bool:
    """At least 32 characters, estimated entropy enough, and no public development key in it."""
    lowered = secret.lower()
    public = (DEVELOPMENT_KEY.decode(), DEVELOPMENT_SESSION_SECRET)
    return (
        len(secret) >= 32
        and not any(key in lowered for key in public)
        and secret_bits(secret) >= MIN_SECRET_BITS
    )


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_file=".env", extra="ignore")

    app_env: Literal["development", "test", "production"] = "development"
    database_url: str = f"sqlite:///{PROJECT_DIR / 'data' / 'patience-hall.db'}"
    # The deal key decides every layout; production keeps it secret (rules.md §1).
    deal_key: str = DEVELOPMENT_KEY.decode()
    session_secret: str = DEVELOPMENT_SESSION_SECRET
    # Secure cookies: None means "in production" (APP_ENV=production), else as set.
    cookie_secure: bool | None = None
    # Rate limits (the ``limits`` library's notation, several joined by ";"). Counted in memory
    # per process, or in Redis shared by every process and instance when REDIS_URL is set.
    redis_url: str | None = None
    rate_limit_prefix: str = "ph"
    rate_limits_enabled: bool = True
    rate_limit_signin: str = "10/minute;50/hour"  # per address: every sign-in attempt
    # Per name: wrong passwords from addresses that never signed in as that name. Past it, such
    # an address must send a proof of work with its attempt (docs/security.md); addresses
    # that signed in as the name in the last SIGNIN_KNOWN_DAYS sign in as usual.
    rate_limit_signin_name: str = "10/hour;30/day"
    signin_known_days: int = Field(default=30, ge=1, le=400)
    signin_proof_bits: int = Field(default=19, ge=1, le=32)  # leading zero bits of SHA-256
    signin_proof_seconds: int = Field(default=300, ge=10, le=3600)  # a challenge's lifetime
    rate_limit_new_players: str = "30/hour;200/day"  # per address, free
    # Per address, past the free limit: browser newcomers that did a proof of work (a café).
    rate_limit_new_players_proved: str = "600/hour;3000/day"
    newcomer_proof_bits: int = Field(default=17, ge=1, le=32)  # leading zero bits of SHA-256
    rate_limit_new_games: str = "30/minute;500/day"  # per player
    rate_limit_moves: str = "20/second;600/minute"  # per player: moves, undos, resignations
    rate_limit_address: str = "6000/minute"  # per address: every limited action together
    # With Redis, the moves' limits are decided in each process and its hits sent to Redis in
    # one exchange this often (app/web/http/shared_counts.py): the others' hits reach a
    # process's decisions up to this late.
    rate_limit_share_ms: int = Field(default=50, ge=1, le=5000)
    # Actions whose cost can grow, per player: joining or leaving rooms (each one an event to
    # every stream of the room), hints (a solver search) and analyses (a solver search); and
    # all three together per address (many players behind one address share it).
    rate_limit_room_joins: str = "20/minute;200/hour"
    rate_limit_hints: str = "20/minute;300/hour"
    rate_limit_analyses: str = "20/minute;300/hour"
    rate_limit_costly_address: str = "300/minute"
    leaderboard_min_games: int = Field(default=10, ge=1)
    # Recent-period leaderboards add up many rows: their rows are served for this long, then
    # refreshed in the background (0: computed on every request).
    leaderboard_cache_seconds: float = Field(default=30.0, ge=0)
    # Active time: a pause between two actions of a game counts up to this many seconds.
    idle_cap_seconds: float = Field(default=120.0, gt=0)
    # Per worker process; keep workers × pool below PostgreSQL's max_connections.
    db_pool_size: int = Field(default=10, ge=1)
    # Threads per process for blocking work (bench/RESULTS.md: 2 beat 4, 16 and 40).
    threadpool_size: int = Field(default=2, ge=1, le=64)
    # Faults and overload (docs/operating.md): how long a request may wait for a
    # database connection, and PostgreSQL's statement and lock timeouts, in milliseconds.
    db_pool_timeout_ms: int = Field(default=2000, ge=1)
    db_statement_timeout_ms: int = Field(default=3000, ge=0)
    db_lock_timeout_ms: int = Field(default=1000, ge=0)
    db_move_lock_timeout_ms: int = Field(default=300, ge=0)
    # The Retry-After (seconds) of a 503 while the database is unavailable or the app is busy.
    retry_after_seconds: int = Field(default=2, ge=1)
    # Accepted moves per game: the move that reaches it ends the game as lost.
    max_moves_per_game: int = Field(default=2000, ge=1)
    # How long a request may wait for one of the THREADPOOL_SIZE threads before it is answered
    # 503, and how many expensive pages (replays, leaderboards, player pages) a worker renders
    # at once (the rest wait their turn, within the same bound).
    queue_timeout_ms: int = Field(default=2000, ge=1)
    expensive_concurrency: int = Field(default=1, ge=1)
    # Metered classes beside the expensive pages (app/web/http/limits.py): hints (each holds a
    # solver worker), analyses (each waits for one) and the opening of event streams. A full
    # metered class lets METERED_QUEUE more requests wait their turn and answers any beyond
    # them 503 at once.
    hint_concurrency: int = Field(default=1, ge=1)
    analysis_concurrency: int = Field(default=1, ge=1)
    stream_open_concurrency: int = Field(default=4, ge=1)
    metered_queue: int = Field(default=2, ge=0)
    # Per client address and worker: requests under way at once, and event streams held open;
    # beyond either, 429 with Retry-After at once.
    client_concurrency: int = Field(default=32, ge=1)
    client_streams: int = Field(default=64, ge=1)
    # A client that comes back before its Retry-After and would be refused again gets that
    # refusal when its Retry-After is over (its connection waits; no thread, no turn).
    enforce_retry_after: bool = True
    # The share of a worker's time that replay pages may take (their time inside their gate);
    # beyond it they are answered 503 at once.
    expensive_share: float = Field(default=0.1, gt=0, le=1)
    # Request size limits: 413 above the body size, 431 above the header size.
    max_body_bytes: int = Field(default=65536, ge=1024)
    max_header_bytes: int = Field(default=16384, ge=1024)
    # One JSON line per request on the "patience_hall.access" logger (and, through
    # ``python -m app.serve``, uvicorn's own lines too).
    json_logs: bool = True
    # Worker processes of this instance (uvicorn --workers): more than one in production needs
    # REDIS_URL, or every rate limit is counted once per worker.
    web_concurrency: int = Field(default=1, ge=1, le=64)
    # The rated race queue forms a race once its longest-waiting player has waited this long
    # (or eight players wait): app/services/race_queue.py.
    race_queue_wait_s: float = Field(default=10.0, ge=0, le=600)
    # How often each process forms the races that are due, whether or not anyone polls.
    race_queue_form_s: float = Field(default=2.0, gt=0, le=60)
    # ``GET /metrics``: in production only with ``Authorization: Bearer <METRICS_TOKEN>`` (unset:
    # 404, scrape a private port instead); elsewhere open. ``/docs``, ``/redoc`` and
    # ``/openapi.json``: None means "not in production".
    metrics_token: str | None = None
    api_docs: bool | None = None
    # Judging ended games' deals and filling the certified pool as durable jobs on PostgreSQL
    # (procrastinate, app/jobs/), taken by the solver workers of their own service; off: the
    # app judges in its own worker processes (SOLVER_WORKERS), as on SQLite.
    solver_jobs: bool = False
    # Deals per game that the solver workers keep in the certified-winnable pool (0: none).
    certified_pool_target: int = Field(default=20, ge=0, le=100_000)

    # The solver (hints) runs in this many worker processes, each search within this many
    # seconds of wall time: a slow search never holds up a move.
    solver_workers: int = Field(default=1, ge=1, le=16)
    hint_seconds: float = Field(default=2.0, gt=0, le=60)
    # When a game ends, its deal is judged (deal_winnable) in the same worker processes within
    # this many seconds; 0 turns it off.
    solver_judge_seconds: float = Field(default=3.0, ge=0, le=60)
    # Judging waits for a quiet moment: it is skipped while an app process uses more than this
    # share of a core (measured over the last two seconds); 0 judges however busy it is.
    solver_judge_busy_share: float = Field(default=0.25, ge=0, le=64)
    # Positions a search may enter: a hint's (where cards are hidden, a smaller share per game:
    # app/services/solver_jobs.py), a finished game's analysis's, and an ended game's deal's.
    solver_hint_nodes: int = Field(default=2_000_000, ge=1)
    solver_analysis_nodes: int = Field(default=300_000, ge=1)
    solver_judge_nodes: int = Field(default=300_000, ge=1)
    # The seconds above bound searches as well as positions do; false: positions alone, and the
    # app waits for a worker however long it takes. Machine speed then changes no answer (the
    # test suite, on a loaded machine); production keeps wall time bounded.
    solver_time_limits: bool = True
    # The workers run at the lowest CPU priority (Linux's idle class, niceness 19), so that
    # searches take only what the requests leave; false: the app's own priority (the test
    # suite: on a machine kept busy by others, idle-class workers get no CPU at all).
    solver_idle_priority: bool = True

    # Rooms and races (app/services/rooms/rooms.py).
    race_countdown_s: float = Field(default=3.0, ge=0, le=60)
    room_max_members: int = Field(default=8, ge=1, le=100)
    rooms_per_player: int = Field(default=3, ge=1, le=100)
    room_idle_s: float = Field(default=1800.0, gt=0)  # an open room unused this long closes
    race_forfeit_s: float = Field(default=300.0, gt=0)  # a racer silent this long forfeits
    room_sweep_s: float = Field(default=15.0, gt=0)  # how often each process looks for both
    # Events older than this are deleted by the sweep: a client away for longer reloads the
    # room page (which shows the room as it is now) rather than replaying a day of moves.
    event_retention_s: float = Field(default=86_400.0, ge=60)

    @model_validator(mode="after")
    def _no_development_secrets_in_production(self) -> Settings:
        if self.app_env == "production":
            if not strong_secret(self.deal_key):
                raise ValueError(
                    "Refusing to start in production without a secret DEAL_KEY: set DEAL_KEY "
                    "to a random secret of at least 32 characters (not the development key). "
                    + SECRET_HELP
                )
            if not strong_secret(self.session_secret):
                raise ValueError(
                    "Refusing to start in production without SESSION_SECRET set to a random "
                    "secret of at least 32 characters. " + SECRET_HELP
                )
        return self

    @property
    def public_api_docs(self) -> bool:
        return self.app_env != "production" if self.api_docs is None else self.api_docs

    @property
    def secure_cookies(self) -> bool:
        return self.app_env == "production" if self.cookie_secure is None else self.cookie_secure

    @property
    def deal_key_bytes(self) -> bytes:
        return self.deal_key.encode()


def refusals(settings: Settings) -> list[str]:
    """Why production must not start with these settings (the secrets are checked when the
    settings are read; the deal key against the database's fingerprint by ``app.main``)."""
    if settings.app_env != "production":
        return []
    problems = []
    if make_url(settings.database_url).get_backend_name() == "sqlite":
        problems.append(
            "Refusing to start in production on SQLite: set DATABASE_URL to a PostgreSQL "
            "database (postgresql+psycopg://user:password@host:5432/db). SQLite is for one "
            "process on one machine, for development."
        )
    if settings.web_concurrency > 1 and not settings.redis_url:
        problems.append(
            f"Refusing to start in production with WEB_CONCURRENCY={settings.web_concurrency} "
            "workers and no REDIS_URL: every rate limit would be counted apart in each worker. "
            "Set REDIS_URL (e.g. redis://redis:6379/0), or WEB_CONCURRENCY=1."
        )
    return problems


@lru_cache
def get_settings() -> Settings:
    return Settings()
