"""The undo of a change the server stored differently: the old value goes back and a failed audit row is
written whatever fails on the way, against the real MariaDB sandbox.

The server clamps what SYSTEM_VARIABLES' range let through; the old value is one that range refuses.
A server whose SYSTEM_VARIABLES disagree with its own SET is stood for by narrowing the range read
(`read_meta`); everything else is the real server and the real audit store.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

from poolscope.actions import apply as apply_module
from poolscope.actions.admin import AdminSession
from poolscope.actions.apply import Actor, Applier
from poolscope.actions.audit import AuditLog
from poolscope.actions.models import VariableMeta
from poolscope.config import Settings, TargetConfig
from poolscope.errors import ServerFailed
from poolscope.store.sql import SqlStore
from poolscope_dev.sandbox import ADMIN_USER, MariaDBSandbox
from tests.actions.live import global_value, set_global
from tests.stores import migrated_store, sqlite_url

VARIABLE = "thread_pool_oversubscribe"  # MariaDB stores 1 for anything below 1, with a warning


@pytest.fixture
def restored(mariadb: MariaDBSandbox) -> Iterator[None]:
    before = global_value(mariadb, VARIABLE)
    yield
    set_global(mariadb, **{VARIABLE: int(before)})


@pytest.fixture
async def store(tmp_path) -> AsyncIterator[SqlStore]:
    async with migrated_store(sqlite_url(tmp_path)) as s:
        yield s


async def test_an_old_value_outside_the_range_read_is_restored_and_audited(
    mariadb, monitor_dsn, store, restored, monkeypatch
):
    real_read_meta = apply_module.read_meta

    async def narrowed(session: AdminSession, variable: str) -> VariableMeta:
        meta = await real_read_meta(session, variable)
        return meta.model_copy(update={"min": "0", "max": "4"})  # the server's own range is 1..1000

    monkeypatch.setattr(apply_module, "read_meta", narrowed)
    target = TargetConfig(name="db1", dsn=monitor_dsn, admin_dsn=mariadb.dsn(ADMIN_USER), extra_port=0)
    applier = Applier(Settings(store_url=store.url, targets=[target]), store, AuditLog(store.engine))
    set_global(mariadb, **{VARIABLE: 5})  # 5: outside the range read, so validating it fails

    with pytest.raises(ServerFailed) as failed:
        await applier.apply("db1", VARIABLE, "0", Actor("alice", "127.0.0.1"))

    assert "the server stored 1 instead of 0" in failed.value.detail
    assert "the old value was restored" in failed.value.detail
    assert global_value(mariadb, VARIABLE) == "5"
    entries = await applier.audit.list("db1")
    assert [(e.id, e.result, e.old_value, e.new_value) for e in entries] == [
        (failed.value.audit_id, "failed", "5", "0")
    ]
