"""Production refuses to start with development secrets, and says why."""

from __future__ import annotations

import secrets

import pytest
from pydantic import ValidationError

from app.config import DEVELOPMENT_SESSION_SECRET, Settings
from app.engine import DEVELOPMENT_KEY

GOOD_DEAL_KEY = secrets.token_urlsafe(48)
GOOD_SESSION_SECRET = secrets.token_urlsafe(48)


def _production(**values: str) -> Settings:
    fields = {"deal_key": GOOD_DEAL_KEY, "session_secret": GOOD_SESSION_SECRET, **values}
    return Settings(_env_file=None, app_env="production", **fields)  # type: ignore[call-arg,arg-type]


def test_production_accepts_good_secrets() -> None:
    settings = _production()
    assert settings.app_env == "production"
    assert settings.deal_key_bytes == GOOD_DEAL_KEY.encode()


@pytest.mark.parametrize("key", [DEVELOPMENT_KEY.decode(), "", "x", "y" * 31])
def test_production_refuses_the_development_or_a_short_deal_key(key: str) -> None:
    with pytest.raises(ValidationError) as refused:
        _production(deal_key=key)
    message = str(refused.value)
    assert "DEAL_KEY" in message and "production" in message


@pytest.mark.parametrize("secret", [DEVELOPMENT_SESSION_SECRET, "", "short", "x" * 31])
def test_production_refuses_a_weak_session_secret(secret: str) -> None:
    with pytest.raises(ValidationError) as refused:
        _production(session_secret=secret)
    assert "SESSION_SECRET" in str(refused.value)


def test_production_secrets_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("APP_ENV", "production")
    monkeypatch.setenv("SESSION_SECRET", GOOD_SESSION_SECRET)
    monkeypatch.delenv("DEAL_KEY", raising=False)
    with pytest.raises(ValidationError, match="DEAL_KEY"):
        Settings(_env_file=None)  # type: ignore[call-arg]
    monkeypatch.setenv("DEAL_KEY", GOOD_DEAL_KEY)
    assert Settings(_env_file=None).deal_key == GOOD_DEAL_KEY  # type: ignore[call-arg]


@pytest.mark.parametrize("env", ["development", "test"])
def test_development_and_tests_may_use_the_development_secrets(env: str) -> None:
    settings = Settings(_env_file=None, app_env=env)  # type: ignore[call-arg,arg-type]
    assert settings.deal_key_bytes == DEVELOPMENT_KEY
