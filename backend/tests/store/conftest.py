"""Store test fixtures shared by the writer and rollup-tier tests."""

import itertools

import pytest

from poolscope.store.migrate import upgrade_to_head

_databases = itertools.count()


@pytest.fixture(params=["sqlite", "postgresql"])
def sqlite_pg_url(request, tmp_path):
    """A migrated, empty store on SQLite (the default) and on the private PostgreSQL."""
    if request.param == "sqlite":
        url = f"sqlite+aiosqlite:///{tmp_path}/store.db"
    else:
        url = request.getfixturevalue("postgres").create_database(f"poolscope_store_pg_{next(_databases)}")
    upgrade_to_head(url)
    return url
