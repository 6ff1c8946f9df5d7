"""The collector protocol: one source, its SQL, and a parse step from rows to a section + samples.

The runner owns timing, batching and failure; a collector never does I/O. A collector may
remember what it read to pick its next statement (processlist: by the server's size); it
forgets that on reset(), when its target goes down and may come back as another server.

Query shape rule: one information_schema table per statement, no window functions, no joins or
derived tables between information_schema tables; join in Python instead. Each poll then
creates as few on-disk temporary tables as possible, for as short a time: a server whose tmpdir
is shared with another instance loses those files when the other one starts, and may crash
mid-statement (docs/decisions/0003-plain-statements-decoded-by-the-poller.md).
tests/poller/test_query_safety.py enforces this. A plain
GROUP BY or ORDER BY over a table without TEXT columns stays in memory and is fine: it saves
the poller a row per queued request during a burst (thread_pool_queue_summary).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar

from poolscope.analysis.counters import CounterMemory
from poolscope.metrics import Metric
from poolscope.schemas import Sample, ServerInfo

if TYPE_CHECKING:  # the record names every collector's section type: imported for types only
    from poolscope.poller.outputs import PollOutputs

Row = dict[str, Any]

# The grant MySQL Enterprise's tp_* tables need besides PROCESS (named as the GRANT spells it).
PERFORMANCE_SCHEMA_SELECT = "SELECT ON performance_schema.*"


@dataclass
class ParseContext:
    """What a parse step may read besides its rows: the clock of the poll and counter memory."""

    now: float
    server: ServerInfo
    counters: CounterMemory
    # Statements Poolscope itself had sent on this connection when this collector's ran,
    # itself included, so QPS can leave them out.
    own_statements: int = 0
    # Threads_connected as the previous poll read it (None before one has): lets a source pick
    # the statement that is cheapest at the server's current size for its next read.
    connections: int | None = None


SectionT = TypeVar("SectionT")


@dataclass
class CollectorOutput(Generic[SectionT]):
    section: SectionT
    samples: list[Sample] = field(default_factory=list)


class Collector(Generic[SectionT]):
    """Subclass per source, typed by the section it reads: `class ThreadPoolGroups(Collector[list[GroupState]])`.

    `name` names the source in statuses and the UI; the section goes to its own field of the
    poll's record (put), so derive.py reads it typed, never by a string key.
    """

    name: ClassVar[str]
    help: ClassVar[str]
    # Every series the samples of parse() feed, declared once (in this module or, for a series
    # two sources feed, in the first one's); poolscope/metrics/catalog.py gathers them.
    metrics: ClassVar[tuple[Metric, ...]] = ()
    # Privilege the source needs beyond a plain login; named in the UI when it is missing.
    privilege: ClassVar[str | None] = None
    # Resolution, as in PMM's high/medium/low: 0 runs on every poll; N > 0 runs at most every N s
    # and the poller carries its last section forward in between. Every row costs the poller CPU
    # that competes with the server's own threads on a busy host, so sources that change slowly
    # (variables, buffer pool sizes, cumulative wait counts) are not read every second.
    every_s: ClassVar[float] = 0.0
    # Read only while some group has a queue or is stalled, and on the poll after (who holds the
    # pool, and what blocks them): an idle pool pays nothing for these sources.
    on_pressure: ClassVar[bool] = False

    def applies(self, server: ServerInfo) -> str | None:
        """None when the collector runs on this server, else the reason it is skipped."""
        return None

    def sql(self, server: ServerInfo) -> str:
        raise NotImplementedError

    def reset(self) -> None:
        """Forget what earlier reads taught (the target went down); most collectors keep nothing."""

    def statements(self, server: ServerInfo) -> list[str]:
        """Every statement sql() may return on this server (a source with more than one form)."""
        return [self.sql(server)]

    def parse(self, rows: list[Row], ctx: ParseContext) -> CollectorOutput[SectionT]:
        raise NotImplementedError

    def put(self, outputs: PollOutputs, section: SectionT) -> None:
        """Place this poll's (or the carried) section in its field of the poll's record."""
        raise NotImplementedError

    @property
    def readable_table(self) -> str | None:
        """A table a successful read of this source proves the login can see (MySQL Enterprise's
        tp_* tables, hidden until the grant is given), else None."""
        return None


def needs_pool_table(server: ServerInfo, table: str) -> str | None:
    """Skip reason for the MariaDB THREAD_POOL_* collectors, or None when they apply."""
    if not server.pool_enabled:
        return f"thread pool off (thread_handling={server.thread_handling})"
    if server.pool_kind not in (None, "mariadb"):
        return f"information_schema.{table} is MariaDB's; this {server.pool_kind} pool has its own collectors"
    if table not in server.pool_tables:
        return f"information_schema.{table} not available on {server.flavor} {server.version}"
    return None


def as_float(value: Any) -> float | None:
    if value is None or value == "":
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def sample(metric: str, value: float | None, **labels: str) -> Sample:
    return Sample(metric=metric, labels=labels, value=value)


def needs_pool_kind(server: ServerInfo, kind: str, table: str | None = None) -> str | None:
    """Skip reason for a collector of one pool implementation (flavors.PoolKind), or None."""
    if not server.pool_enabled:
        return f"thread pool off (thread_handling={server.thread_handling})"
    if server.pool_kind != kind:
        return f"only for the {kind} thread pool (this server: {server.pool_kind or server.flavor})"
    # A running pool whose tables this user cannot see: read anyway, so the refusal names the
    # missing grant (and a later GRANT is picked up on the next privilege retry).
    if table is not None and table not in server.pool_tables and server.pool_grant_needed is None:
        return f"performance_schema.{table} not available on {server.flavor} {server.version}"
    return None


def needs_pool(server: ServerInfo) -> str | None:
    """Skip reason for a source of who holds the pool, or None while a pool runs."""
    return None if server.pool_enabled else f"thread pool off (thread_handling={server.thread_handling})"


def mysql_8_or_later(server: ServerInfo) -> bool:
    """MySQL / Percona 8.0+: InnoDB's lock tables moved to performance_schema (data_lock_waits)."""
    return server.flavor != "mariadb" and server.version_tuple >= (8, 0, 0)


def needs_performance_schema(server: ServerInfo) -> str | None:
    """Skip reason for a performance_schema source, or None when the server runs it (or did not say:
    MySQL runs it by default since 5.6.6, MariaDB does not)."""
    running = server.performance_schema
    if running is None:
        running = server.flavor != "mariadb"
    if not running:
        return "performance_schema is OFF (startup only: performance_schema=ON in the server's config)"
    return None
