"""The whole app (lifespan: store, poller, engines) on a real uvicorn, for tests that use its HTTP API."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

import uvicorn

from poolscope.config import Settings
from poolscope.devtools.sandbox import free_port
from poolscope.main import create_app
from poolscope.perimeter.serving import uvicorn_options


@contextmanager
def uvicorn_app(settings: Settings) -> Iterator[str]:
    """Serve `settings` on a free 127.0.0.1 port in a thread; yields the base URL, stops on exit.

    Not yet ready when yielded: callers wait for what they need (health, a first poll, ...).
    """
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(
            create_app(settings),
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
