"""performance_schema.metadata_locks: who holds and who waits for table metadata locks.

Read only under pressure, and only where the server runs the Performance Schema; the rows list
nothing unless the `wait/lock/metadata/sql/mdl` instrument is on (MySQL 8: on by default; MariaDB:
off), which mdl_instrument reads so the UI can say how to turn it on. Owners are Performance Schema
thread ids: the poller looks up their connection ids (thread_lookup) for the objects someone waits on.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from poolscope.analysis.holders import MetadataLock
from poolscope.poller.collectors.base import (
    PERFORMANCE_SCHEMA_SELECT,
    Collector,
    CollectorOutput,
    ParseContext,
    Row,
    needs_performance_schema,
    needs_pool,
)
from poolscope.schemas import ServerInfo
from poolscope.values import int_or_none

if TYPE_CHECKING:
    from poolscope.poller.outputs import PollOutputs

MAX_ROWS = 2_000
# Locks on these kinds of object are what statements wait for behind DDL, FLUSH and LOCK TABLES.
OBJECT_TYPES = ("TABLE", "SCHEMA", "GLOBAL", "COMMIT", "FUNCTION", "PROCEDURE", "TRIGGER", "EVENT")


class MetadataLocks(Collector[list[MetadataLock]]):
    name = "metadata_locks"
    help = "Metadata locks held and waited for (performance_schema; read while a group has a queue or is stalled)."
    privilege = PERFORMANCE_SCHEMA_SELECT
    on_pressure = True

    def applies(self, server: ServerInfo) -> str | None:
        if (skipped := needs_pool(server)) is not None:
            return skipped
        if server.version_tuple < ((10, 5, 0) if server.flavor == "mariadb" else (5, 7, 0)):
            return f"performance_schema.metadata_locks not available on {server.flavor} {server.version}"
        return needs_performance_schema(server)

    def sql(self, server: ServerInfo) -> str:
        kinds = ", ".join(f"'{k}'" for k in OBJECT_TYPES)
        return (
            "SELECT OBJECT_TYPE, OBJECT_SCHEMA, OBJECT_NAME, LOCK_TYPE, LOCK_STATUS, OWNER_THREAD_ID"
            f" FROM performance_schema.metadata_locks WHERE OBJECT_TYPE IN ({kinds}) LIMIT {MAX_ROWS}"
        )

    def parse(self, rows: list[Row], ctx: ParseContext) -> CollectorOutput[list[MetadataLock]]:
        locks = []
        for row in rows:
            owner = int_or_none(row["owner_thread_id"])
            if owner is None:
                continue
            name = ".".join(str(p) for p in (row["object_schema"], row["object_name"]) if p)
            locks.append(
                MetadataLock(
                    object=f"{row['object_type']} {name}".strip(),
                    lock_type=str(row["lock_type"]),
                    granted=str(row["lock_status"]).upper() == "GRANTED",
                    owner_thread_id=owner,
                )
            )
        return CollectorOutput(section=locks)

    def put(self, outputs: PollOutputs, section: list[MetadataLock]) -> None:
        outputs.metadata_locks = section
