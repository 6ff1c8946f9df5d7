"""Login, bearer sessions, roles and rate limits through the real FastAPI app (no database needed)."""

from __future__ import annotations

import subprocess
import sys
from typing import Annotated

import httpx
import pytest
from fastapi import Depends

from poolscope.auth import User, require_role
from poolscope.auth.passwords import PasswordHashError, check_hash_format, hash_password, verify_password
from poolscope.auth.tokens import TokenSigner
from poolscope.config import Settings, UserConfig
from poolscope.main import create_app

OPERATOR_PW = "operator-test-pw"
VIEWER_PW = "viewer-test-pw"


def make_app(monkeypatch: pytest.MonkeyPatch, **overrides: object):
    monkeypatch.setenv("POOLSCOPE_TEST_VIEWER_PW", VIEWER_PW)
    settings = Settings(
        users=[
            UserConfig(name="op", role="operator", password_hash=hash_password(OPERATOR_PW)),
            UserConfig(name="vi", role="viewer", password_env="POOLSCOPE_TEST_VIEWER_PW"),
        ],
        **overrides,  # type: ignore[arg-type]
    )
    app = create_app(settings, start_poller=False)

    # A mutating route guarded like every real one, so the dependency is tested on its own.
    @app.post("/api/test-change")
    async def change(user: Annotated[User, Depends(require_role("operator"))]) -> dict[str, str]:
        return {"by": user.name}

    @app.get("/api/test-read")
    async def read(user: Annotated[User, Depends(require_role("viewer"))]) -> dict[str, str]:
        return {"as": user.name}

    # The catch-all /api/{path} 404 route was registered first: move ours in front of it.
    app.router.routes.sort(key=lambda r: 0 if getattr(r, "path", "").startswith("/api/test-") else 1)
    return app


def client(app) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1")


async def attempt(c: httpx.AsyncClient, name: str, password: str) -> httpx.Response:
    """A login, the subject of these tests (its refusals too): on success the client sends the
    session token from then on, as the UI does. Tests that only need to be in use tests/served.py."""
    res = await c.post("/api/auth/login", json={"username": name, "password": password})
    if res.status_code == 200:
        c.headers["Authorization"] = f"Bearer {res.json()['token']}"
    return res


def test_password_hash_round_trip_and_format():
    stored = hash_password("s3cret")
    assert stored.startswith("scrypt$14$8$1$")
    assert verify_password("s3cret", stored)
    assert not verify_password("s3cret ", stored)
    assert hash_password("s3cret") != stored  # salted
    for bad in (
        "",
        "scrypt$14$8$1$nope",
        "pbkdf2$1$2$3$aaaa$bbbb",
        "scrypt$99$8$1$AAAA$AAAAAAAAAAAAAAAAAAAAAA==",
    ):
        with pytest.raises(PasswordHashError):
            check_hash_format(bad)


def test_user_config_needs_exactly_one_password_source():
    with pytest.raises(ValueError, match="exactly one"):
        UserConfig(name="x", role="viewer")
    with pytest.raises(ValueError, match="exactly one"):
        UserConfig(name="x", role="viewer", password_env="A", password_hash=hash_password("p"))
    with pytest.raises(ValueError):
        UserConfig(name="x", role="admin", password_env="A")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="scrypt"):
        UserConfig(name="x", role="viewer", password_hash="plain-text-by-mistake")


def test_tokens_reject_tampering_and_expiry():
    signer = TokenSigner(b"k" * 32)
    token, claims = signer.issue("op", ttl_s=60, now=1000)
    assert signer.verify(token, now=1001) == claims
    assert signer.verify(token, now=1061) is None
    version, payload, sig = token.split(".")
    assert signer.verify(f"{version}.{payload}x.{sig}", now=1001) is None
    assert TokenSigner(b"o" * 32).verify(token, now=1001) is None
    assert signer.verify("garbage", now=1001) is None
    # A v2 token (what a cookie of an older Poolscope holds) is refused even when well signed.
    assert signer.verify(f"v2.{payload}.{sig}", now=1001) is None


