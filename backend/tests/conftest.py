"""Shared fixtures: real, private MariaDB servers (see poolscope_dev.sandbox), and the lanes.

Session-scoped and lazy: a server starts the first time a test asks for it and stops at the
end of the session. Nothing is mocked; mariadb-server must be installed
(scripts/install-system.sh).

Every test is in one lane (a marker, `pytest -m live`; the Makefile runs each lane on its own):
deploy (tests/deploy: wheel, containers, Prometheus, systemd), live (a real MariaDB: a sandbox
fixture, or `pytestmark = pytest.mark.live` in a module that starts its own), dialects (the store
on PostgreSQL or MariaDB: a test parametrized so, or asking for `postgres` or `stoppable_postgres`), and unit (the rest:
replayed fixtures, SQLite, in-process servers).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path

import pytest

from poolscope_dev import replay
from poolscope_dev.mariadb_lines import DEBIAN_LINE, LINES
from poolscope_dev.pgsandbox import PostgresSandbox
from poolscope_dev.sandbox import (
    ADMIN_USER,
    MONITOR_USER,
    NOPROC_USER,
    SBTEST_USER,
    MariaDBSandbox,
)
from tests import FIXTURES_ROOT
from tests.stores import migrated_database

# fixture://<flavor>/<version> targets replay tests/fixtures in every test of this process.
replay.register(FIXTURES_ROOT)

LANES = ("unit", "live", "dialects", "deploy")
_SANDBOXES = frozenset({"mariadb", "mariadb_11_4", "mariadb_line", "mariadb_pool_off"})


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        item.add_marker(_lane(item))


def _lane(item: pytest.Item) -> str:
    if "deploy" in item.path.relative_to(Path(__file__).parent).parts[:1]:
        return "deploy"
    if item.get_closest_marker("live") or _SANDBOXES & set(getattr(item, "fixturenames", ())):
        return "live"
    params = getattr(getattr(item, "callspec", None), "params", {}).values()
    if {"postgres", "stoppable_postgres"} & set(getattr(item, "fixturenames", ())) or any(
        p in ("postgresql", "mariadb") for p in params
    ):
        return "dialects"
    return "unit"


def _pool_sandbox(factory: pytest.TempPathFactory, line: str) -> Iterator[MariaDBSandbox]:
    sb = MariaDBSandbox(
        factory.mktemp(f"mariadb_{line}"),
        thread_handling="pool-of-threads",
        thread_pool_size=2,
        exact_stats=True,
        line=line,
    )
    sb.start()
    try:
        yield sb
    finally:
        sb.destroy()


@pytest.fixture(scope="session")
def mariadb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MariaDBSandbox]:
    """MariaDB 10.11 (Debian's) with the thread pool on: thread_pool_size=2, exact stats ON, an extra_port."""
    yield from _pool_sandbox(tmp_path_factory, DEBIAN_LINE)


@pytest.fixture(scope="session")
def mariadb_11_4(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MariaDBSandbox]:
    """The same on MariaDB 11.4 LTS (from Maven Central, backend/dev/poolscope_dev/mariadb_lines.py)."""
    yield from _pool_sandbox(tmp_path_factory, "11.4")


@pytest.fixture(scope="session", params=LINES)
def mariadb_line(request: pytest.FixtureRequest) -> MariaDBSandbox:
    """Each MariaDB line in turn, for the live tests about what the server line offers (collectors,
    the wire reader, stall detection): one sandbox per line for the whole session. Everything
    else runs on 10.11 only (`mariadb`)."""
    name = "mariadb" if request.param == DEBIAN_LINE else f"mariadb_{request.param.replace('.', '_')}"
    sandbox: MariaDBSandbox = request.getfixturevalue(name)
    return sandbox


@pytest.fixture(scope="session")
def line_dsn(mariadb_line: MariaDBSandbox) -> str:
    """The monitoring login on `mariadb_line` (as monitor_dsn is on `mariadb`)."""
    return mariadb_line.dsn(MONITOR_USER)


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A migrated, empty store on SQLite and on the private PostgreSQL (tests/stores.py)."""
    return migrated_database(request, request.param, tmp_path)


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresSandbox]:
    """A private PostgreSQL (Debian's package), to run the store on PostgreSQL too."""
    pg = PostgresSandbox()
    pg.start()
    try:
        yield pg
    finally:
        pg.destroy()


@pytest.fixture(scope="session")
def stoppable_postgres() -> Iterator[PostgresSandbox]:
    """A second private PostgreSQL, for the tests that stop it (a store outage): the one above
    serves everyone else. Each test that stops it starts it again (tests/store/outage.py)."""
    pg = PostgresSandbox()
    pg.start()
    try:
        yield pg
    finally:
        pg.destroy()


@pytest.fixture(scope="session")
def mariadb_pool_off(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MariaDBSandbox]:
    """MariaDB with one-thread-per-connection and no extra_port (@@extra_port = 0)."""
    sb = MariaDBSandbox(
        tmp_path_factory.mktemp("mariadb_pool_off"),
        extra_port=0,
        thread_handling="one-thread-per-connection",
    )
    sb.start()
    try:
        yield sb
    finally:
        sb.destroy()


@pytest.fixture(scope="session")
def monitor_dsn(mariadb: MariaDBSandbox) -> str:
    """mysql://poolscope_monitor:...@127.0.0.1:PORT/ (PROCESS, REPLICATION CLIENT)."""
    return mariadb.dsn(MONITOR_USER)


@pytest.fixture(scope="session")
def noproc_dsn(mariadb: MariaDBSandbox) -> str:
    """A monitoring login without PROCESS (INNODB_TRX etc. fail with 1227)."""
    return mariadb.dsn(NOPROC_USER)


@pytest.fixture(scope="session")
def admin_dsn(mariadb: MariaDBSandbox) -> str:
    """The separate SUPER / CONNECTION ADMIN credential, for applying variables."""
    return mariadb.dsn(ADMIN_USER)


@pytest.fixture(scope="session")
def sbtest_dsn(mariadb: MariaDBSandbox) -> str:
    """ALL on sbtest.*; the DSN names the sbtest database. For generating load."""
    return mariadb.dsn(SBTEST_USER, database="sbtest")


@pytest.fixture(scope="session")
def pool_off_monitor_dsn(mariadb_pool_off: MariaDBSandbox) -> str:
    return mariadb_pool_off.dsn(MONITOR_USER)


@pytest.fixture(scope="session")
def pool_off_noproc_dsn(mariadb_pool_off: MariaDBSandbox) -> str:
    return mariadb_pool_off.dsn(NOPROC_USER)


@pytest.fixture(autouse=True)
def _gc_as_found() -> Iterator[None]:
    """A test that runs a poller's or an API's services in this process (services.tune_gc) leaves
    the garbage collector as it found it, for the tests after it."""
    threshold, frozen = gc.get_threshold(), gc.get_freeze_count()
    yield
    if gc.get_freeze_count() != frozen:
        gc.unfreeze()
    if gc.get_threshold() != threshold:
        gc.set_threshold(*threshold)
