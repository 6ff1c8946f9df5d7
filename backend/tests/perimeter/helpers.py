"""A served app (real uvicorn, started with serve's options) that is ready, for the perimeter tests."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx

from poolscope.auth.passwords import hash_password
from poolscope.config import Settings, UserConfig
from tests.served import uvicorn_app

VIEWER_PW = "perimeter-viewer-pw"


def settings_for(tmp: Path, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "store_url": f"sqlite+aiosqlite:///{tmp / 'store.db'}",
        "users": [UserConfig(name="vi", role="viewer", password_hash=hash_password(VIEWER_PW))],
    }
    values.update(overrides)
    return Settings(**values)


@contextlib.contextmanager
def ready_app(settings: Settings) -> Iterator[str]:
    """Yields the base URL once /api/health answers (within 30 s)."""
    with uvicorn_app(settings) as base:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with contextlib.suppress(httpx.TransportError):
                if httpx.get(f"{base}/api/health", timeout=2).is_success:
                    break
            time.sleep(0.1)
        yield base
