"""A store URL for the recommender tests that read real polls: SQLite, and the private PostgreSQL."""

from __future__ import annotations

import itertools

import pytest

_databases = itertools.count()


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest, tmp_path) -> str:
    if request.param == "postgresql":
        return request.getfixturevalue("postgres").create_database(f"poolscope_rec_{next(_databases)}")
    return f"sqlite+aiosqlite:///{tmp_path / 'store.db'}"
