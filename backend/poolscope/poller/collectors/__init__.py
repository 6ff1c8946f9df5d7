"""The registry of collectors: adding a source means adding a module, a line here and a field in
poller/outputs.py."""

from typing import Any

from poolscope.poller.collectors.base import Collector
from poolscope.poller.collectors.data_lock_waits import DataLockWaits
from poolscope.poller.collectors.global_status import GlobalStatus
from poolscope.poller.collectors.global_variables import GlobalVariables
from poolscope.poller.collectors.innodb_buffer_pool import InnodbBufferPool
from poolscope.poller.collectors.innodb_lock_waits import InnodbLockWaits
from poolscope.poller.collectors.innodb_trx import InnodbTrx
from poolscope.poller.collectors.innodb_trx_summary import InnodbTrxSummary
from poolscope.poller.collectors.mdl_instrument import MdlInstrument
from poolscope.poller.collectors.metadata_locks import MetadataLocks
from poolscope.poller.collectors.mysql_tp_group_state import MysqlTpGroupState
from poolscope.poller.collectors.mysql_tp_group_stats import MysqlTpGroupStats
from poolscope.poller.collectors.mysql_tp_thread_state import MysqlTpThreadState
from poolscope.poller.collectors.percona_threadpool_status import PerconaThreadpoolStatus
from poolscope.poller.collectors.processlist import Processlist
from poolscope.poller.collectors.session_lookup import SessionLookup
from poolscope.poller.collectors.statement_digests import StatementDigests
from poolscope.poller.collectors.thread_lookup import ThreadLookup
from poolscope.poller.collectors.thread_pool_groups import ThreadPoolGroups
from poolscope.poller.collectors.thread_pool_queue_summary import ThreadPoolQueueSummary
from poolscope.poller.collectors.thread_pool_queues import ThreadPoolQueues
from poolscope.poller.collectors.thread_pool_stats import ThreadPoolStats
from poolscope.poller.collectors.thread_pool_waits import ThreadPoolWaits
from poolscope.poller.collectors.trx_lookup import TrxLookup


def all_collectors() -> list[Collector[Any]]:
    return [
        GlobalVariables(),
        GlobalStatus(),
        ThreadPoolGroups(),
        ThreadPoolStats(),
        ThreadPoolQueueSummary(),
        ThreadPoolQueues(),
        ThreadPoolWaits(),
        # Flavor-specific pools (each applies only to its own pool_kind).
        PerconaThreadpoolStatus(),
        MysqlTpGroupState(),
        MysqlTpGroupStats(),
        MysqlTpThreadState(),
        InnodbTrxSummary(),
        InnodbTrx(),
        Processlist(),
        InnodbBufferPool(),
        # Who holds the pool: only while a group has a queue or is stalled, and one poll after.
        InnodbLockWaits(),
        DataLockWaits(),
        MetadataLocks(),
        MdlInstrument(),
        StatementDigests(),
    ]


def lookup_collectors() -> list[Collector[Any]]:
    """The on-demand lookups of the poll's second round trip (the poller runs them itself)."""
    return [SessionLookup(), ThreadLookup(), TrxLookup()]
