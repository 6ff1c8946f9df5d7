"""FastAPI dependencies: `require_role("viewer" | "operator")` for any route that needs a login.

For mutating methods it also checks the CSRF header and the per-user rate limit, in this order:
no users configured → 403 (reads with "viewer" stay open, as user "anonymous"); not logged in → 401; bad CSRF token → 403; role too low → 403;
too many changes → 429.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import HTTPException, Request

from poolscope.auth.service import NO_USERS_DETAIL, ROLE_RANK, AuthService, User
from poolscope.config import Role

SESSION_COOKIE = "poolscope_session"
CSRF_COOKIE = "poolscope_csrf"
CSRF_HEADER = "X-CSRF-Token"
MUTATING_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
ANONYMOUS = User(name="anonymous", role="viewer")


def get_auth(request: Request) -> AuthService:
    return request.app.state.auth  # type: ignore[no-any-return]


def client_address(request: Request) -> str:
    return request.client.host if request.client else "unknown"


def require_role(role: Role) -> Callable[[Request], Coroutine[Any, Any, User]]:
    """Dependency factory: `Depends(require_role("operator"))` returns the logged-in User."""
    if role not in ROLE_RANK:
        raise ValueError(f"unknown role {role!r}")

    async def dependency(request: Request) -> User:
        auth = get_auth(request)
        if not auth.enabled:
            # Without users, reads stay open (as before auth existed); changes are impossible.
            if role == "viewer" and request.method not in MUTATING_METHODS:
                return ANONYMOUS
            raise HTTPException(status_code=403, detail=NO_USERS_DETAIL)
        found = auth.session_user(request.cookies.get(SESSION_COOKIE))
        if found is None:
            raise HTTPException(status_code=401, detail="not logged in (or the session expired)")
        user, claims = found
        if request.method in MUTATING_METHODS and not auth.signer.csrf_valid(
            claims.sid, request.headers.get(CSRF_HEADER), request.cookies.get(CSRF_COOKIE)
        ):
            raise HTTPException(
                status_code=403,
                detail=f"missing or wrong {CSRF_HEADER} header (must equal the {CSRF_COOKIE} cookie)",
            )
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
