"""A migrated store shared by a writer and a reader, on SQLite and on the private PostgreSQL."""

from __future__ import annotations

import itertools

import pytest

from poolscope.store.migrate import upgrade_to_head

_databases = itertools.count()


def new_postgres_store(postgres) -> str:  # type: ignore[no-untyped-def]
    """A fresh, unmigrated database on the tests' PostgreSQL."""
    return postgres.create_database(f"poolscope_live_{next(_databases)}")


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request, tmp_path):
    if request.param == "sqlite":
        url = f"sqlite+aiosqlite:///{tmp_path}/store.db"
    else:
        url = new_postgres_store(request.getfixturevalue("postgres"))
    upgrade_to_head(url)
    return url
