"""FastAPI dependencies: `require_role("viewer" | "operator")` for any route that needs a login.

For mutating methods it also checks the CSRF header and the per-user rate limit, in this order:
no users configured → 403 (reads with "viewer" stay open, as user "anonymous"); not logged in → 401
(reads with "viewer" are anonymous too when `anonymous_read` is set); bad CSRF token → 403;
role too low → 403; too many changes → 429. Every route also passes `auth.gate.read_gate` first.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import HTTPException, Request

from poolscope.auth.service import NO_USERS_DETAIL, ROLE_RANK, AuthService, User
from poolscope.auth.tokens import SessionClaims
from poolscope.config import Role

SESSION_COOKIE = "poolscope_session"
CSRF_COOKIE = "poolscope_csrf"
CSRF_HEADER = "X-CSRF-Token"
MUTATING_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
ANONYMOUS = User(name="anonymous", role="viewer")
NOT_LOGGED_IN = "not logged in (or the session expired)"


def get_auth(request: Request) -> AuthService:
    return request.app.state.auth  # type: ignore[no-any-return]


def client_address(request: Request) -> str:
    """The peer address as uvicorn gives it: X-Forwarded-For only counts when it came from one of
    `trusted_proxies` (perimeter/serving.py), and it is never read here."""
    return request.client.host if request.client else "unknown"


def check_csrf(auth: AuthService, request: Request, claims: SessionClaims) -> None:
    """403 unless the CSRF header equals the cookie and is bound to this session."""
    header = request.headers.get(CSRF_HEADER)
    if header is not None and not header.isascii():
        raise HTTPException(status_code=403, detail=f"malformed {CSRF_HEADER} header (must be ASCII)")
    if not auth.signer.csrf_valid(claims.sid, header, request.cookies.get(CSRF_COOKIE)):
        raise HTTPException(
            status_code=403,
            detail=f"missing or wrong {CSRF_HEADER} header (must equal the {CSRF_COOKIE} cookie)",
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
        found = auth.session_user(request.cookies.get(SESSION_COOKIE))
        if found is None:
            if role == "viewer" and anonymous_reader(auth, request):
                return ANONYMOUS
            raise HTTPException(status_code=401, detail=NOT_LOGGED_IN)
        user, claims = found
        if request.method in MUTATING_METHODS:
            check_csrf(auth, request, claims)
        if ROLE_RANK[user.role] < ROLE_RANK[role]:
            raise HTTPException(
                status_code=403, detail=f"{user.name} is a {user.role}; this needs the {role} role"
            )
        if request.method in MUTATING_METHODS:
            wait = auth.mutation_limiter.hit((user.name, client_address(request)))
            if wait is not None:
                raise HTTPException(
                    status_code=429,
                    detail=f"too many changes from {user.name}; try again in {wait:.0f} s",
                    headers={"Retry-After": f"{wait:.0f}"},
                )
        request.state.user = user
        return user

    return dependency
