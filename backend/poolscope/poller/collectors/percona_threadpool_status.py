"""SHOW GLOBAL STATUS LIKE 'Threadpool%' on Percona (and Percona-derived pools such as AliSQL).

Percona's pool has no per-group tables: what it offers is status variables, summed over all
thread groups by the server. Threadpool_threads / Threadpool_idle_threads are numbers (charted by
global_status). Percona 8.4.10-10 added (PS-10083; psmysql-docs/docs/threadpool.md):

- Threadpool_requests_waiting_in_queue / _in_hp_queue: requests queued now, normal and high
  priority, over the whole pool. Their sum feeds tp_queued_connections, the whole-pool queue
  series MariaDB's and MySQL Enterprise's collectors feed, so queue charts and rules work.
- Threadpool_requests_starved_in_queue: normal-priority requests held back while the pool is
  at thread_pool_oversubscribe.
- Threadpool_average_queue_wait_us / _hp_queue_wait_us, valued
  "avg: %.3f, min: %.3f, max: %.3f, dev: %.3f, cnt: %ld" in µs. These are LIFETIME statistics:
  one sample per dequeued request since the server started (sql-common/live_stats.h, Welford's
  algorithm, merged over the groups). Plotted as they are, a stall never shows: the average
  barely moves and the max only rises. So each poll derives the mean wait of the requests
  dequeued since the previous poll, Δ(avg·cnt) / Δcnt; a falling cnt (restart, or the pool
  shrunk so fewer groups are summed) is a reset and yields nothing for that poll. Both queues'
  windows together give tp_queue_wait_window_avg_ms, the whole pool's mean wait per poll.

avg is printed with 3 decimals, so avg·cnt is known to ±0.0005·cnt: on a server up for days
(cnt near 10^9) that is ±0.5 s·request, which a stall's few hundred dequeues of 0.7 s each
still outweigh by far, and a calm poll's thousands of 0.2 ms waits do not. So a figure is kept
when its rounding bound is small relative to the figure itself (MAX_RELATIVE_ERROR), whatever
the uptime: the one-poll figure first, so a stall is never mixed with the calm polls before it;
failing that, the window widens over later polls until the bound is small, for at most
MAX_WINDOW_S.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from poolscope.flavors import PERCONA_QUEUE_DEPTH_STATUS, PERCONA_STARVED_STATUS
from poolscope.metrics import Metric
from poolscope.poller.collectors.base import (
    Collector,
    CollectorOutput,
    ParseContext,
    Row,
    as_float,
    needs_pool_kind,
    sample,
)
from poolscope.poller.collectors.thread_pool_queue_summary import QUEUED_CONNECTIONS
from poolscope.schemas import QueueDepth, QueueWaitStat, Sample, ServerInfo
from poolscope.values import int_or_none

if TYPE_CHECKING:
    from poolscope.poller.outputs import PollOutputs

STAT_FIELDS = ("avg", "min", "max", "dev", "cnt")
_NUMBER = r"([-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)"
# The server's own format; anything else (another fork, a future change) falls back to _PAIR.
_EXACT = re.compile(
    rf"\s*avg:\s*{_NUMBER},\s*min:\s*{_NUMBER},\s*max:\s*{_NUMBER},\s*dev:\s*{_NUMBER},\s*cnt:\s*{_NUMBER}\s*"
)
_PAIR = re.compile(rf"\b(avg|min|max|dev|cnt)\s*[:=]\s*{_NUMBER}")
# A window's mean is kept when the rounding of the printed avg can move it by at most this share
# of itself (or by at most MIN_ROUNDING_US, nothing against any stall limit); else the window
# widens over later polls, for at most MAX_WINDOW_S. See the module docstring.
MAX_RELATIVE_ERROR = 0.05
MIN_ROUNDING_US = 1.0
MAX_WINDOW_S = 60.0

METRICS = (
    Metric("pool_stat_avg", "Threadpool_*_queue_wait_us lifetime mean", unit="us", labels=("stat",)),
    Metric("pool_stat_max", "Threadpool_*_queue_wait_us lifetime max", unit="us", labels=("stat",)),
    Metric(
        "pool_stat_count", "Threadpool_*_queue_wait_us lifetime count of dequeued requests", labels=("stat",)
    ),
    Metric(
        "pool_stat_window_avg",
        "mean queue wait of the requests dequeued since the previous poll",
        unit="us",
        labels=("stat",),
    ),
    Metric(
        "tp_queue_wait_window_avg_ms",
        "mean queue wait of the requests dequeued this poll, both queues",
        unit="ms",
    ),
    QUEUED_CONNECTIONS,
    Metric("pool_queue_requests", "Threadpool_requests_waiting_in_queue / _in_hp_queue", labels=("queue",)),
    Metric("pool_queue_starved", "Threadpool_requests_starved_in_queue"),
)


@dataclass
class PerconaPoolSection:
    numbers: dict[str, float] = field(default_factory=dict)
    stats: list[QueueWaitStat] = field(default_factory=list)
    queue_depth: QueueDepth | None = None

    @property
    def status_names(self) -> frozenset[str]:
        """Every Threadpool_* status the server reported (decides the capabilities)."""
        return frozenset(self.numbers) | frozenset(s.name for s in self.stats)


def parse_stat_string(name: str, value: str) -> QueueWaitStat | None:
    """ "avg: 12.500, min: 1.000, max: 90.000, dev: 4.200, cnt: 300" -> QueueWaitStat; None if not one."""
    exact = _EXACT.fullmatch(value)
    if exact:
        return QueueWaitStat(
            name=name, **{k: float(v) for k, v in zip(STAT_FIELDS, exact.groups(), strict=True)}
        )
    pairs = dict(_PAIR.findall(value))
    if not pairs:
        return None
    return QueueWaitStat(name=name, **{k: float(v) for k, v in pairs.items() if k in STAT_FIELDS})


class PerconaThreadpoolStatus(Collector[PerconaPoolSection]):
    name = "percona_threadpool_status"
    help = (
        "Percona Threadpool_* status: queue depth, and per-poll queue wait from 8.4.10's lifetime statistics."
    )
    metrics = METRICS

    def __init__(self) -> None:
        # stat name -> (time, avg·cnt, cnt) where the current window starts, and of the previous
        # reading (lifetime sums).
        self._previous: dict[str, tuple[float, float, float]] = {}
        self._last: dict[str, tuple[float, float, float]] = {}

    def reset(self) -> None:
        self._previous.clear()
        self._last.clear()

    def applies(self, server: ServerInfo) -> str | None:
        return needs_pool_kind(server, "percona")

    def sql(self, server: ServerInfo) -> str:
        return "SHOW GLOBAL STATUS LIKE 'Threadpool%'"

    def parse(self, rows: list[Row], ctx: ParseContext) -> CollectorOutput[PerconaPoolSection]:
        section = PerconaPoolSection()
        samples: list[Sample] = []
        for row in rows:
            name, raw = str(row["variable_name"]), row["value"]
            text = raw.decode() if isinstance(raw, bytes) else str(raw)
            number = as_float(text)
            if number is not None:
                section.numbers[name] = number
                continue
            stat = parse_stat_string(name, text)
            if stat is None:
                continue
            self._window(stat, ctx.now)
            section.stats.append(stat)
            samples += [
                sample("pool_stat_avg", stat.avg, stat=name),
                sample("pool_stat_max", stat.max, stat=name),
                sample("pool_stat_count", stat.cnt, stat=name),
                sample("pool_stat_window_avg", stat.window_avg, stat=name),
            ]
        if section.stats:
            samples.append(sample("tp_queue_wait_window_avg_ms", _combined_window_ms(section.stats)))
        section.queue_depth = _queue_depth(section.numbers)
        if section.queue_depth is not None:
            depth = section.queue_depth
            samples += [
                sample("tp_queued_connections", _float(depth.total)),
                sample("pool_queue_requests", _float(depth.normal), queue="normal"),
                sample("pool_queue_requests", _float(depth.high), queue="high"),
                sample("pool_queue_starved", _float(depth.starved)),
            ]
        return CollectorOutput(section=section, samples=samples)

    def put(self, outputs: PollOutputs, section: PerconaPoolSection) -> None:
        outputs.percona_threadpool_status = section

    def _window(self, stat: QueueWaitStat, now: float) -> None:
        """Fill window_avg / window_count / window_s from this reading and the window's start."""
        if stat.avg is None or stat.cnt is None:
            return
        reading = (now, stat.avg * stat.cnt, stat.cnt)
        start, last = self._previous.get(stat.name), self._last.get(stat.name)
        self._last[stat.name] = reading
        if start is None or last is None or reading[2] < start[2] or reading[2] < last[2]:
            self._previous[stat.name] = reading  # first reading, or the counts restarted
            return
        # This poll alone first: a stall keeps its own mean instead of sharing the window's.
        if _accurate(last, reading):
            begin = last
        elif _accurate(start, reading) or now - start[0] >= MAX_WINDOW_S:
            begin = start
        else:
            return  # too few requests yet to tell their mean from the rounding: widen the window
        self._previous[stat.name] = reading
        delta = reading[2] - begin[2]
        stat.window_count = delta
        stat.window_s = now - begin[0]
        if delta > 0:
            # The rounding can dip a near-zero mean below zero.
            stat.window_avg = max((reading[1] - begin[1]) / delta, 0.0)


