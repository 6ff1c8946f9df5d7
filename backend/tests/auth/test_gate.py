"""The read gate: every route in the OpenAPI document answers 401 without a session once users exist."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
import pytest

from poolscope.api.probes import PROBE_PATHS
from poolscope.auth.deps import READS_NEED_LOGIN
from poolscope.auth.gate import PUBLIC_API_PATHS
from poolscope.auth.passwords import hash_password
from poolscope.config import Settings, UserConfig
from poolscope.main import create_app

VIEWER_PW = "gate-viewer-pw"
# Routes open to everyone, on purpose (auth/gate.py); /metrics has its own token; the probes
# (api/probes.py) say no more than ready or not without a session.
ALLOWED_OPEN = PUBLIC_API_PATHS | {"/metrics"} | PROBE_PATHS
# Reads the issue names; the walk must reach each (a renamed route would otherwise drop out).
MUST_BE_WALKED = {
    "/api/targets",
    "/api/targets/{name}/state",
    "/api/targets/{name}/queue",
    "/api/targets/{name}/transactions",
    "/api/targets/{name}/metrics",
    "/api/targets/{name}/audit",
    "/api/targets/{name}/recommendations",
    "/api/live",
    "/api/alerts",
    "/api/alerts/history",
    "/api/alerts/rules",
    "/api/snapshots",
    "/api/snapshots/{snapshot_id}",
}

# Reads that show what a change would do: operators only, with or without anonymous_read.
OPERATOR_READS = {"/api/targets/{name}/apply/preview"}


@asynccontextmanager
async def running(tmp_path, **overrides: object) -> AsyncIterator[httpx.AsyncClient]:
    values: dict[str, object] = {
        "store_url": f"sqlite+aiosqlite:///{tmp_path / 'store.db'}",
        "users": [UserConfig(name="vi", role="viewer", password_hash=hash_password(VIEWER_PW))],
        "targets": [{"name": "db1", "dsn": "fixture://mariadb/10.11"}],
    }
    settings = Settings(**(values | overrides))  # type: ignore[arg-type]
    app = create_app(settings, start_poller=False)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            yield client


def concrete(path: str) -> str:
    """A request path for a route template: ids become 1, names db1."""
    return re.sub(r"\{(\w+)\}", lambda m: "1" if m.group(1).endswith("id") else "db1", path)


async def operations(client: httpx.AsyncClient) -> list[tuple[str, str]]:
    doc = (await client.get("/api/openapi.json")).json()
    return [(method.upper(), path) for path, item in doc["paths"].items() for method in item]


async def test_every_route_in_the_openapi_document_needs_a_login(tmp_path):
    async with running(tmp_path) as client:
        ops = await operations(client)
        assert {path for _, path in ops} >= MUST_BE_WALKED
        open_routes = []
        for method, path in ops:
            response = await client.request(method, concrete(path), json={})
            if path in ALLOWED_OPEN:
                open_routes.append(path)
                continue
            assert response.status_code == 401, (method, path, response.status_code, response.text)
            if method == "GET":
                assert response.json()["detail"] == READS_NEED_LOGIN
        assert "/api/health" in open_routes and "/metrics" in open_routes
        me = await client.get("/api/auth/me")
        assert me.status_code == 401 and me.headers["X-Poolscope-Reads"] == "login"
        assert me.json()["detail"] == READS_NEED_LOGIN
        # Not in the document, but not a way around the gate either.
        assert (await client.get("/api/no-such-route")).status_code == 401


async def test_a_session_opens_the_reads(tmp_path):
    async with running(tmp_path) as client:
        login = await client.post("/api/auth/login", json={"username": "vi", "password": VIEWER_PW})
        assert login.status_code == 200
        client.headers["Authorization"] = f"Bearer {login.json()['token']}"
        assert (await client.get("/api/auth/me")).headers["X-Poolscope-Reads"] == "login"
        for path in ("/api/targets", "/api/alerts/rules", "/api/snapshots", "/api/targets/db1/audit"):
            assert (await client.get(path)).status_code == 200, path


async def test_anonymous_read_opens_reads_but_not_changes(tmp_path):
    async with running(tmp_path, anonymous_read=True) as client:
        ops = await operations(client)
        for method, path in ops:
            if path in ALLOWED_OPEN or path == "/api/live":  # the stream would not end
                continue
            response = await client.request(method, concrete(path), json={})
            if method == "GET" and path not in OPERATOR_READS:
                assert response.status_code != 401, (path, response.text)
            else:
                assert response.status_code == 401, (method, path, response.text)
        assert (await client.get("/api/targets")).json()[0]["name"] == "db1"
        # Nobody is logged in, though: the UI shows "Log in", not an "anonymous" user.
        me = await client.get("/api/auth/me")
        assert me.status_code == 401 and me.headers["X-Poolscope-Reads"] == "open"


async def test_without_users_reads_are_open_and_changes_refused(tmp_path):
    async with running(tmp_path, users=[]) as client:
        assert (await client.get("/api/targets")).status_code == 200
        refused = await client.post("/api/snapshots/import", content=b"{}")
        assert refused.status_code == 403 and "no users configured" in refused.json()["detail"]


@pytest.mark.parametrize(
    ("header", "status"),
    [
        (None, 401),
        ("Bearer wrong-token-wrong-token", 401),
        ("Basic bWV0cmljczp4", 401),
        ("Bearer metrics-token-0123456789", 200),
        ("bearer metrics-token-0123456789", 200),
    ],
)
async def test_metrics_token(tmp_path, header, status):
    async with running(tmp_path, metrics_token="metrics-token-0123456789") as client:
        response = await client.get("/metrics", headers={"Authorization": header} if header else {})
        assert response.status_code == status, response.text
        if status == 401:
            assert response.headers["WWW-Authenticate"].startswith("Bearer")
            assert "metrics-token" not in response.text


async def test_metrics_are_open_without_a_token(tmp_path):
    async with running(tmp_path) as client:
        assert (await client.get("/metrics")).status_code == 200
