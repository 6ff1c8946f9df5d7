"""The registry of recommendation rules: adding one means a module here and a line below."""

from poolscope.recommend.base import Rule
from poolscope.recommend.rules import (
    extra_max_connections,
    max_connections,
    thread_cache_size,
    thread_handling,
    thread_pool_exact_stats,
    thread_pool_max_threads,
    thread_pool_oversubscribe,
    thread_pool_size,
    thread_pool_stall_limit,
    transaction_priority,
)

ALL_RULES: tuple[Rule, ...] = (
    thread_pool_size.RULE,
    thread_pool_stall_limit.RULE,
    thread_pool_max_threads.RULE,
    thread_pool_oversubscribe.RULE,
    transaction_priority.RULE,
    thread_pool_exact_stats.RULE,
    thread_cache_size.RULE,
    max_connections.RULE,
    extra_max_connections.RULE,
    thread_handling.RULE,
)
