"""Settings, read once from the environment (and an optional .env file)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import Field, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from app.engine import DEVELOPMENT_KEY

PROJECT_DIR = Path(__file__).resolve().parent.parent
DEVELOPMENT_SESSION_SECRET = "patience-hall-development-session-secret"


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_file=".env", extra="ignore")

    app_env: Literal["development", "test", "production"] = "development"
    database_url: str = f"sqlite:///{PROJECT_DIR / 'data' / 'patience-hall.db'}"
    # The deal key decides every layout; production keeps it secret (rules.md §1).
    deal_key: str = DEVELOPMENT_KEY.decode()
    session_secret: str = DEVELOPMENT_SESSION_SECRET
    cookie_secure: bool = False
    leaderboard_min_games: int = Field(default=10, ge=1)
    # Recent-period leaderboards add up many rows: their rows are served for this long, then
    # refreshed in the background (0: computed on every request).
    leaderboard_cache_seconds: float = Field(default=30.0, ge=0)
    # Per worker process; keep workers × pool below PostgreSQL's max_connections.
    db_pool_size: int = Field(default=10, ge=1)
    # Threads per process for blocking work (bench/RESULTS.md: 2 beat 4, 16 and 40).
    threadpool_size: int = Field(default=2, ge=1, le=64)
    # Rooms and races (app/services/rooms.py).
    race_countdown_s: float = Field(default=3.0, ge=0, le=60)
    room_max_members: int = Field(default=8, ge=1, le=100)
    rooms_per_player: int = Field(default=3, ge=1, le=100)
    room_idle_s: float = Field(default=1800.0, gt=0)  # an open room unused this long closes
    race_forfeit_s: float = Field(default=300.0, gt=0)  # a racer silent this long forfeits
    room_sweep_s: float = Field(default=15.0, gt=0)  # how often each process looks for both

    @model_validator(mode="after")
    def _no_development_secrets_in_production(self) -> Settings:
        if self.app_env == "production":
            if self.deal_key == DEVELOPMENT_KEY.decode() or len(self.deal_key) < 32:
                raise ValueError(
                    "Refusing to start in production without a secret DEAL_KEY: set DEAL_KEY "
                    "to a random secret of at least 32 characters (not the development key)."
                )
            if self.session_secret == DEVELOPMENT_SESSION_SECRET or len(self.session_secret) < 32:
                raise ValueError(
                    "Refusing to start in production without SESSION_SECRET set to a random "
                    "secret of at least 32 characters."
                )
        return self

    @property
    def deal_key_bytes(self) -> bytes:
        return self.deal_key.encode()


@lru_cache
def get_settings() -> Settings:
    return Settings()
