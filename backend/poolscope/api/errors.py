"""The one place domain errors (poolscope/errors.py) become HTTP answers: status, `{"detail": ...}`
body and headers, the same shape as FastAPI's own HTTPException answers."""

from __future__ import annotations

from fastapi import FastAPI, Request
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


def add_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(DomainError, domain_error_answer)
