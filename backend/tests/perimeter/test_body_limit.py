"""The body limit: 413 before anything parses the body, for declared and for streamed (chunked) bodies."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from urllib.parse import urlsplit

import httpx
import pytest

from tests.perimeter.helpers import settings_for
from tests.served import ready_app

MB = 1024 * 1024


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Iterator[str]:
    settings = settings_for(
        tmp_path_factory.mktemp("body"),
        snapshots={"import_max_mb": 1},
        max_body_bytes_by_path={"/api/alerts/silences": 2048},
    )
    with ready_app(settings) as url:
        yield url


def chunks(total: int, size: int = 64 * 1024) -> Iterator[bytes]:
    for _ in range(total // size):
        yield b"x" * size


def test_a_20_mb_login_body_gets_413(base):
    response = httpx.post(
        f"{base}/api/auth/login",
        content=b'{"username": "' + b"x" * 20_000_000 + b'"}',
        headers={"Content-Type": "application/json"},
        timeout=60,
    )
    assert response.status_code == 413
    assert response.json()["detail"] == "request body over the limit of 65536 bytes for this path"


def test_a_chunked_body_without_content_length_gets_413(base):
    response = httpx.post(f"{base}/api/auth/login", content=chunks(20 * MB), timeout=60)
    assert response.status_code == 413
    # The server is fine afterwards, and a small body is still parsed (422 for a wrong shape).
    assert httpx.post(f"{base}/api/auth/login", json={"x": 1}, timeout=10).status_code == 422


def test_413_comes_before_the_body_is_sent(base):
    """Only the headers go out: the answer arrives although not one byte of the body was sent."""
    parts = urlsplit(base)
    with socket.create_connection((parts.hostname, parts.port), timeout=10) as sock:
        sock.sendall(
            b"POST /api/auth/login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Content-Length: 20000000\r\n\r\n"
        )
        answer = sock.recv(4096)
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]


def test_the_import_route_has_its_own_larger_limit(base):
    # 200 KiB passes the body limit there (the login check then refuses it) ...
    below = httpx.post(f"{base}/api/snapshots/import", content=b"{" + b" " * 200 * 1024 + b"}", timeout=30)
    assert below.status_code == 401
    # ... 2 MiB declared is over import_max_mb = 1.
    assert httpx.post(f"{base}/api/snapshots/import", content=b"x" * 2 * MB, timeout=30).status_code == 413


def test_a_per_path_limit_from_the_settings(base):
    assert httpx.post(f"{base}/api/alerts/silences", content=b"x" * 4096, timeout=10).status_code == 413
    assert httpx.post(f"{base}/api/alerts/silences", content=b"x" * 1024, timeout=10).status_code == 401
