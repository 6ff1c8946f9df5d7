"""Bring a store's schema to the newest Alembic revision (run at start-up and by `poolscope migrate`)."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config

# The repo keeps migrations/ at its top level; an installed image copies it beside the package.
CANDIDATES = (
    Path(__file__).resolve().parents[3] / "migrations",
    Path(__file__).resolve().parents[1] / "migrations",
)


def migrations_dir() -> Path:
    for candidate in CANDIDATES:
        if (candidate / "env.py").is_file():
            return candidate
    raise FileNotFoundError("Alembic migrations directory not found next to the poolscope package")


def alembic_config(store_url: str) -> Config:
    """Alembic's configuration for the store at `store_url` (migrations/env.py reads it)."""
    config = Config()
    config.set_main_option("script_location", str(migrations_dir()))
    config.attributes["store_url"] = store_url
    return config


def upgrade_to_head(store_url: str) -> None:
    """Blocking (Alembic's env runs its own event loop): call it from a worker thread."""
    command.upgrade(alembic_config(store_url), "head")
