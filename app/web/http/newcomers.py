"""New players from one busy address: a café or a classroom plays, a script pays (issue 23).

Every new player counts against its address (``RATE_LIMIT_NEW_PLAYERS``, 30 an hour): for a
household that is never reached. A café's or a school's wifi shares one address among many
people, so past that limit a **browser** newcomer is not refused but asked for a moment of work:

- while the address is over its free limit, each page served to a browser with no player
  carries a challenge signed by the server (bound to nothing but this purpose, valid for
  ``SIGNIN_PROOF_SECONDS``), and static/js/newcomer.js finds ``n`` such that SHA-256 of
  ``"<nonce>:<n>"`` starts with ``NEWCOMER_PROOF_BITS`` zero bits (about half a second of a
  phone's time, done while the page is read) and posts it to ``POST /newcomer``;
- the session then holds that nonce, and the browser's first action makes its player: the
  nonce is spent there, once (a replayed session cookie cannot make a second player), and the
  player counts against a much larger per-address ceiling, ``RATE_LIMIT_NEW_PLAYERS_PROVED``
  (600 an hour), so that a script that does the work still stops somewhere;
- an action before the work is done answers 429 with the reason and a wait of two seconds;
  without JavaScript, the wait until the free limit frees up.

Why this and not a per-session limit: a session makes one player at most anyway, and a script
simply drops its cookies; only work or the address bound it. The API (``POST /api/players``)
keeps the free limit alone: programs use it, and a classroom signs up in browsers.

The spent nonces live where the rate limits do (memory, or Redis with ``REDIS_URL``), under an
HMAC; an unreachable Redis fails open, as the limits do.
"""

from __future__ import annotations

import hmac
import logging
import secrets
from typing import Annotated

from fastapi import APIRouter, Form, Request, Response
from limits.errors import StorageError

from app.web.http.ratelimit import RateLimited, client_address, limits_of
from app.web.http.signin_guard import (
    ProofInvalid,
    SignInGuard,
    leading_zero_bits,
    signin_guard_of,
    work,
)
from app.web.state import settings_of

log = logging.getLogger(__name__)

router = APIRouter(include_in_schema=False)  # pages: left out of the API schema

PURPOSE = "\x00newcomer"  # what the challenges are bound to (never a normalised name)
SESSION_NONCE = "newcomer"  # the session's proven nonce, spent by the first action
_PROOF_DIGITS = 16


def _guard(request: Request) -> SignInGuard:
    guard: SignInGuard = signin_guard_of(request)
    return guard


def _bits(request: Request) -> int:
    bits: int = settings_of(request).newcomer_proof_bits
    return bits


def over_free_limit(request: Request) -> bool:
    """Whether this address has made its free newcomers for now (a page then asks for work)."""
    limits = limits_of(request)
    if not limits.enabled:
        return False
    rule, address = limits.new_players, client_address(request)
    try:
        return any(not limits.limiter.test(item, rule.name, address) for item in rule.items)
    except StorageError:
        return False


def challenge_for(request: Request) -> dict[str, str] | None:
    """A challenge for a page served to a browser with no player, when its address is over
    the free limit and the session has no proven nonce yet; else None."""
    if "session" not in request.scope:
        return None
    session = request.session
    if session.get("pid") or session.get(SESSION_NONCE) or not over_free_limit(request):
        return None
    guard, bits = _guard(request), _bits(request)
    issued = int(guard.clock())
    nonce = secrets.token_urlsafe(16)
    signature = guard._sign(PURPOSE, issued, nonce, bits)
    return {"token": f"{issued}.{nonce}.{bits}.{signature}", "nonce": nonce, "bits": str(bits)}


def _verify(request: Request, token: str, proof: str) -> str:
    """The nonce of a valid, unexpired proof, or ProofInvalid (422)."""
    guard = _guard(request)
    invalid = ProofInvalid("that check did not verify: reload the page.")
    parts = token.split(".")
    if len(parts) != 4 or not (parts[0].isascii() and parts[0].isdigit()):
        raise invalid
    issued_text, nonce, bits_text, signature = parts
    if not (bits_text.isascii() and bits_text.isdigit() and len(bits_text) <= 2):
        raise invalid
    issued, bits = int(issued_text), int(bits_text)
    expected = guard._sign(PURPOSE, issued, nonce, bits)
    if not hmac.compare_digest(expected, signature) or bits < _bits(request):
        raise invalid
    now = guard.clock()
    if now > issued + guard.ttl or now < issued - 60:
        raise ProofInvalid("that check has expired: reload the page.")
    if not (proof.isascii() and proof.isdigit() and len(proof) <= _PROOF_DIGITS):
        raise invalid
    if leading_zero_bits(work(nonce, proof)) < bits:
        raise invalid
    return nonce


@router.post("/newcomer", status_code=204)
def prove(
    request: Request, challenge: Annotated[str, Form()], proof: Annotated[str, Form()]
) -> Response:
    """A browser's proof of a moment of work: its first action may then make its player."""
    request.session[SESSION_NONCE] = _verify(request, challenge, proof)
    return Response(status_code=204)


def admit(request: Request) -> None:
    """Counts a new browser player against its address, or raises RateLimited (429).

    Within the free limit: admitted. Past it: admitted once per proven nonce, within the
    proved ceiling."""
    limits = limits_of(request)
    try:
        limits.hit_address(request, limits.new_players)
        return
    except RateLimited:
        nonce = request.session.get(SESSION_NONCE)
        if not isinstance(nonce, str) or not _spend(request, nonce):
            request.session.pop(SESSION_NONCE, None)
            raise RateLimited(
                "Many new players have started from this address in the last hour (a café, "
                "a school?). To tell people from scripts, this page does about a second of "
                "work first: wait a moment and try again. (It needs JavaScript; without it, "
                "try again within the hour.)",
                2,
            ) from None
    request.session.pop(SESSION_NONCE, None)
    limits.hit(limits.new_players_proved, client_address(request))


def _spend(request: Request, nonce: str) -> bool:
    """Marks a proven nonce used; False if it was used before."""
    guard = _guard(request)
    key = f"newcomer-used/{guard._mac('newcomer', nonce)}"
    try:
        return guard.storage.incr(key, 2 * guard.ttl + 3600) == 1
    except StorageError as exc:
        log.warning("newcomer guard unavailable, proof not checked for reuse: %s", exc)
        return True
