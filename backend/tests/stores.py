"""The tests' stores, made one way: a database per dialect (a SQLite file, or a fresh database on
the session's PostgreSQL or MariaDB sandbox), migrated, and a SqlStore with the tests' retention."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from poolscope.store.migrate import upgrade_to_head
from poolscope.store.sql import SqlStore
from poolscope_dev.sandbox import SBTEST_PASSWORD, SBTEST_USER

# Long enough that nothing a test writes ages out while it runs.
RETENTION = {"raw_retention_s": 3600, "rollup_retention_s": 86400}

_databases = itertools.count()


def make_store(url: str, **options: Any) -> SqlStore:
    """A store on `url` (migrated already), with the tests' retention unless told otherwise."""
    return SqlStore(url, **{**RETENTION, **options})


@contextlib.asynccontextmanager
async def migrated_store(url: str, **options: Any) -> AsyncIterator[SqlStore]:
    """`url` migrated, and a store on it, closed on exit."""
    await asyncio.to_thread(upgrade_to_head, url)
    store = make_store(url, **options)
    try:
        yield store
    finally:
        await store.close()


def sqlite_url(directory: Path) -> str:
    return f"sqlite+aiosqlite:///{directory / 'store.db'}"


def new_database(request: pytest.FixtureRequest, dialect: str, directory: Path) -> str:
    """The URL of an empty, unmigrated database of `dialect`: sqlite (a file in `directory`),
    postgresql or mariadb (on the session's sandbox, started by the first test that asks)."""
    if dialect == "sqlite":
        return sqlite_url(directory)
    name = f"poolscope_test_{next(_databases)}"
    if dialect == "postgresql":
        return str(request.getfixturevalue("postgres").create_database(name))
    assert dialect == "mariadb", dialect
    sandbox = request.getfixturevalue("mariadb")
    admin = sandbox.admin_connect()
    try:
        with admin.cursor() as cur:
            cur.execute(f"DROP DATABASE IF EXISTS {name}")
            cur.execute(f"CREATE DATABASE {name}")
            cur.execute(f"GRANT ALL ON {name}.* TO '{SBTEST_USER}'@'127.0.0.1'")
    finally:
        admin.close()
    return f"mysql+aiomysql://{SBTEST_USER}:{SBTEST_PASSWORD}@127.0.0.1:{sandbox.port}/{name}"


def migrated_database(request: pytest.FixtureRequest, dialect: str, directory: Path) -> str:
    url = new_database(request, dialect, directory)
    upgrade_to_head(url)
    return url
