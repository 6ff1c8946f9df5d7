"""A migrated store for the fleet tests: SQLite (one host) and the private PostgreSQL (many hosts)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from poolscope.store.sql import SqlStore
from tests.stores import make_store


@pytest.fixture
async def store(store_url: str) -> AsyncIterator[SqlStore]:
    sql_store = make_store(store_url)
    try:
        yield sql_store
    finally:
        await sql_store.close()
