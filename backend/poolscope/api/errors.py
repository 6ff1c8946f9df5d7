"""The one place domain errors (poolscope/errors.py) become HTTP answers: status, `{"detail": ...}`
body and headers, the same shape as FastAPI's own HTTPException answers; and where a request that
does not validate is answered without echoing any of it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from poolscope.errors import (
    Conflict,
    DomainError,
    InvalidInput,
    NotAllowed,
    NotConfigured,
    NotFound,
    ServerFailed,
    ServerTimeout,
    Unavailable,
)

AUDIT_ID_HEADER = "X-Poolscope-Audit-Id"

STATUS: dict[type[DomainError], int] = {
    NotConfigured: 403,
    NotAllowed: 422,
    InvalidInput: 422,
    NotFound: 404,
    Conflict: 409,
    Unavailable: 503,
    ServerFailed: 502,
    ServerTimeout: 504,
}


def status_of(exc: DomainError) -> int:
    """The HTTP status of a domain error (its nearest kind in STATUS; 400 for the bare base)."""
    for kind in type(exc).__mro__:
        if kind in STATUS:
            return STATUS[kind]  # type: ignore[index]
    return 400


def headers_of(exc: DomainError) -> dict[str, str] | None:
    headers: dict[str, str] = {}
    if exc.audit_id is not None:
        headers[AUDIT_ID_HEADER] = str(exc.audit_id)
    if isinstance(exc, Unavailable) and exc.retry_after_s is not None:
        headers["Retry-After"] = str(exc.retry_after_s)
    return headers or None


async def domain_error_answer(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, DomainError)
    return JSONResponse({"detail": exc.detail}, status_code=status_of(exc), headers=headers_of(exc))


# Where a value came from: the first element of a validation error's `loc`.
SOURCES = frozenset({"body", "query", "path", "header", "cookie"})
HIDDEN = "*"


def field_names(app: FastAPI) -> frozenset[str]:
    """Every parameter and property name the OpenAPI document declares (computed once per app)."""
    names: frozenset[str] | None = getattr(app.state, "field_names", None)
    if names is None:
        names = app.state.field_names = frozenset(_names(app.openapi())) | SOURCES
    return names


def _names(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        if isinstance(node.get("properties"), dict):
            yield from node["properties"]
        if isinstance(node.get("name"), str) and "in" in node:
            yield node["name"]
        for value in node.values():
            yield from _names(value)
    elif isinstance(node, list):
        for value in node:
            yield from _names(value)


def problem(error: dict[str, Any], names: frozenset[str]) -> dict[str, Any]:
    """One validation error as where and what, never the value.

    FastAPI's own answer carries `input` (a whole login body, password included) and `ctx`; a key
    the request made up can be in `loc` (an unknown field's name), and a few messages quote the
    value. Only declared names and positions are kept in `loc`, and a message that quotes the
    value gives way to its type.
    """
    loc = [part if isinstance(part, int) or part in names else HIDDEN for part in error.get("loc", ())]
    kind = str(error.get("type", "invalid"))
    message = str(error.get("msg", ""))
    given = error.get("input")
    if isinstance(given, str) and given and given in message:
        message = f"invalid value ({kind})"
    if kind == "extra_forbidden":
        message = "unknown field"
    return {"loc": loc, "msg": message, "type": kind}


async def validation_error_answer(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    names = field_names(request.app)
    return JSONResponse({"detail": [problem(e, names) for e in exc.errors()]}, status_code=422)


def add_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(DomainError, domain_error_answer)
    app.add_exception_handler(RequestValidationError, validation_error_answer)
