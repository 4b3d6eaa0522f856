"""Whether the database answers, and which of its errors mean "unavailable for now" (a 503
with Retry-After rather than a 500). The web asks here; only the services speak to app.db."""

from __future__ import annotations

from sqlalchemy import text
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from app.db.faults import UNAVAILABLE_ERRORS, is_unavailable, summary

__all__ = ["UNAVAILABLE_ERRORS", "Health", "is_unavailable", "summary"]


class Health:
    """The load balancer's question: does the database answer a trivial query?"""

    def __init__(self, sessions: sessionmaker[Session]) -> None:
        self.sessions = sessions

    def database_answers(self) -> bool:
        try:
            with self.sessions() as db:
                db.execute(text("SELECT 1"))
        except Exception as exc:
            if not (is_unavailable(exc) or isinstance(exc, SQLAlchemyError)):
                raise
            return False
        return True
