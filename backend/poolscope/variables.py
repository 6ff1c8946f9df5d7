"""Every server variable Poolscope reads, in one list: the poller reads them, the apply allow-list is
the settable ones, and the UI's settings table lists them in this order.

Derived from this list: the poll (poller/collectors/global_variables.py, and discovery on connect),
the allow-list of SET GLOBAL (actions/allowlist.py), and the UI's order
(frontend/src/api/variables.gen.ts, `make contract`). What each flavor calls its pool settings, with
units and ranges, is poolscope/flavors.py; every name it uses is on this list (tests/test_variables.py).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ServerVariable:
    name: str
    # On the allow-list of SET GLOBAL: dynamic, understood, and cheap to revert. A target can
    # narrow the list further with `apply_variables`; it can never widen it.
    settable: bool = False
    # SHOW GLOBAL VARIABLES says ON/OFF where @@GLOBAL gives 1/0; everything downstream reads ON/OFF.
    boolean: bool = False


VARIABLES: tuple[ServerVariable, ...] = (
    ServerVariable("thread_pool_size", settable=True),
    ServerVariable("thread_pool_stall_limit", settable=True),
    ServerVariable("thread_pool_oversubscribe", settable=True),
    ServerVariable("thread_pool_max_threads", settable=True),
    ServerVariable("thread_pool_idle_timeout", settable=True),
    ServerVariable("thread_pool_priority", settable=True),
    ServerVariable("thread_pool_prio_kickup_timer", settable=True),
    ServerVariable("thread_pool_dedicated_listener", settable=True, boolean=True),
    ServerVariable("thread_pool_exact_stats", settable=True, boolean=True),
    ServerVariable("thread_cache_size", settable=True),
    ServerVariable("max_connections", settable=True),
    ServerVariable("extra_max_connections", settable=True),
    # Percona's (and AliSQL's) priority queue.
    ServerVariable("thread_pool_high_prio_mode", settable=True),
    ServerVariable("thread_pool_high_prio_tickets", settable=True),
    # MySQL Enterprise thread_pool plugin (stall_limit is in 10 ms units there: poolscope/flavors.py).
    ServerVariable("thread_pool_algorithm"),
    ServerVariable("thread_pool_high_priority_connection"),
    ServerVariable("thread_pool_max_unused_threads"),
    ServerVariable("thread_pool_max_active_query_threads"),
    ServerVariable("thread_pool_query_threads_per_group"),
    ServerVariable("thread_pool_max_transactions_limit"),
    ServerVariable("thread_pool_transaction_delay"),
    ServerVariable("thread_pool_dedicated_listeners"),
    # Alibaba Cloud RDS / MySQL-8-based AliSQL switch their pool with this (enable_pool.py).
    ServerVariable("thread_pool_enabled", boolean=True),
    ServerVariable("thread_handling"),
    ServerVariable("extra_port"),
    ServerVariable("admin_port"),
    ServerVariable("innodb_buffer_pool_size"),
    ServerVariable("innodb_buffer_pool_instances"),
    ServerVariable("version"),
)

NAMES: tuple[str, ...] = tuple(v.name for v in VARIABLES)
SETTABLE: frozenset[str] = frozenset(v.name for v in VARIABLES if v.settable)
BOOLEAN: frozenset[str] = frozenset(v.name for v in VARIABLES if v.boolean)
