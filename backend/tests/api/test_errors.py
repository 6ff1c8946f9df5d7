"""Domain errors become HTTP answers in one place (api/errors.py): each kind's status, the
`{"detail": ...}` body FastAPI's own errors have, and the audit-id and Retry-After headers; the
allow-list's refusals are typed, not told apart by their wording."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from poolscope.actions.allowlist import refused
from poolscope.api.errors import AUDIT_ID_HEADER, status_of
from poolscope.config import Settings, TargetConfig
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
from poolscope.main import create_app
from poolscope.snapshots.errors import DocumentRefused

KINDS = [
    (NotConfigured("off"), 403),
    (NotAllowed("no"), 422),
    (InvalidInput("bad"), 422),
    (DocumentRefused("not a snapshot"), 422),
    (NotFound("gone"), 404),
    (Conflict("changed since"), 409),
    (Unavailable("busy"), 503),
    (ServerFailed("refused"), 502),
    (ServerTimeout("no answer"), 504),
]


@pytest.mark.parametrize(("error", "status"), KINDS, ids=[type(e).__name__ for e, _ in KINDS])
async def test_each_kind_is_answered_with_its_status_and_the_detail_body(error: DomainError, status: int):
    app = create_app(Settings(), start_poller=False)

    @app.get("/api/test-error")
    async def fail() -> None:
        raise error

    app.router.routes.sort(key=lambda r: 0 if getattr(r, "path", "") == "/api/test-error" else 1)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        res = await client.get("/api/test-error")
    assert (res.status_code, res.json()) == (status, {"detail": error.detail})
    assert status_of(error) == status
    assert AUDIT_ID_HEADER.lower() not in res.headers and "retry-after" not in res.headers


async def test_audit_id_and_retry_after_become_headers():
    app = create_app(Settings(), start_poller=False)

    @app.get("/api/test-failed")
    async def failed() -> None:
        raise ServerFailed("the server refused", audit_id=7)

    @app.get("/api/test-busy")
    async def busy() -> None:
        raise Unavailable("busy", retry_after_s=3)

    app.router.routes.sort(key=lambda r: 0 if getattr(r, "path", "").startswith("/api/test-") else 1)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        failed_res, busy_res = await asyncio.gather(
            client.get("/api/test-failed"), client.get("/api/test-busy")
        )
    assert failed_res.status_code == 502 and failed_res.headers[AUDIT_ID_HEADER] == "7"
    assert busy_res.status_code == 503 and busy_res.headers["Retry-After"] == "3"


def test_the_allow_list_refuses_with_a_kind_not_a_wording():
    off = TargetConfig(name="db1", dsn="mysql://u@h/")
    on = TargetConfig(name="db1", dsn="mysql://u@h/", admin_dsn="mysql://admin@h/")
    assert isinstance(refused(off, "thread_pool_size"), NotConfigured)
    assert isinstance(refused(on, "innodb_buffer_pool_size"), NotAllowed)
    assert refused(on, "thread_pool_size") is None


async def test_a_missing_snapshot_is_a_404_through_the_real_route(tmp_path):
    settings = Settings(store_url=f"sqlite+aiosqlite:///{tmp_path / 'store.db'}")
    app = create_app(settings, start_poller=False)
    transport = httpx.ASGITransport(app=app)
    client = httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1")
    async with app.router.lifespan_context(app), client:
        res = await client.get("/api/snapshots/999")
    assert (res.status_code, res.json()) == (404, {"detail": "no snapshot 999"})