async def test_login_answers_a_token_and_sets_no_cookie(monkeypatch):
    async with client(make_app(monkeypatch)) as c:
        assert (await c.get("/api/auth/me")).status_code == 401
        res = await attempt(c, "op", OPERATOR_PW)
        assert res.status_code == 200, res.text
        body = res.json()
        assert {k: body[k] for k in ("name", "role")} == {"name": "op", "role": "operator"}
        assert body["token"].startswith("v3.") and body["expires_at"] > 0
        # A cookie would reach every port of this host name (docs/decisions/0200-origin-bound-sessions.md).
        assert res.headers.get_list("set-cookie") == [] and not c.cookies
        assert OPERATOR_PW not in res.text
        assert (await c.get("/api/auth/me")).json() == {"name": "op", "role": "operator"}
        for value in ("Basic " + body["token"], body["token"], "Bearer", "Bearer x.y.z", "Bearer é"):
            res = await c.get("/api/auth/me", headers={"Authorization": value.encode()})
            assert res.status_code == 401, value


async def test_wrong_password_unknown_user_and_env_password(monkeypatch):
    async with client(make_app(monkeypatch)) as c:
        assert (await attempt(c, "op", "wrong")).status_code == 401
        assert (await attempt(c, "nobody", OPERATOR_PW)).status_code == 401
        assert "Authorization" not in c.headers
        assert {
            k: v for k, v in (await attempt(c, "vi", VIEWER_PW)).json().items() if k in ("name", "role")
        } == {
            "name": "vi",
            "role": "viewer",
        }


async def test_mutation_needs_the_bearer_token_and_role(monkeypatch):
    async with client(make_app(monkeypatch)) as c:
        assert (await c.post("/api/test-change")).status_code == 401
        await attempt(c, "vi", VIEWER_PW)
        res = await c.post("/api/test-change")
        assert res.status_code == 403 and "operator" in res.json()["detail"]
        assert (await c.get("/api/test-read")).json() == {"as": "vi"}
    async with client(make_app(monkeypatch)) as c:
        token = (await attempt(c, "op", OPERATOR_PW)).json()["token"]
        ok = await c.post("/api/test-change")
        assert ok.status_code == 200 and ok.json() == {"by": "op"}
        # What a browser sends by itself (cookies) carries nothing: the token in a cookie is not read.
        del c.headers["Authorization"]
        c.cookies.set("poolscope_session", token)
        res = await c.post("/api/test-change")
        assert res.status_code == 401


async def test_logout_revokes_the_session(monkeypatch):
    async with client(make_app(monkeypatch)) as c:
        token = (await attempt(c, "op", OPERATOR_PW)).json()["token"]
        assert (await c.post("/api/auth/logout")).status_code == 204
        assert (await c.get("/api/auth/me")).status_code == 401
        # The old token stays dead when replayed.
        res = await c.post("/api/test-change", headers={"Authorization": f"Bearer {token}"})
        assert res.status_code == 401


async def test_login_is_rate_limited_per_user_and_address(monkeypatch):
    async with client(make_app(monkeypatch, login_attempts_per_minute=3)) as c:
        for _ in range(3):
            assert (await attempt(c, "op", "wrong")).status_code == 401
        limited = await attempt(c, "op", OPERATOR_PW)  # even the right password waits
        assert limited.status_code == 429 and int(limited.headers["Retry-After"]) >= 1
        # Another user name from the same address is still allowed (up to the per-address cap).
        assert (await attempt(c, "vi", VIEWER_PW)).status_code == 200


async def test_mutations_are_rate_limited(monkeypatch):
    async with client(make_app(monkeypatch, mutations_per_minute=2)) as c:
        await attempt(c, "op", OPERATOR_PW)
        assert [(await c.post("/api/test-change")).status_code for _ in range(3)] == [
            200,
            200,
            429,
        ]


async def test_without_users_reads_stay_open_and_changes_are_refused():
    app = create_app(Settings(), start_poller=False)

    @app.post("/api/test-change")
    async def change(user: Annotated[User, Depends(require_role("operator"))]) -> dict[str, str]:
        return {"by": user.name}

    app.router.routes.sort(key=lambda r: 0 if getattr(r, "path", "").startswith("/api/test-") else 1)
    async with client(app) as c:
        res = await c.post("/api/test-change")
        assert res.status_code == 403 and res.json()["detail"].startswith("no users configured")
        assert (await attempt(c, "op", "x")).status_code == 403
        me = await c.get("/api/auth/me")
        assert me.status_code == 401 and "no users configured" in me.json()["detail"]


def test_hash_password_cli_reads_stdin():
    out = subprocess.run(
        [sys.executable, "-m", "poolscope.cli", "hash-password"],
        input="from-stdin\n",
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout.strip()
    assert verify_password("from-stdin", out)
    assert "from-stdin" not in out
