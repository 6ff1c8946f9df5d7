"""The registry of collectors: adding a source means adding a module, a line here and a field in
poller/outputs.py."""

from typing import Any

from poolscope.poller.collectors.base import Collector
from poolscope.poller.collectors.global_status import GlobalStatus
from poolscope.poller.collectors.global_variables import GlobalVariables
from poolscope.poller.collectors.innodb_buffer_pool import InnodbBufferPool
from poolscope.poller.collectors.innodb_trx import InnodbTrx
from poolscope.poller.collectors.innodb_trx_summary import InnodbTrxSummary
from poolscope.poller.collectors.mysql_tp_group_state import MysqlTpGroupState
from poolscope.poller.collectors.mysql_tp_group_stats import MysqlTpGroupStats
from poolscope.poller.collectors.mysql_tp_thread_state import MysqlTpThreadState
from poolscope.poller.collectors.percona_threadpool_status import PerconaThreadpoolStatus
from poolscope.poller.collectors.processlist import Processlist
from poolscope.poller.collectors.thread_pool_groups import ThreadPoolGroups
from poolscope.poller.collectors.thread_pool_queue_summary import ThreadPoolQueueSummary
from poolscope.poller.collectors.thread_pool_queues import ThreadPoolQueues
from poolscope.poller.collectors.thread_pool_stats import ThreadPoolStats
from poolscope.poller.collectors.thread_pool_waits import ThreadPoolWaits


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
    ]
