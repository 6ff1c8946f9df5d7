"""The one gate every route passes (an app-wide dependency, main.py): /api needs a session once users exist.

Routes are closed unless listed here, so a new route cannot forget its login check. Open:
the login endpoints and health, the UI's files (outside /api), and /metrics, which has its
own optional bearer token. Reads may be opened to everyone with `anonymous_read`.
"""

from __future__ import annotations

import hmac

from fastapi import HTTPException, Request

from poolscope.api.docs import ASSET_PATH, DOCS_PATH
from poolscope.auth.deps import (
    MUTATING_METHODS,
    NOT_LOGGED_IN,
    READS_NEED_LOGIN,
    anonymous_reader,
    get_auth,
    request_session,
)
from poolscope.auth.service import NO_USERS_DETAIL

# Swagger UI's page and files are public, like the document they show: nothing in them is this
# installation's.
PUBLIC_API_PATHS = frozenset(
    {"/api/health", "/api/auth/login", "/api/auth/logout", "/api/auth/me", DOCS_PATH, ASSET_PATH}
)
METRICS_PATH = "/metrics"


def route_path(request: Request) -> str:
    """The matched route's template (`/api/targets/{name}`), else the request path."""
    route = request.scope.get("route")
    return getattr(route, "path", None) or request.scope["path"]


async def read_gate(request: Request) -> None:
    path = route_path(request)
    if path == METRICS_PATH:
        check_metrics_token(request)
        return
    if path in PUBLIC_API_PATHS or not (path == "/api" or path.startswith("/api/")):
        return
    auth = get_auth(request)
    if anonymous_reader(auth, request):
        return
    if not auth.enabled:  # a change with no users at all: nobody could be allowed to make it
        raise HTTPException(status_code=403, detail=NO_USERS_DETAIL)
    if not may_read(request):
        # Changes say "not logged in" as they always have; reads say why a login is needed.
        detail = NOT_LOGGED_IN if request.method in MUTATING_METHODS else READS_NEED_LOGIN
        raise HTTPException(status_code=401, detail=detail)


def may_read(request: Request) -> bool:
    """Reads are open to this request, or its session is (still) valid: not revoked, not expired,
    its password unchanged. The live channel asks again while a stream is open."""
    return anonymous_reader(get_auth(request), request) or request_session(request) is not None


def check_metrics_token(request: Request) -> None:
    """With `metrics_token` set, /metrics needs `Authorization: Bearer <token>` (constant-time check)."""
    token = get_auth(request).settings.metrics_token
    if token is None:
        return
    expected = b"bearer " + token.get_secret_value().encode("utf-8")
    given = b""
    for key, value in request.scope["headers"]:
        if key == b"authorization":
            given = value
            break
    scheme, _, credentials = given.partition(b" ")
    if not hmac.compare_digest(scheme.lower() + b" " + credentials.strip(), expected):
        raise HTTPException(
            status_code=401,
            detail="/metrics needs Authorization: Bearer <metrics_token>",
            headers={"WWW-Authenticate": 'Bearer realm="poolscope-metrics"'},
        )
