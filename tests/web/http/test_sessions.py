"""The session middleware's signer (app/web/http/sessions.py): what it remembers changes no
verdict of itsdangerous's, only how often the HMAC is computed."""

from __future__ import annotations

import base64
import json
import time

import itsdangerous
import pytest
from hypothesis import given
from hypothesis import strategies as st
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.testclient import TestClient

from app.web.http.sessions import RememberingSigner, Sessions

SECRET = "s" * 48


def _hmacs(signer: RememberingSigner, monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    seen: list[bytes] = []
    verify = itsdangerous.signer.HMACAlgorithm.verify_signature

    def counted(self: object, key: bytes, value: bytes, sig: bytes) -> bool:
        seen.append(value)
        return verify(self, key, value, sig)  # type: ignore[arg-type]

    monkeypatch.setattr(itsdangerous.signer.HMACAlgorithm, "verify_signature", counted)
    return seen


def test_a_good_signature_is_verified_once(monkeypatch: pytest.MonkeyPatch) -> None:
    signer = RememberingSigner(SECRET)
    signed = itsdangerous.TimestampSigner(SECRET).sign(b"payload")
    hmacs = _hmacs(signer, monkeypatch)
    assert signer.unsign(signed, max_age=60) == b"payload"
    assert signer.unsign(signed, max_age=60) == b"payload"
    assert signer.unsign(signed.decode(), max_age=60) == b"payload"  # str or bytes alike
    assert len(hmacs) == 1


def test_a_bad_signature_is_refused_every_time_and_never_kept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    signer = RememberingSigner(SECRET)
    forged = itsdangerous.TimestampSigner("another secret" * 4).sign(b"payload")
    hmacs = _hmacs(signer, monkeypatch)
    for _ in range(3):
        with pytest.raises(itsdangerous.BadSignature):
            signer.unsign(forged, max_age=60)
    assert len(hmacs) == 3
    assert not signer._good


def test_a_remembered_signature_still_expires(monkeypatch: pytest.MonkeyPatch) -> None:
    signer = RememberingSigner(SECRET)
    signed = signer.sign(b"payload")
    assert signer.unsign(signed, max_age=60) == b"payload"
    later = int(time.time()) + 61
    monkeypatch.setattr(signer, "get_timestamp", lambda: later)
    with pytest.raises(itsdangerous.SignatureExpired):
        signer.unsign(signed, max_age=60)


def test_it_keeps_no_more_than_it_is_told_the_least_recently_used_going_first() -> None:
    signer = RememberingSigner(SECRET, remembered=3)
    signed = [signer.sign(f"value {i}".encode()) for i in range(5)]
    for value in signed:
        signer.unsign(value)
    assert [v for v, _ in signer._good] == [s.rsplit(b".", 1)[0] for s in signed[2:]]


@given(st.binary(max_size=64), st.binary(max_size=40), st.booleans())
def test_its_verdicts_are_itsdangerous_own(value: bytes, sig: bytes, twice: bool) -> None:
    plain = itsdangerous.TimestampSigner(SECRET)
    remembering = RememberingSigner(SECRET)
    for candidate in (value + b"." + sig, plain.sign(value), plain.sign(value)[:-1] + b"A"):
        for _ in range(2 if twice else 1):
            try:
                expected: object = plain.unsign(candidate, max_age=60)
            except itsdangerous.BadSignature as exc:
                expected = type(exc)
            try:
                got: object = remembering.unsign(candidate, max_age=60)
            except itsdangerous.BadSignature as exc:
                got = type(exc)
            assert got == expected


def _app() -> Starlette:
    async def read(request: Request) -> JSONResponse:
        request.session.setdefault("n", 0)
        request.session["n"] += 1
        return JSONResponse(dict(request.session))

    app = Starlette(routes=[Route("/", read)])
    app.add_middleware(Sessions, secret_key=SECRET, session_cookie="ph", max_age=60)
    return app


def test_the_middleware_reads_and_writes_the_cookie_starlette_writes() -> None:
    with TestClient(_app()) as client:
        assert client.get("/").json() == {"n": 1}
        assert client.get("/").json() == {"n": 2}
        cookie = client.cookies["ph"]
    data = itsdangerous.TimestampSigner(SECRET).unsign(cookie, max_age=60)
    assert json.loads(base64.b64decode(data)) == {"n": 2}
    with TestClient(_app()) as stranger:  # a forged cookie: a new, empty session
        stranger.cookies["ph"] = itsdangerous.TimestampSigner("x" * 48).sign(b"e30=").decode()
        assert stranger.get("/").json() == {"n": 1}
