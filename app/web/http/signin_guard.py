"""Signing in without being locked out by others' guesses (issue 21).

Wrong guesses must cost the guesser, never the owner. So:

- **Every attempt** counts against its address (``RATE_LIMIT_SIGNIN``, app/web/http/ratelimit.py).
- **Known addresses.** An address that signed in as a name is remembered for that name for
  ``SIGNIN_KNOWN_DAYS`` (renewed at every sign-in). Its attempts never count against the name
  and never need a proof: the owner at home is not slowed down by a crowd elsewhere.
- **Per name, failures only.** A wrong password from an address that is not known for the name
  counts against the name (``RATE_LIMIT_SIGNIN_NAME``). A correct password counts nothing.
- **Past that limit, work instead of a lock.** While a name is over its limit, an attempt from
  an unknown address must carry a proof of work: a challenge the server signed
  (``GET /signin/challenge``), single-use and valid for ``SIGNIN_PROOF_SECONDS``, and a number
  ``n`` such that SHA-256 of ``"<nonce>:<n>"`` starts with ``SIGNIN_PROOF_BITS`` zero bits
  (about a second of a browser's time: static/js/signin.js). A correct password with a valid
  proof signs in; a wrong one is refused and counted like any other. Nobody is ever refused
  for attempts they did not make: it only takes longer.

The remembered addresses, the failure counts and the used challenges live where the rate
limits do (the ``limits`` storage: Redis when ``REDIS_URL`` is set, so every worker and every
instance sees one set; this process's memory otherwise), under keys that are HMACs of the
name and address rather than the address itself. That storage already expires keys, is shared
exactly as far as the limits are, and costs no migration; losing it (a restart without Redis)
forgets who was known, which only means a proof may be asked of the owner while their name is
under attack. As with the limits, an unreachable Redis fails open, with a warning.

Times come from ``clock`` (seconds since the epoch), which tests replace.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import math
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass

from limits import parse_many
from limits.errors import StorageError
from starlette.requests import HTTPConnection

from app.config import Settings
from app.services.errors import N_, ServiceError
from app.web.http.ratelimit import RateLimits, Rule

log = logging.getLogger(__name__)

DAY = 86_400
_PROOF_DIGITS = 16  # the proof is a decimal number of at most this many digits


_WAIT_A_MINUTE = N_(
    "many wrong passwords have been tried for this name lately, from places it has "
    "never signed in from. To keep it safe, a browser that has not signed in as this "
    "name before must first do about a second of work: type your password again and "
    "this page does it (it needs JavaScript). Without JavaScript, sign in on a device "
    "you have signed in on before, or wait about %(minutes)s minute."
)
_WAIT_MINUTES = N_(
    "many wrong passwords have been tried for this name lately, from places it has "
    "never signed in from. To keep it safe, a browser that has not signed in as this "
    "name before must first do about a second of work: type your password again and "
    "this page does it (it needs JavaScript). Without JavaScript, sign in on a device "
    "you have signed in on before, or wait about %(minutes)s minutes."
)


class ProofRequired(ServiceError):
    status, code = 403, "proof_required"


class ProofInvalid(ServiceError):
    status, code = 422, "proof_invalid"


class ProofExpired(ServiceError):
    status, code = 422, "proof_expired"


class ProofUsed(ServiceError):
    status, code = 409, "proof_used"


@dataclass(frozen=True)
class Challenge:
    token: str  # "<issued>.<nonce>.<bits>.<signature>", sent back with the proof
    nonce: str
    bits: int
    expires_at: int


def leading_zero_bits(digest: bytes) -> int:
    bits = 0
    for byte in digest:
        if byte:
            return bits + 8 - byte.bit_length()
        bits += 8
    return bits


def work(nonce: str, proof: str) -> bytes:
    """The hash a proof is judged by."""
    return hashlib.sha256(f"{nonce}:{proof}".encode()).digest()


def solve(nonce: str, bits: int) -> str:
    """A proof for ``nonce`` (what the browser computes; the tests use it too)."""
    n = 0
    while leading_zero_bits(work(nonce, str(n))) < bits:
        n += 1
    return str(n)


class SignInGuard:
    def __init__(
        self, settings: Settings, limits: RateLimits, clock: Callable[[], float] = time.time
    ) -> None:
        self.limits = limits
        self.storage = limits.storage
        self.enabled = limits.enabled
        self.clock = clock
        self.bits = settings.signin_proof_bits
        self.ttl = settings.signin_proof_seconds
        self.known_seconds = settings.signin_known_days * DAY
        self.names = Rule(
            "signin-name",
            tuple(parse_many(settings.rate_limit_signin_name)),
            "Too many wrong passwords for this name.",
        )
        # One key for signing challenges and naming storage keys, derived from the session
        # secret (shared by every instance, secret in production).
        self._key = hmac.new(
            settings.session_secret.encode(), b"patience-hall signin guard", hashlib.sha256
        ).digest()

    # -- who is known where ------------------------------------------------------------------

    def _mac(self, *parts: str) -> str:
        message = "\x1f".join(parts).encode()
        return hmac.new(self._key, message, hashlib.sha256).hexdigest()[:32]

    def is_known(self, name_key: str, address: str) -> bool:
        try:
            return self.storage.get(f"signin-known/{self._mac(name_key, address)}") > 0
        except StorageError as exc:
            log.warning("sign-in guard unavailable, address taken as unknown: %s", exc)
            return False

    def remember(self, name_key: str, address: str) -> None:
        """After a sign-in: this address is known for this name for the next N days."""
        key = f"signin-known/{self._mac(name_key, address)}"
        try:
            self.storage.clear(key)  # a fresh lifetime from today
            self.storage.incr(key, self.known_seconds)
        except StorageError as exc:
            log.warning("sign-in guard unavailable, address not remembered: %s", exc)

    # -- failures per name ---------------------------------------------------------------------

    def _name_id(self, name_key: str) -> str:
        return self._mac("name", name_key)

    def under_attack(self, name_key: str) -> bool:
        """Whether failures from unknown addresses have reached the name's limit."""
        if not self.enabled:
            return False
        limiter, name = self.limits.limiter, self._name_id(name_key)
        try:
            return any(not limiter.test(item, self.names.name, name) for item in self.names.items)
        except StorageError as exc:
            log.warning("sign-in guard unavailable, not asking for a proof: %s", exc)
            return False

    def failed(self, name_key: str) -> None:
        """A wrong password from an address not known for the name."""
        if not self.enabled:
            return
        limiter, name = self.limits.limiter, self._name_id(name_key)
        try:
            for item in self.names.items:
                limiter.hit(item, self.names.name, name)
        except StorageError as exc:
            log.warning("sign-in guard unavailable, failure not counted: %s", exc)

    def calm_in(self, name_key: str) -> int:
        """Seconds until the name's failure counts run out (when no proof is asked any more)."""
        limiter, name = self.limits.limiter, self._name_id(name_key)
        longest = 0.0  # (the library's windows run on the wall clock, not on ``clock``)
        try:
            for item in self.names.items:
                if not limiter.test(item, self.names.name, name):
                    stats = limiter.get_window_stats(item, self.names.name, name)
                    longest = max(longest, stats.reset_time - time.time())
        except StorageError:
            return 0
        return max(1, math.ceil(longest))

    def proof_required(self, name_key: str) -> ProofRequired:
        minutes = max(1, math.ceil(self.calm_in(name_key) / 60))
        return ProofRequired(_WAIT_A_MINUTE if minutes == 1 else _WAIT_MINUTES, minutes=minutes)

    # -- proofs of work --------------------------------------------------------------------------

    def _sign(self, name_key: str, issued: int, nonce: str, bits: int) -> str:
        return self._mac("challenge", name_key, str(issued), nonce, str(bits))

    def challenge(self, name_key: str) -> Challenge:
        issued = int(self.clock())
        nonce = secrets.token_urlsafe(16)
        signature = self._sign(name_key, issued, nonce, self.bits)
        token = f"{issued}.{nonce}.{self.bits}.{signature}"
        return Challenge(token, nonce, self.bits, issued + self.ttl)

    def check(self, name_key: str, token: str, proof: str) -> None:
        """Accepts a proof once, or raises: forged or wrong work (422), expired (422), used
        before (409)."""
        invalid = ProofInvalid(
            "the sign-in check did not verify (it was for another name, or altered): sign in again."
        )
        parts = token.split(".")
        if len(parts) != 4 or not parts[0].isascii() or not parts[0].isdigit():
            raise invalid
        issued_text, nonce, bits_text, signature = parts
        if not bits_text.isascii() or not bits_text.isdigit() or len(bits_text) > 2:
            raise invalid
        issued, bits = int(issued_text), int(bits_text)
        expected = self._sign(name_key, issued, nonce, bits)
        if not hmac.compare_digest(expected, signature) or bits < self.bits:
            raise invalid
        now = self.clock()
        if now > issued + self.ttl or now < issued - 60:  # (a minute of clock skew between hosts)
            raise ProofExpired("the sign-in check took too long and has expired: sign in again.")
        if not (proof.isascii() and proof.isdigit() and len(proof) <= _PROOF_DIGITS):
            raise invalid
        if leading_zero_bits(work(nonce, proof)) < bits:
            raise invalid
        try:
            uses = self.storage.incr(f"signin-proof/{self._mac(nonce)}", 2 * self.ttl + 60)
        except StorageError as exc:
            log.warning("sign-in guard unavailable, proof not checked for reuse: %s", exc)
            return
        if uses > 1:
            raise ProofUsed("that sign-in check was used already: sign in again.")


def signin_guard_of(request: HTTPConnection) -> SignInGuard:
    guard: SignInGuard = request.app.state.signin_guard
    return guard
