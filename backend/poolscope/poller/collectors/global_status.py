"""SHOW GLOBAL STATUS (filtered): threads, throughput, aborted connections, buffer pool reads."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from poolscope.metrics import Metric
from poolscope.poller.collectors.base import Collector, CollectorOutput, ParseContext, Row, as_float, sample
from poolscope.schemas import ServerInfo

if TYPE_CHECKING:
    from poolscope.poller.outputs import PollOutputs

GAUGES = {
    "Threads_connected": "threads_connected",
    "Threads_running": "threads_running",
    "Threads_cached": "threads_cached",
    "Threadpool_threads": "pool_threads",
    "Threadpool_idle_threads": "pool_idle_threads",
}
RATES = {
    "Threads_created": "threads_created_per_s",
    "Questions": "qps",
    "Connections": "connections_per_s",
    "Aborted_connects": "aborted_connects_per_s",
    "Aborted_clients": "aborted_clients_per_s",
}
# Read for derived values (TPS, cache ratios) rather than charted directly.
OTHERS = (
    "Com_commit",
    "Com_rollback",
    "Innodb_buffer_pool_reads",
    "Innodb_buffer_pool_read_requests",
    "Max_used_connections",
    "Uptime",
)
NAMES = (*GAUGES, *RATES, *OTHERS)
POOL_STATUS = ("Threadpool_threads", "Threadpool_idle_threads")
# Each rate's status name, metric and counter-memory key, made once.
RATE_KEYS = tuple((name, metric, ("status", name)) for name, metric in RATES.items())
SQL = "SHOW GLOBAL STATUS WHERE Variable_name IN ({})".format(", ".join(f"'{n}'" for n in NAMES))

METRICS = (
    Metric("threads_connected", "Threads_connected", prometheus="poolscope_threads_connected"),
    Metric("threads_running", "Threads_running", prometheus="poolscope_threads_running"),
    Metric("threads_cached", "Threads_cached"),
    Metric("pool_threads", "Threadpool_threads", prometheus="poolscope_pool_threads"),
    Metric("pool_idle_threads", "Threadpool_idle_threads"),
    Metric("threads_created_per_s", "Threads_created rate", unit="per_s"),
    Metric(
        "qps", "Questions rate, less Poolscope's own", unit="per_s", prometheus="poolscope_queries_per_second"
    ),
    Metric("connections_per_s", "Connections rate", unit="per_s"),
    Metric("aborted_connects_per_s", "Aborted_connects rate", unit="per_s"),
    Metric("aborted_clients_per_s", "Aborted_clients rate", unit="per_s"),
    Metric("tps", "commits + rollbacks rate", unit="per_s", prometheus="poolscope_transactions_per_second"),
)


@dataclass
class StatusSection:
    values: dict[str, float] = field(default_factory=dict)
    rates: dict[str, float | None] = field(default_factory=dict)


class GlobalStatus(Collector[StatusSection]):
    name = "global_status"
    help = (
        "Threads_*, Threadpool_*, Questions (QPS, less our own), commits (TPS), Aborted_*, buffer pool reads."
    )
    metrics = METRICS

    def sql(self, server: ServerInfo) -> str:
        return SQL

    def parse(self, rows: list[Row], ctx: ParseContext) -> CollectorOutput[StatusSection]:
        values: dict[str, float] = {}
        for row in rows:
            name, number = _variable(row)
            if number is not None:
                values[name] = number
        return self._output(values, ctx)

    def _output(self, values: dict[str, float], ctx: ParseContext) -> CollectorOutput[StatusSection]:
        rate, now = ctx.counters.rate, ctx.now
        if ctx.server.pool_kind == "mysql_enterprise":
            # The plugin runs the pool: a Percona 9.7 build still lists its idle built-in pool's
            # Threadpool_* status (0), which says nothing about this pool.
            for name in POOL_STATUS:
                values.pop(name, None)
        samples = [sample(metric, values[name]) for name, metric in GAUGES.items() if name in values]
        rates: dict[str, float | None] = {
            metric: rate(key, now, values.get(name)) for name, metric, key in RATE_KEYS
        }
        # Every statement of the poll's multi-statement counts in Questions: without this an idle
        # server would show Poolscope's own ~10 statements/s as its load.
        own_rate = rate(("own", "statements"), now, ctx.own_statements)
        if rates["qps"] is not None and own_rate is not None:
            rates["qps"] = max(rates["qps"] - own_rate, 0.0)
        samples += [sample(metric, rates[metric]) for metric in RATES.values()]
        commits = None
        if "Com_commit" in values and "Com_rollback" in values:
            commits = values["Com_commit"] + values["Com_rollback"]
        rates["tps"] = rate(("status", "transactions"), now, commits)
        samples.append(sample("tps", rates["tps"]))
        return CollectorOutput(section=StatusSection(values=values, rates=rates), samples=samples)

    def put(self, outputs: PollOutputs, section: StatusSection) -> None:
        outputs.global_status = section


def _variable(row: Row) -> tuple[str, float | None]:
    """A status row's name and its value as a number (None when NULL, '' or not a number: the row
    is then left out, and its name not read)."""
    number = as_float(row["value"])
    return (str(row["variable_name"]) if number is not None else ""), number
