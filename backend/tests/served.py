"""The whole app (lifespan: store, poller, engines) on a real uvicorn, for tests that use its HTTP API."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import uvicorn

from poolscope.config import Settings
from poolscope.main import create_app
from poolscope.perimeter.serving import uvicorn_options
from poolscope.services import ServiceRole
from poolscope_dev.sandbox import free_port


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
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with contextlib.suppress(httpx.TransportError):
                if httpx.get(f"{base}/api/health", timeout=2).is_success:
                    break
            time.sleep(0.1)
        yield base
