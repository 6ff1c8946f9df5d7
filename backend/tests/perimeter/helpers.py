"""Settings for the perimeter tests: a SQLite store and one viewer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from poolscope.auth.passwords import hash_password
from poolscope.config import Settings, UserConfig

VIEWER_PW = "perimeter-viewer-pw"


def settings_for(tmp: Path, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "store_url": f"sqlite+aiosqlite:///{tmp / 'store.db'}",
        "users": [UserConfig(name="vi", role="viewer", password_hash=hash_password(VIEWER_PW))],
    }
    values.update(overrides)
    return Settings(**values)
