"""Per-user caps on a running backend: one viewer cannot take every live-channel place, and the apply
preview, which logs in with the admin credential each time, is rate limited; both counted in /metrics."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator

import httpx
import pytest

from poolscope.auth.passwords import hash_password
from poolscope.config import Settings, TargetConfig, UserConfig
from tests.served import login, ready_app

PASSWORDS = {"vi": "caps-viewer-pw", "vi2": "caps-viewer2-pw", "op": "caps-operator-pw"}
ROLES = {"vi": "viewer", "vi2": "viewer", "op": "operator"}


@pytest.fixture(scope="module")
def backend(monitor_dsn: str, admin_dsn: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    settings = Settings(
        store_url=f"sqlite+aiosqlite:///{tmp_path_factory.mktemp('caps') / 'store.db'}",
        users=[
            UserConfig(name=name, role=ROLES[name], password_hash=hash_password(pw))  # type: ignore[arg-type]
            for name, pw in PASSWORDS.items()
        ],
        targets=[TargetConfig(name="db1", dsn=monitor_dsn, admin_dsn=admin_dsn)],
        live_max_subscribers=6,
        live_max_streams_per_user=2,
        previews_per_minute=2,
    )
    with ready_app(settings) as base:
        yield base


def client_of(base: str, name: str) -> httpx.Client:
    client = httpx.Client(base_url=base, timeout=30)
    login(client, name, PASSWORDS[name])
    return client


def refusals(client: httpx.Client, limit: str) -> float:
    found = re.search(
        rf'^poolscope_limit_refusals_total{{limit="{limit}"}} (\S+)$', client.get("/metrics").text, re.M
    )
    assert found is not None
    return float(found.group(1))


def test_one_viewer_cannot_take_every_live_place(backend: str) -> None:
    with (
        contextlib.closing(client_of(backend, "vi")) as vi,
        contextlib.closing(client_of(backend, "vi2")) as vi2,
        contextlib.ExitStack() as open_streams,
    ):
        before = refusals(vi, "live_user")
        for _ in range(2):
            assert open_streams.enter_context(vi.stream("GET", "/api/live")).status_code == 200
        with vi.stream("GET", "/api/live") as third:
            assert third.status_code == 429 and third.headers["Retry-After"]
            third.read()
            assert "live_max_streams_per_user" in third.json()["detail"]
        # Everyone else still gets a place.
        with vi2.stream("GET", "/api/live") as other:
            assert other.status_code == 200
        assert refusals(vi, "live_user") == before + 1


def test_the_apply_preview_is_rate_limited_per_user(backend: str) -> None:
    preview = "/api/targets/db1/apply/preview?variable=thread_pool_stall_limit&value=500"
    with contextlib.closing(client_of(backend, "op")) as op:
        before = refusals(op, "preview")
        codes = [op.get(preview).status_code for _ in range(3)]
        assert codes[:2] == [200, 200] and codes[2] == 429, codes
        assert refusals(op, "preview") == before + 1
