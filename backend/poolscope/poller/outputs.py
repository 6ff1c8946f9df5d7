"""One poll's outputs as a typed record: one field per source, read by derive.py.

A field is None when its source did not run or failed this poll; a source read less often
(every_s > 0) fills it with its carried-forward section between reads. Each collector puts its
own section here (Collector.put), so a renamed source or field fails type-checking instead of
yielding a default.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from poolscope.analysis.holders import MetadataLock
from poolscope.analysis.session_identity import SessionIdentity
from poolscope.poller.collectors.global_status import StatusSection
from poolscope.poller.collectors.innodb_buffer_pool import BufferPoolSection
from poolscope.poller.collectors.innodb_lock_waits import LockWaits
from poolscope.poller.collectors.innodb_trx_summary import TrxSummary
from poolscope.poller.collectors.mysql_tp_group_stats import MysqlStatsSection
from poolscope.poller.collectors.percona_threadpool_status import PerconaPoolSection
from poolscope.poller.collectors.processlist import ProcesslistSection
from poolscope.poller.collectors.statement_digests import ServerDigests
from poolscope.poller.collectors.thread_pool_queue_summary import QueueSummary
from poolscope.poller.collectors.thread_pool_stats import GroupCounters
from poolscope.schemas import GroupState, QueuedConnection, ThreadStates, Transaction, WaitReason


@dataclass
class PollOutputs:
    global_variables: dict[str, str] | None = None
    global_status: StatusSection | None = None
    # MariaDB's THREAD_POOL_* tables.
    thread_pool_groups: list[GroupState] | None = None
    thread_pool_stats: dict[int, GroupCounters] | None = None
    thread_pool_queue_summary: QueueSummary | None = None
    thread_pool_queues: list[QueuedConnection] | None = None
    thread_pool_waits: list[WaitReason] | None = None
    # Percona's Threadpool_* status.
    percona_threadpool_status: PerconaPoolSection | None = None
    # MySQL Enterprise's performance_schema.tp_* tables.
    mysql_tp_group_state: list[GroupState] | None = None
    mysql_tp_group_stats: MysqlStatsSection | None = None
    mysql_tp_thread_state: ThreadStates | None = None
    innodb_trx_summary: TrxSummary | None = None
    innodb_trx: list[Transaction] | None = None
    processlist: ProcesslistSection | None = None
    innodb_buffer_pool: BufferPoolSection | None = None
    session_lookup: dict[int, SessionIdentity] | None = None
    # Who holds the pool: read only while a group has a queue or is stalled (Collector.on_pressure).
    innodb_lock_waits: LockWaits | None = None
    metadata_locks: list[MetadataLock] | None = None
    mdl_instrument: bool | None = None
    statement_digests: ServerDigests | None = None
    # The second round trip's lookups: performance_schema thread id -> connection id, and the
    # blocking transactions the listing did not hold.
    thread_lookup: dict[int, int] | None = None
    trx_lookup: list[Transaction] | None = None
    # Tables this poll read successfully that a missing grant can hide (Collector.readable_table).
    readable_tables: set[str] = field(default_factory=set)
