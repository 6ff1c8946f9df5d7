"""Cache-miss ratios over a window, labelled with the regime in which they mean something."""

from __future__ import annotations

from poolscope.analysis.counters import WindowedRatio
from poolscope.schemas import Ratio

POOL_THREAD_CACHE_NOTE = (
    "Under the thread pool, Threads_created counts the pool's own new workers and "
    "thread_cache_size does not apply to pooled connections, so a thread-cache miss ratio "
    "would mislead; watch threads created/s instead."
)


class CacheRatios:
    """Thread-cache and buffer-pool miss ratios for one target, from windowed counter deltas."""

    def __init__(self, window_s: float) -> None:
        self.thread_cache = WindowedRatio(window_s)
        self.buffer_pool = WindowedRatio(window_s)

    def update(self, now: float, status: dict[str, float], thread_handling: str) -> tuple[Ratio, Ratio]:
        self.thread_cache.add(now, status.get("Threads_created"), status.get("Connections"))
        self.buffer_pool.add(
            now, status.get("Innodb_buffer_pool_reads"), status.get("Innodb_buffer_pool_read_requests")
        )
        if thread_handling == "pool-of-threads":
            thread_ratio = Ratio(value=None, regime="pool-of-threads", note=POOL_THREAD_CACHE_NOTE)
        else:
            value, covered = self.thread_cache.value()
            thread_ratio = Ratio(
                value=value,
                window_s=round(covered, 1),
                regime="one-thread-per-connection",
                note=None if value is not None else "no new connections in the window",
            )
        value, covered = self.buffer_pool.value()
        buffer_ratio = Ratio(
            value=value,
            window_s=round(covered, 1),
            note=None if value is not None else "no buffer pool reads in the window",
        )
        return thread_ratio, buffer_ratio
