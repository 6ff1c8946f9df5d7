"""Build a RecommendContext from plain numbers, so each rule is tested from data (no server)."""

from __future__ import annotations

from typing import Any

from poolscope.flavors import PERCONA_QUEUE_DEPTH_STATUS, PERCONA_QUEUE_WAIT_STATUS
from poolscope.poller.discovery import MYSQL_TP_TABLES, POOL_TABLES, capabilities
from poolscope.recommend.base import RecommendContext
from poolscope.recommend.window import Window
from poolscope.schemas import SeriesOut, ServerInfo, TargetInfo, TargetState

NOW = 1_700_000_000.0
# A minute of one group queueing with waits near 600 ms and statements of about 1 ms (2 running
# at 1000 QPS): what makes the stall-limit rule propose lowering a 600 ms limit.
LONG_QUEUE_WAITS: dict[str, list[float] | dict[str, list[float]]] = {
    "tp_group_queue_length": {"0": [3] * 60},
    "tp_queue_wait_max_ms": [590] * 60,
    "tp_group_stalled": {"0": [0] * 60},
    "threads_running": [2] * 60,
    "qps": [1000] * 60,
}


def ctx(
    variables: dict[str, str],
    series: dict[str, list[float] | dict[str, list[float]]] | None = None,
    *,
    flavor: str = "mariadb",
    pool: bool = True,
    cpus: int | None = 4,
    state: dict[str, Any] | None = None,
    info: dict[str, Any] | None = None,
    extra_port: int = 0,
) -> RecommendContext:
    """`series`: metric -> values one per second (or label value -> values, for per-group metrics)."""
    out = []
    for metric, values in (series or {}).items():
        per_label = values if isinstance(values, dict) else {"": values}
        for label, points in per_label.items():
            start = NOW - len(points)
            out.append(
                SeriesOut(
                    metric=metric,
                    labels={"group": label} if label else {},
                    points=[(start + i, v) for i, v in enumerate(points)],
                )
            )
    server = ServerInfo(
        flavor=flavor,  # type: ignore[arg-type]
        version="10.11.19-MariaDB",
        version_tuple=(10, 11, 19),
        thread_handling=variables.get(
            "thread_handling", "pool-of-threads" if pool else "one-thread-per-connection"
        ),
        pool_enabled=pool,
        pool_kind=({"mysql": "mysql_enterprise"}.get(flavor, flavor) if pool else None),  # type: ignore[arg-type]
        extra_port=extra_port,
        # What a server of this kind exposes (MariaDB's tables, MySQL's tp_*, Percona 8.4.10+'s
        # queue status): the capabilities discovery would give it.
        pool_tables=list({"mariadb": POOL_TABLES, "mysql": MYSQL_TP_TABLES}.get(flavor, ())) if pool else [],
    )
    server.capabilities = capabilities(
        server, frozenset((*PERCONA_QUEUE_DEPTH_STATUS.values(), *PERCONA_QUEUE_WAIT_STATUS))
    )
    return RecommendContext(
        target="t",
        now=NOW,
        server=server,
        state=TargetState(target="t", ts=NOW, status="up", variables=variables, **(state or {})),
        info=TargetInfo(name="t", status="up", poll_interval_s=1.0, server=server, **(info or {})),
        window=Window(NOW - 300, NOW, out),
        cpus=cpus,
        cpus_source="configured",
    )