def _accurate(begin: tuple[float, float, float], end: tuple[float, float, float]) -> bool:
    """Whether the mean of the requests dequeued between two readings survives avg's rounding:
    avg·cnt is known to ±0.0005·cnt at each end, so the mean to ±0.0005·(cnt₀+cnt₁)/Δcnt."""
    delta = end[2] - begin[2]
    if delta <= 0:
        return False
    bound = 0.0005 * (begin[2] + end[2]) / delta
    mean = (end[1] - begin[1]) / delta
    return bound <= max(MAX_RELATIVE_ERROR * mean, MIN_ROUNDING_US)


def _combined_window_ms(stats: list[QueueWaitStat]) -> float | None:
    """Mean wait (ms) of every request dequeued in this poll's windows, both queues together."""
    done = [s for s in stats if s.window_avg is not None and s.window_count]
    count = sum(s.window_count or 0.0 for s in done)
    if not count:
        return None
    return sum((s.window_avg or 0.0) * (s.window_count or 0.0) for s in done) / count / 1000.0


def _queue_depth(numbers: dict[str, float]) -> QueueDepth | None:
    values = {key: numbers.get(status) for key, status in PERCONA_QUEUE_DEPTH_STATUS.items()}
    if all(v is None for v in values.values()):
        return None
    starved = numbers.get(PERCONA_STARVED_STATUS)
    return QueueDepth(
        normal=int_or_none(values["normal"]),
        high=int_or_none(values["high"]),
        starved=int_or_none(starved),
    )


def _float(value: int | None) -> float | None:
    return None if value is None else float(value)
