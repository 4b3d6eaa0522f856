"""The browser's session: Starlette's signed-cookie ``SessionMiddleware``, whose signer
remembers the signatures it has verified.

Every browser request (every board move among them) verifies its session cookie's signature:
a key derived from the secret and an HMAC of the cookie, about a third of what the session
layer costs a request (bench/RESULTS.md, issue 26). A player sends the same cookie until
their session changes, so the signer keeps the (value, signature) pairs it found good, and a
pair it has seen is good again without the HMAC. Only good pairs are kept: a forged cookie is
verified, and refused, every time. Everything else is itsdangerous's own: the age of the
signature (``max_age``) is still checked on every request, after the signature, as before.
"""

from __future__ import annotations

import threading
from typing import Any

import itsdangerous
from cachetools import LRUCache
from starlette.middleware.sessions import SessionMiddleware
from starlette.types import ASGIApp

REMEMBERED = 4096  # signatures kept per process: a few hundred bytes each


class RememberingSigner(itsdangerous.TimestampSigner):
    """A ``TimestampSigner`` that verifies each good (value, signature) pair once, keeping the
    most recently used."""

    def __init__(self, *args: Any, remembered: int = REMEMBERED, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._lock = threading.Lock()  # cachetools' caches are not thread-safe on their own
        self._good: LRUCache[tuple[bytes, bytes], bool] = LRUCache(remembered)

    def verify_signature(self, value: str | bytes, sig: str | bytes) -> bool:
        key = (itsdangerous.encoding.want_bytes(value), itsdangerous.encoding.want_bytes(sig))
        with self._lock:
            if self._good.get(key):  # (a read: it is now the most recently used)
                return True
        if not super().verify_signature(*key):
            return False
        with self._lock:
            self._good[key] = True
        return True


class Sessions(SessionMiddleware):
    """Starlette's session middleware, with the same options, signing with
    :class:`RememberingSigner`."""

    def __init__(self, app: ASGIApp, /, secret_key: str, **options: Any) -> None:
        super().__init__(app, secret_key, **options)
        self.signer = RememberingSigner(str(secret_key))
