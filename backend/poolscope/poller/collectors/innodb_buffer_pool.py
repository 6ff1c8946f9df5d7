"""information_schema.INNODB_BUFFER_POOL_STATS: pages, free buffers and hit rate (needs PROCESS)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from poolscope.metrics import Metric
from poolscope.poller.collectors.base import Collector, CollectorOutput, ParseContext, Row, as_float, sample
from poolscope.schemas import ServerInfo

if TYPE_CHECKING:
    from poolscope.poller.outputs import PollOutputs

# One dict of INNODB_BUFFER_POOL_STATS columns (lower case) per buffer pool instance.
BufferPoolSection = list[dict[str, float | None]]

METRICS = (
    Metric("buffer_pool_pages", "INNODB_BUFFER_POOL_STATS.POOL_SIZE", unit="pages", labels=("pool",)),
    Metric("buffer_pool_free_pages", "INNODB_BUFFER_POOL_STATS.FREE_BUFFERS", unit="pages", labels=("pool",)),
    Metric(
        "buffer_pool_dirty_pages",
        "INNODB_BUFFER_POOL_STATS.MODIFIED_DATABASE_PAGES",
        unit="pages",
        labels=("pool",),
    ),
)


class InnodbBufferPool(Collector[BufferPoolSection]):
    name = "innodb_buffer_pool"
    help = "Buffer pool size, free and dirty pages per instance (MariaDB >= 10.5 has one)."
    # Pool sizes move slowly; the miss ratio comes from global_status every poll.
    every_s = 10.0
    privilege = "PROCESS"
    metrics = METRICS

    def sql(self, server: ServerInfo) -> str:
        return (
            "SELECT POOL_ID, POOL_SIZE, FREE_BUFFERS, DATABASE_PAGES, MODIFIED_DATABASE_PAGES"
            " FROM information_schema.INNODB_BUFFER_POOL_STATS ORDER BY POOL_ID"
        )

    def parse(self, rows: list[Row], ctx: ParseContext) -> CollectorOutput[BufferPoolSection]:
        pools: BufferPoolSection = []
        samples = []
        for row in rows:
            pool = str(row["pool_id"])
            pools.append({k: as_float(v) for k, v in row.items()})
            samples += [
                sample("buffer_pool_pages", as_float(row["pool_size"]), pool=pool),
                sample("buffer_pool_free_pages", as_float(row["free_buffers"]), pool=pool),
                sample("buffer_pool_dirty_pages", as_float(row["modified_database_pages"]), pool=pool),
            ]
        return CollectorOutput(section=pools, samples=samples)

    def put(self, outputs: PollOutputs, section: BufferPoolSection) -> None:
        outputs.innodb_buffer_pool = section
