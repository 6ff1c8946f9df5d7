"""Log in, log out, who am I."""

from __future__ import annotations

import asyncio

from fastapi import APIRouter, HTTPException, Request, Response
from pydantic import Field

from poolscope.auth.deps import (
    NOT_LOGGED_IN,
    READS_NEED_LOGIN,
    AuthDep,
    client_address,
    get_auth,
    request_session,
)
from poolscope.auth.service import NO_USERS_DETAIL
from poolscope.config import Role
from poolscope.schemas.base import Schema

router = APIRouter(prefix="/api/auth", tags=["auth"])


class LoginIn(Schema):
    """A login attempt."""

    username: str = Field(min_length=1, max_length=64)
    """The user's name, as in [[users]]."""
    password: str = Field(min_length=1, max_length=1024)
    """The user's password."""


class UserOut(Schema):
    """Who is logged in."""

    name: str
    """The user's name."""
    role: Role
    """viewer (reads) or operator (also applies, reverts, silences, captures)."""


class SessionOut(UserOut):
    """A new session: send `token` as `Authorization: Bearer <token>` until `expires_at` (Unix s)."""

    token: str
    """The session: send it as `Authorization: Bearer <token>` (keep it out of cookies and URLs)."""
    expires_at: float
    """When the session ends by itself (Unix seconds)."""


@router.post("/login", response_model=SessionOut)
async def login(body: LoginIn, request: Request, auth: AuthDep) -> SessionOut:
    """Check the password; the answer carries the session token (no cookie: it would reach every port)."""
    if not auth.enabled:
        raise HTTPException(status_code=403, detail=NO_USERS_DETAIL)
    address, name, limits = client_address(request), body.username, auth.login_limits
    # Backoff per address and name, a cap per failing address; a name under attack is slowed
    # down for everyone but refused to nobody who has not failed (auth/login_limits.py).
    refused = limits.refusal(address, name)
    if refused is not None:
        wait = refused[1]
        raise HTTPException(
            status_code=429,
            detail=f"too many wrong passwords from this address; try again in {wait:.0f} s",
            headers={"Retry-After": f"{wait:.0f}"},
        )
    try:
        await limits.clock.sleep(limits.slowdown_s(name))
        # scrypt takes tens of milliseconds: keep it off the event loop.
        user = await asyncio.to_thread(auth.authenticate, name, body.password)
    except BaseException:
        limits.abandoned(address, name)
        raise
    if user is None:
        limits.failed(address, name)
        raise HTTPException(status_code=401, detail="wrong user name or password")
    limits.succeeded(address, name)
    token, claims = auth.issue(user)
    return SessionOut(name=user.name, role=user.role, token=token, expires_at=claims.expires_at)


@router.post("/logout", status_code=204)
async def logout(request: Request) -> Response:
    """End the session of the bearer token (revoked in the store: every API process refuses it from then on)."""
    found = request_session(request)
    if found is not None:
        await get_auth(request).revoke(found[1])
    return Response(status_code=204)


# Tells the UI before it reads anything whether reads need a login here (it then shows its login
# page instead of pages that would only fail): "login" or "open".
READS_HEADER = "X-Poolscope-Reads"


@router.get("/me", response_model=UserOut)
async def me(request: Request, response: Response, auth: AuthDep) -> UserOut:
    """The logged-in user, or 401 (whose detail says when no users are configured)."""
    reads = {READS_HEADER: "open" if not auth.enabled or auth.settings.anonymous_read else "login"}
    if not auth.enabled:
        raise HTTPException(status_code=401, detail=NO_USERS_DETAIL, headers=reads)
    # The session itself, not require_role: with anonymous_read that would answer "anonymous".
    found = request_session(request)
    if found is None:
        detail = NOT_LOGGED_IN if reads[READS_HEADER] == "open" else READS_NEED_LOGIN
        raise HTTPException(status_code=401, detail=detail, headers=reads)
    response.headers.update(reads)
    user = found[0]
    return UserOut(name=user.name, role=user.role)
