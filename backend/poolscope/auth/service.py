"""Who is logged in: password checks, session issue/verify/revoke, and the rate limits."""

from __future__ import annotations

import logging
import os
import secrets
import time
from dataclasses import dataclass

from sqlalchemy import delete, func, insert, select
from sqlalchemy.ext.asyncio import AsyncEngine

from poolscope.auth.login_limits import LoginLimits
from poolscope.auth.passwords import DUMMY_HASH, hash_password, verify_password
from poolscope.auth.ratelimit import RateLimiter
from poolscope.auth.revocations import CHANNEL as REVOKED_CHANNEL
from poolscope.auth.tables import auth_revoked_sessions
from poolscope.auth.tokens import SessionClaims, TokenSigner
from poolscope.config import Role, Settings

log = logging.getLogger(__name__)

ROLE_RANK: dict[str, int] = {"viewer": 0, "operator": 1}
# Every limit that refuses with 429, as /metrics names it (poolscope_limit_refusals_total).
LIMITS = ("login_backoff", "login_address", "login_in_flight", "mutations", "preview", "live_user")
NO_USERS_DETAIL = (
    "no users configured: add [[users]] to the config (poolscope hash-password prints a password hash)"
)
# Wrong passwords for many user names from one address are limited too, at a multiple of the
# per-name limit.
PER_ADDRESS_FACTOR = 3


@dataclass(frozen=True)
class User:
    name: str
    role: Role


class AuthService:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        secret = settings.session_secret
        self.signer = TokenSigner(
            secret.get_secret_value().encode("utf-8") if secret else secrets.token_bytes(32)
        )
        self.ttl_s = settings.session_ttl_hours * 3600
        self._hashes: dict[str, str] = {}
        self._roles: dict[str, Role] = {}
        # Changes when the password changes (and only then), so older sessions end.
        self._password_versions: dict[str, str] = {}
        for user in settings.users:
            self._roles[user.name] = user.role
            if user.password_hash is not None:
                stored = user.password_hash.get_secret_value()
                self._hashes[user.name] = stored
                self._password_versions[user.name] = self.signer.password_version(b"hash|" + stored.encode())
            elif user.password_env:
                plain = os.environ.get(user.password_env)
                if plain:
                    # Hashed once here so the plain text is not kept around in memory; the
                    # version comes from the password itself, since this hash is new every start.
                    self._hashes[user.name] = hash_password(plain)
                    self._password_versions[user.name] = self.signer.password_version(
                        b"env|" + plain.encode("utf-8")
                    )
                else:
                    log.warning(
                        "user %s cannot log in: environment variable %s is not set",
                        user.name,
                        user.password_env,
                    )
        self._revoked: dict[str, float] = {}
        self._engine: AsyncEngine | None = None
        per_name = settings.login_attempts_per_minute
        self.login_limits = LoginLimits(per_name, per_name * PER_ADDRESS_FACTOR)
        self.mutation_limiter = RateLimiter(settings.mutations_per_minute, 60)
        self.preview_limiter = RateLimiter(settings.previews_per_minute, 60)
        self.live_refused = 0  # streams refused by live_max_streams_per_user (api/live.py)

    def limit_refusals(self) -> dict[str, int]:
        """Requests refused so far, per limit (for /metrics)."""
        return {
            **self.login_limits.refused,
            "mutations": self.mutation_limiter.refused,
            "preview": self.preview_limiter.refused,
            "live_user": self.live_refused,
        }

    @property
    def enabled(self) -> bool:
        return bool(self._roles)

    async def attach(self, engine: AsyncEngine) -> None:
        """Keep revocations in the store from now on, and load those still in force; the other API
        processes' later ones arrive through auth/revocations.py."""
        async with engine.begin() as conn:
            await conn.execute(
                delete(auth_revoked_sessions).where(auth_revoked_sessions.c.expires_at <= time.time())
            )
        self._engine = engine
        await self.load_revoked()

    async def load_revoked(self) -> None:
        """Every revocation in the store, added to those known here."""
        assert self._engine is not None
        async with self._engine.connect() as conn:
            rows = (await conn.execute(select(auth_revoked_sessions))).all()
        for row in rows:
            self.note_revoked(row.sid, row.expires_at)

    def note_revoked(self, sid: str, expires_at: float) -> None:
        self._revoked[sid] = expires_at

    def authenticate(self, name: str, password: str) -> User | None:
        stored = self._hashes.get(name)
        # Always derive a key, so unknown names take as long as wrong passwords.
        ok = verify_password(password, stored or DUMMY_HASH)
        if not ok or stored is None:
            return None
        return User(name=name, role=self._roles[name])

    def issue(self, user: User) -> tuple[str, SessionClaims]:
        return self.signer.issue(user.name, self.ttl_s, self._password_versions[user.name])

    def session_user(self, token: str | None) -> tuple[User, SessionClaims] | None:
        """The user behind a session cookie, with today's role from the config."""
        if not token:
            return None
        claims = self.signer.verify(token)
        if claims is None or claims.sid in self._revoked:
            return None
        role = self._roles.get(claims.user)
        if role is None:  # removed from the config since logging in
            return None
        if claims.password_version != self._password_versions.get(claims.user):
            return None  # the password changed since logging in
        return User(name=claims.user, role=role), claims

    async def revoke(self, claims: SessionClaims) -> None:
        if claims.sid in self._revoked:
            return  # two logouts of one session racing: once is enough
        now = time.time()
        # Forget revocations of tokens that would have expired anyway.
        for sid in [s for s, exp in self._revoked.items() if exp <= now]:
            del self._revoked[sid]
        self._revoked[claims.sid] = claims.expires_at
        if self._engine is None:  # not started (an app without its lifespan): memory only
            return
        async with self._engine.begin() as conn:
            await conn.execute(delete(auth_revoked_sessions).where(auth_revoked_sessions.c.expires_at <= now))
            await conn.execute(
                insert(auth_revoked_sessions).values(sid=claims.sid, expires_at=claims.expires_at)
            )
            if conn.dialect.name == "postgresql":
                # Delivered at commit to every API process listening (auth/revocations.py).
                payload = f"{claims.sid} {claims.expires_at!r}"
                await conn.execute(select(func.pg_notify(REVOKED_CHANNEL, payload)))
