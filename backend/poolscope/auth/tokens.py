"""Signed session tokens (stdlib hmac, no extra deps), sent as `Authorization: Bearer` (auth/deps.py).

A session token is ``v3.<payload b64>.<hmac-sha256 b64>`` with payload ``{"u", "sid", "exp", "pv"}``;
``pv`` is a fingerprint of the user's password, so a changed password ends the sessions opened
with the old one. v2 tokens travelled in cookies, which every port of the host name receives
(docs/decisions/0200-origin-bound-sessions.md): they are refused, so one a browser still holds is
worth nothing to whoever collects it.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import time
from dataclasses import dataclass

VERSION = "v3"


def _b64e(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _b64d(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@dataclass(frozen=True)
class SessionClaims:
    user: str
    sid: str
    expires_at: float
    password_version: str


class TokenSigner:
    def __init__(self, secret: bytes) -> None:
        if len(secret) < 16:
            raise ValueError("session secret must be at least 16 bytes")
        self._key = hashlib.sha256(b"poolscope-session|" + secret).digest()
        self._password_key = hashlib.sha256(b"poolscope-password-version|" + secret).digest()

    def _sign(self, message: bytes) -> str:
        return _b64e(hmac.new(self._key, message, hashlib.sha256).digest())

    def password_version(self, material: bytes) -> str:
        """A short keyed digest of what identifies a password (its stored hash): not reversible."""
        return _b64e(hmac.new(self._password_key, material, hashlib.sha256).digest()[:12])

    def issue(
        self, user: str, ttl_s: float, password_version: str = "", now: float | None = None
    ) -> tuple[str, SessionClaims]:
        now = time.time() if now is None else now
        claims = SessionClaims(
            user=user,
            sid=secrets.token_urlsafe(18),
            expires_at=now + ttl_s,
            password_version=password_version,
        )
        payload = _b64e(
            json.dumps(
                {"u": claims.user, "sid": claims.sid, "exp": claims.expires_at, "pv": claims.password_version}
            ).encode("utf-8")
        )
        signed = f"{VERSION}.{payload}"
        return f"{signed}.{self._sign(signed.encode('ascii'))}", claims

    def verify(self, token: str, now: float | None = None) -> SessionClaims | None:
        """The claims of a valid, unexpired token; None for anything else (never raises)."""
        now = time.time() if now is None else now
        try:
            version, payload, signature = token.split(".")
            if version != VERSION:
                return None
            expected = self._sign(f"{version}.{payload}".encode("ascii"))
            if not hmac.compare_digest(expected, signature):
                return None
            data = json.loads(_b64d(payload))
            claims = SessionClaims(
                user=str(data["u"]),
                sid=str(data["sid"]),
                expires_at=float(data["exp"]),
                password_version=str(data["pv"]),
            )
        except (ValueError, KeyError, TypeError, UnicodeError):
            return None
        return claims if claims.expires_at > now else None
