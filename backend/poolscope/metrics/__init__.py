"""Metric declarations: each metric is declared once, beside the code that produces it.

A collector module (or the derive step, or the runner) lists its metrics in a module-level
`METRICS` tuple; poolscope/metrics/catalog.py gathers them. The store's accepted series names,
`/metrics` (api/prometheus.py) and the UI's names (frontend/src/api/metrics.gen.ts, written by
scripts/gen-metrics.py) all come from that catalog.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Kind = Literal["gauge", "counter"]
Aggregation = Literal["avg", "max", "min"]


@dataclass(frozen=True)
class Metric:
    # The stored series name (what /api/targets/{name}/metrics and the UI ask for). A metric that
    # only /metrics exposes (stored=False) is named by its Prometheus name here too.
    name: str
    help: str
    unit: str = ""  # "ms", "s", "per_s", "ratio", "pages", ...; "" for a plain count
    kind: Kind = "gauge"
    # Label keys of each sample, the target aside (every series belongs to one target); for a
    # /metrics-only family (stored=False), its Prometheus labels, target included.
    labels: tuple[str, ...] = ()
    # How a chart bucket combines points by default: a queue spike must survive downsampling.
    agg: Aggregation = "avg"
    # The /metrics family fed from this metric's samples of the last poll; None: not exposed.
    prometheus: str | None = None
    # Stored value x scale = Prometheus value (base units there: ms -> s).
    prometheus_scale: float = 1.0
    # False for a /metrics family rendered from the target's state or Poolscope's own health
    # rather than from stored samples (api/prometheus.py names each such renderer).
    stored: bool = True
