"""Turning the pool on under high concurrency, the way this flavor and version does it.

One thread per connection spends CPU on context switches and memory on stacks when hundreds of
connections are busy; MySQLTuner suggests the pool above ~512 concurrent connections. What to
change comes from poolscope/enable_pool.py: thread_handling=pool-of-threads (MariaDB, Percona,
AliSQL 5.x; restart), the thread_pool plugin (MySQL, and Percona 9.7.2+ builds without their
built-in pool; restart), or thread_pool_enabled (Alibaba Cloud RDS / MySQL-8-based AliSQL; no
restart). The config snippet is that version's.
"""

from __future__ import annotations

from poolscope.enable_pool import RDS_SWITCH, pool_switch
from poolscope.flavors import percona_plugin_only
from poolscope.recommend.base import (
    Clear,
    RecommendContext,
    RecommendFinding,
    RecommendRule,
    ev,
    pool_on,
    read_more,
    too_little,
)
from poolscope.rules.base import Threshold

HIGH_CONNECTIONS = Threshold(
    name="high_connections",
    default=512,
    unit="connections",
    help="this many connections make the pool worth turning on ...",
)
# ... or this many statements running at once per CPU.
RUNNING_PER_CPU = Threshold(
    name="running_per_cpu",
    default=4,
    unit="statements",
    help="... or this many statements running at once per CPU",
)


def evaluate(ctx: RecommendContext) -> RecommendFinding | Clear:
    server = ctx.server
    if server.pool_enabled:
        return Clear(f"the thread pool is on ({pool_on(ctx)})")
    switch = pool_switch(
        server.flavor, server.version_tuple, RDS_SWITCH in ctx.variables, percona_plugin_only(server)
    )
    if switch is None:
        return Clear(f"no thread pool is known for {server.flavor}")
    if (short := too_little(ctx, "threads_connected")) is not None:
        return short
    w = ctx.window
    connected = w.peak("threads_connected") or 0.0
    running = w.peak("threads_running") or 0.0
    running_limit = ctx.value(RUNNING_PER_CPU) * ctx.cpus if ctx.cpus else None
    busy = running_limit is not None and running >= running_limit
    if connected < ctx.value(HIGH_CONNECTIONS) and not busy:
        return Clear(
            f"one thread per connection with at most {connected:.0f} connections and {running:.0f} running:"
            " concurrency is low enough"
        )
    current = ctx.variables.get(switch.variable, ctx.variables.get("thread_handling"))
    return RecommendFinding(
        variable=switch.variable,
        current=current,
        proposed=switch.value,
        summary=f"Turn the thread pool on ({'needs a restart' if switch.restart else 'no restart needed'})",
        description=(
            f"Up to {connected:.0f} connections and {running:.0f} running statements over the last"
            f" {w.seconds:.0f} s"
            f"{'' if ctx.cpus is None else f' on {ctx.cpus} CPUs'}, each with its own thread. The pool keeps"
            " about one running thread per CPU and queues the rest, which holds throughput up under bursts."
            f" {switch.hint}"
        ),
        evidence=[
            ev("thread_handling", server.thread_handling),
            ev("peak connections", connected, "threads_connected"),
            ev("peak running statements", running, "threads_running"),
            ev("CPUs", ctx.cpus),
        ],
        severity="warning",
        apply="restart" if switch.restart else "live",
        read_more=read_more(ctx, "thread_handling"),
        chart_metrics=["threads_connected", "threads_running", "qps"],
        config_snippet=switch.snippet,
    )


RULE = RecommendRule(
    name="thread_handling",
    help="Thread pool on/off",
    evaluate=evaluate,
    thresholds=(
        HIGH_CONNECTIONS,
        RUNNING_PER_CPU,
    ),
    metrics=("threads_connected", "threads_running"),
)
