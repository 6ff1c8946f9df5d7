"""A migrated store for the fleet tests: SQLite (one host) and the private PostgreSQL (many hosts)."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import AsyncIterator

import pytest

from poolscope.store.migrate import upgrade_to_head
from poolscope.store.sql import SqlStore

_databases = itertools.count()


@pytest.fixture(params=["sqlite", "postgresql"])
async def store(request: pytest.FixtureRequest, tmp_path) -> AsyncIterator[SqlStore]:
    if request.param == "postgresql":
        url = request.getfixturevalue("postgres").create_database(f"poolscope_fleet_{next(_databases)}")
    else:
        url = f"sqlite+aiosqlite:///{tmp_path / 'store.db'}"
    async with migrated_store(url) as sql_store:
        yield sql_store


@contextlib.asynccontextmanager
async def migrated_store(url: str) -> AsyncIterator[SqlStore]:
    await asyncio.to_thread(upgrade_to_head, url)
    sql_store = SqlStore(url, raw_retention_s=3600, rollup_retention_s=86400)
    try:
        yield sql_store
    finally:
        await sql_store.close()
