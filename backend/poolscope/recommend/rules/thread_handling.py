"""Turning the pool on (thread_handling=pool-of-threads, restart needed) under high concurrency.

One thread per connection spends CPU on context switches and memory on stacks when hundreds of
connections are busy; MySQLTuner suggests the pool above ~512 concurrent connections.
"""

from __future__ import annotations

from poolscope.recommend.base import Clear, Finding, Rule, RuleContext, ev, too_little

HIGH_CONNECTIONS = 512
# ... or this many statements running at once per CPU.
RUNNING_PER_CPU = 4
READ_MORE = "https://mariadb.com/kb/en/thread-pool-in-mariadb/"


def evaluate(ctx: RuleContext) -> Finding | Clear:
    found = ctx.var("thread_handling")
    if found is None:
        return Clear("this flavor enables its pool as a plugin (no thread_handling switch)")
    spec, current = found
    if current != "one-thread-per-connection":
        return Clear(f"{spec.name} is {current}")
    if (short := too_little(ctx, "threads_connected")) is not None:
        return short
    w = ctx.window
    connected = w.peak("threads_connected") or 0.0
    running = w.peak("threads_running") or 0.0
    running_limit = RUNNING_PER_CPU * ctx.cpus if ctx.cpus else None
    busy = running_limit is not None and running >= running_limit
    if connected < HIGH_CONNECTIONS and not busy:
        return Clear(
            f"one thread per connection with at most {connected:.0f} connections and {running:.0f} running:"
            " concurrency is low enough"
        )
    return Finding(
        variable=spec.name,
        current=current,
        proposed="pool-of-threads",
        title="Turn the thread pool on (needs a restart)",
        why=(
            f"Up to {connected:.0f} connections and {running:.0f} running statements over the last"
            f" {w.seconds:.0f} s"
            f"{'' if ctx.cpus is None else f' on {ctx.cpus} CPUs'}, each with its own thread. The pool keeps"
            " about one running thread per CPU and queues the rest, which holds throughput up under bursts."
            " thread_handling is read only at start-up: add the snippet to the config and restart; keep an"
            " extra_port for admins."
        ),
        evidence=[
            ev(spec.name, current),
            ev("peak connections", connected, "threads_connected"),
            ev("peak running statements", running, "threads_running"),
            ev("CPUs", ctx.cpus),
        ],
        severity="warning",
        apply="restart",
        read_more=READ_MORE,
        chart_metrics=["threads_connected", "threads_running", "qps"],
    )


RULE = Rule(
    name="thread_handling",
    title="Thread pool on/off",
    evaluate=evaluate,
    metrics=("threads_connected", "threads_running"),
)
