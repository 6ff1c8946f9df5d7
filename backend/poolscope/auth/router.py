"""Log in, log out, who am I."""

from __future__ import annotations

import asyncio
from typing import Annotated

from fastapi import APIRouter, Depends, HTTPException, Request, Response
from pydantic import Field

from poolscope.auth.deps import (
    CSRF_COOKIE,
    NOT_LOGGED_IN,
    READS_NEED_LOGIN,
    SESSION_COOKIE,
    check_csrf,
    client_address,
    get_auth,
)
from poolscope.auth.service import NO_USERS_DETAIL, AuthService
from poolscope.config import Role
from poolscope.schemas.base import Schema

router = APIRouter(prefix="/api/auth", tags=["auth"])

AuthDep = Annotated[AuthService, Depends(get_auth)]


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


@router.post("/login", response_model=UserOut)
async def login(body: LoginIn, request: Request, response: Response, auth: AuthDep) -> UserOut:
    """Check the password; set the session cookie (HttpOnly) and the CSRF cookie (readable by JS)."""
    if not auth.enabled:
        raise HTTPException(status_code=403, detail=NO_USERS_DETAIL)
    address = client_address(request)
    # Per name whatever the address (so rotating addresses gains nothing), and per address.
    wait = auth.login_limiter.hit((body.username,)) or auth.address_limiter.hit((address,))
    if wait is not None:
        raise HTTPException(
            status_code=429,
            detail=f"too many login attempts; try again in {wait:.0f} s",
            headers={"Retry-After": f"{wait:.0f}"},
        )
    # scrypt takes tens of milliseconds: keep it off the event loop.
    user = await asyncio.to_thread(auth.authenticate, body.username, body.password)
    if user is None:
        raise HTTPException(status_code=401, detail="wrong user name or password")
    auth.login_limiter.reset((body.username,))
    token, claims = auth.issue(user)
    max_age = int(auth.ttl_s)
    secure = auth.settings.cookie_secure
    response.set_cookie(
        SESSION_COOKIE, token, max_age=max_age, httponly=True, samesite="strict", secure=secure, path="/"
    )
    response.set_cookie(
        CSRF_COOKIE,
        auth.signer.csrf_for(claims.sid),
        max_age=max_age,
        httponly=False,
        samesite="strict",
        secure=secure,
        path="/",
    )
    return UserOut(name=user.name, role=user.role)


@router.post("/logout", status_code=204)
async def logout(request: Request, response: Response, auth: AuthDep) -> Response:
    """End the session (revoked in the store, so it stays ended after a restart) and clear both cookies."""
    found = auth.session_user(request.cookies.get(SESSION_COOKIE))
    if found is not None:
        _user, claims = found
        # Logging someone out is a state change too: a cross-site form must not do it.
        check_csrf(auth, request, claims)
        await auth.revoke(claims)
    out = Response(status_code=204)
    out.delete_cookie(SESSION_COOKIE, path="/", samesite="strict")
    out.delete_cookie(CSRF_COOKIE, path="/", samesite="strict")
    return out


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
    found = auth.session_user(request.cookies.get(SESSION_COOKIE))
    if found is None:
        detail = NOT_LOGGED_IN if reads[READS_HEADER] == "open" else READS_NEED_LOGIN
        raise HTTPException(status_code=401, detail=detail, headers=reads)
    response.headers.update(reads)
    user = found[0]
    return UserOut(name=user.name, role=user.role)
