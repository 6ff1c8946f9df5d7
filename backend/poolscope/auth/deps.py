"""FastAPI dependencies: `require_role("viewer" | "operator")` for any route that needs a login.

The session is the token in `Authorization: Bearer`, which the UI keeps in sessionStorage: bound to
Poolscope's origin, port included, and never sent by the browser on its own, so it needs no CSRF
token (docs/decisions/0200-origin-bound-sessions.md). In this order: no users configured → 403
(reads with "viewer" stay open, as user "anonymous"); not logged in → 401 (reads with "viewer" are
anonymous too when `anonymous_read` is set); role too low → 403; too many changes → 429. Every
route also passes `auth.gate.read_gate` first.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Annotated, Any

from fastapi import Depends, HTTPException, Request

from poolscope.auth.ratelimit import RateLimiter
from poolscope.auth.service import NO_USERS_DETAIL, ROLE_RANK, AuthService, User
from poolscope.auth.tokens import SessionClaims
from poolscope.config import Role

MUTATING_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
ANONYMOUS = User(name="anonymous", role="viewer")
NOT_LOGGED_IN = "not logged in (or the session expired)"
READS_NEED_LOGIN = "log in to read: this Poolscope has users configured (and anonymous_read is off)"


def get_auth(request: Request) -> AuthService:
    return request.app.state.auth  # type: ignore[no-any-return]


AuthDep = Annotated[AuthService, Depends(get_auth)]


def client_address(request: Request) -> str:
    """The peer address as uvicorn gives it: X-Forwarded-For only counts when it came from one of
    `trusted_proxies` (perimeter/serving.py), and it is never read here."""
    return request.client.host if request.client else "unknown"


def bearer_token(request: Request) -> str | None:
    """The token of `Authorization: Bearer <token>`, or None (cookies are never read)."""
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    return token.strip() or None if scheme.lower() == "bearer" else None


def request_session(request: Request) -> tuple[User, SessionClaims] | None:
    """The user and claims of this request's session token, if it is valid now."""
    return get_auth(request).session_user(bearer_token(request))


def check_limit(limiter: RateLimiter, user: User, request: Request, what: str) -> None:
    """429 with Retry-After once `user` from this address is over `limiter`'s limit."""
    wait = limiter.hit((user.name, client_address(request)))
    if wait is not None:
        raise HTTPException(
            status_code=429,
            detail=f"too many {what} from {user.name}; try again in {wait:.0f} s",
            headers={"Retry-After": f"{wait:.0f}"},
        )


def anonymous_reader(auth: AuthService, request: Request) -> bool:
    """May this request read without a session? (No users at all, or anonymous_read for a GET.)"""
    if request.method in MUTATING_METHODS:
        return False
    return not auth.enabled or auth.settings.anonymous_read


def require_role(role: Role) -> Callable[[Request], Coroutine[Any, Any, User]]:
    """Dependency factory: `Depends(require_role("operator"))` returns the logged-in User."""
    if role not in ROLE_RANK:
        raise ValueError(f"unknown role {role!r}")

    async def dependency(request: Request) -> User:
        auth = get_auth(request)
        if not auth.enabled:
            # Without users, reads stay open (as before auth existed); changes are impossible.
            if role == "viewer" and anonymous_reader(auth, request):
                return ANONYMOUS
            raise HTTPException(status_code=403, detail=NO_USERS_DETAIL)
        found = request_session(request)
        if found is None:
            if role == "viewer" and anonymous_reader(auth, request):
                return ANONYMOUS
            raise HTTPException(status_code=401, detail=NOT_LOGGED_IN)
        user = found[0]
        if ROLE_RANK[user.role] < ROLE_RANK[role]:
            raise HTTPException(
                status_code=403, detail=f"{user.name} is a {user.role}; this needs the {role} role"
            )
        if request.method in MUTATING_METHODS:
            check_limit(auth.mutation_limiter, user, request, "changes")
        request.state.user = user
        return user

    return dependency
