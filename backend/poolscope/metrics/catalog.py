"""Every metric Poolscope stores or exposes, gathered from where each is declared.

Collectors declare theirs as `metrics` (poller/collectors/*), the derive step and the runner
as METRICS (poller/derive.py, poller/target_poller.py), Poolscope's own health in
metrics/own.py. A series two sources feed (tp_queued_connections) is one Metric object that
both list; two different declarations of one name are an error.
"""

from __future__ import annotations

from collections.abc import Iterable

from poolscope.metrics import Metric, own
from poolscope.poller import derive, target_poller
from poolscope.poller.collectors import all_collectors, lookup_collectors


def _gather(declared: Iterable[Metric]) -> dict[str, Metric]:
    catalog: dict[str, Metric] = {}
    for metric in declared:
        known = catalog.setdefault(metric.name, metric)
        if known != metric:
            raise ValueError(f"metric {metric.name!r} is declared twice, differently: {known} and {metric}")
    return catalog


def _declared() -> Iterable[Metric]:
    for collector in (*all_collectors(), *lookup_collectors()):
        yield from collector.metrics
    yield from derive.METRICS
    yield from target_poller.METRICS
    yield from own.METRICS


CATALOG: dict[str, Metric] = _gather(_declared())

# Names a chart may ask the store for.
STORED: frozenset[str] = frozenset(m.name for m in CATALOG.values() if m.stored)


def prometheus_families() -> list[Metric]:
    """Every metric /metrics exposes, in catalog order."""
    return [m for m in CATALOG.values() if m.prometheus is not None]
