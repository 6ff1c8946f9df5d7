"""The Host allow-list (DNS rebinding) and the refusal to serve an unguarded network port."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator

import httpx
import pytest

from poolscope.perimeter.hosts import allowed_host_names, host_name
from poolscope.perimeter.serving import exposure_problem
from tests.perimeter.helpers import settings_for
from tests.served import ready_app


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Iterator[str]:
    settings = settings_for(
        tmp_path_factory.mktemp("hosts"),
        public_url="https://poolscope.example.com/",
        allowed_hosts=["ops.example.net"],
    )
    with ready_app(settings) as url:
        yield url


@pytest.mark.parametrize(
    "host",
    [
        "127.0.0.1",
        "127.0.0.1:8000",
        "localhost",
        "LOCALHOST:1234",
        "[::1]",
        "[::1]:8000",
        "poolscope.example.com",
        "poolscope.example.com:443",
        "ops.example.net",
    ],
)
def test_allowed_hosts_are_served(base, host):
    assert httpx.get(f"{base}/api/health", headers={"Host": host}, timeout=10).status_code == 200


@pytest.mark.parametrize(
    "host",
    [
        "attacker.example",
        "poolscope.example.com.attacker.example",
        "localhost.attacker.example",
        "10.0.0.1",
        "x:y",
    ],
)
def test_foreign_hosts_get_400_before_anything_runs(base, host):
    for path in ("/api/health", "/api/targets", "/metrics", "/"):
        response = httpx.get(f"{base}{path}", headers={"Host": host}, timeout=10)
        assert response.status_code == 400, (host, path)
        assert "allowed_hosts" in response.json()["detail"]


def test_host_header_parsing():
    assert host_name("Example.COM:80") == "example.com"
    assert host_name("[::1]:8000") == "::1"
    assert host_name("localhost.") == "localhost"
    assert host_name("[::1]x") is None and host_name("a:b") is None
    assert allowed_host_names("0.0.0.0", None, []) == set()
    assert allowed_host_names("10.1.2.3", "http://Dash.Example:8080/x", ["a.b"]) == {
        "10.1.2.3",
        "dash.example",
        "a.b",
    }


def test_settings_refuse_malformed_hosts_and_proxies(tmp_path):
    for bad in (
        {"allowed_hosts": ["https://x.example"]},
        {"allowed_hosts": ["x.example:80"]},
        {"public_url": "poolscope.example.com"},
        {"trusted_proxies": ["proxy.example"]},
        {"trusted_proxies": ["10.0.0.1/8"]},
    ):
        with pytest.raises(ValueError):
            settings_for(tmp_path, **bad)


def test_a_network_address_without_users_is_refused(tmp_path):
    open_settings = settings_for(tmp_path, users=[], listen_host="0.0.0.0")
    assert "allow_unauthenticated_network" in (exposure_problem(open_settings) or "")
    assert exposure_problem(open_settings.model_copy(update={"allow_unauthenticated_network": True})) is None
    assert exposure_problem(settings_for(tmp_path, listen_host="0.0.0.0")) is None  # users guard it
    for loopback in ("127.0.0.1", "::1", "localhost"):
        assert exposure_problem(settings_for(tmp_path, users=[], listen_host=loopback)) is None


def test_serve_refuses_to_start_on_a_network_address_without_users(tmp_path):
    config = tmp_path / "poolscope.toml"
    config.write_text(f'store_url = "sqlite+aiosqlite:///{tmp_path / "store.db"}"\n')
    done = subprocess.run(
        [sys.executable, "-m", "poolscope.cli", "serve", "--config", str(config), "--host", "0.0.0.0"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "refusing to listen on '0.0.0.0'" in done.stderr and "[[users]]" in done.stderr
    assert not (tmp_path / "store.db").exists()  # refused before anything started
