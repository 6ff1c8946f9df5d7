"""The whole app (lifespan: store, poller, engines) on a real uvicorn, for tests that use its HTTP
API, and the tests' one way to log in to it."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import uvicorn

from poolscope.config import Settings
from poolscope.main import create_app
from poolscope.perimeter.serving import uvicorn_options
from poolscope.services import ServiceRole
from poolscope_dev.sandbox import free_port
from tests.waiting import wait_for


@contextmanager
def uvicorn_app(settings: Settings, role: ServiceRole = "all") -> Iterator[str]:
    """Serve `settings` on a free 127.0.0.1 port in a thread; yields the base URL, stops on exit.

    Not yet ready when yielded: callers wait for what they need (health, a first poll, ...).
    """
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(
            create_app(settings, role=role),
            host="127.0.0.1",
            port=port,
            log_level="warning",
            timeout_graceful_shutdown=1,
            # Proxy headers as `poolscope serve` handles them (trusted_proxies only).
            **uvicorn_options(settings),
        )
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=20)


@contextmanager
def ready_app(settings: Settings, role: ServiceRole = "all") -> Iterator[str]:
    """`uvicorn_app`, yielded once /api/health answers (within 30 s)."""
    with uvicorn_app(settings, role) as base:
        with httpx.Client(base_url=base, timeout=2) as client:
            wait_for(lambda: _answers(client), 30, "the app never answered", every_s=0.1)
        yield base


@contextmanager
def served(settings: Settings, login_as: tuple[str, str] | None = None) -> Iterator[httpx.Client]:
    """`uvicorn_app`, with a client yielded once every target's state answers; the client is logged
    in as `login_as` (name, password), since with users every read needs a session."""
    with uvicorn_app(settings) as base:
        client = httpx.Client(base_url=base, timeout=20)
        try:
            if login_as is not None:
                wait_for(lambda: _answers(client), 30, "the app never answered")
                login(client, *login_as)
            wait_for(lambda: _ready(client), 30, "the app never answered with a polled state")
            yield client
        finally:
            client.close()


def login(client: httpx.Client, name: str, password: str) -> dict[str, str]:
    """Log `client` in: it sends the session token from then on. Returns that header, for other
    clients (an SSE reader, a second client) to act as the same session."""
    response = client.post("/api/auth/login", json={"username": name, "password": password})
    assert response.status_code == 200, response.text
    header = {"Authorization": f"Bearer {response.json()['token']}"}
    client.headers.update(header)
    return header


def logged_in(base: str, name: str, password: str) -> httpx.Client:
    """A new client of the app at `base`, logged in as `name`."""
    client = httpx.Client(base_url=base, timeout=30)
    login(client, name, password)
    return client


def wait_for_points(client: httpx.Client, target: str, count: int, metric: str = "target_up") -> None:
    """Until the app has stored `count` points of `target`'s `metric` (polls, by default): history
    before a moment to chart, or to compare with (bounded)."""

    def points() -> int:
        series = client.get(f"/api/targets/{target}/metrics", params={"metric": metric}).json()["series"]
        return len(series[0]["points"]) if series else 0

    wait_for(points, 30, f"fewer than {count} {metric} points of {target}", until=lambda n: n >= count)


def _answers(client: httpx.Client) -> bool:
    try:
        return client.get("/api/health").is_success
    except httpx.TransportError:
        return False


def _ready(client: httpx.Client) -> bool:
    try:
        return all(
            client.get(f"/api/targets/{t['name']}/state").is_success
            for t in client.get("/api/targets").json()
        )
    except httpx.TransportError:
        return False
