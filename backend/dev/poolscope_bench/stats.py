"""Small statistics helpers: percentiles, summaries and ABBA pair ratios."""

from __future__ import annotations

import math
import os
import statistics
import threading
from collections.abc import Sequence
from typing import Any


def percentile(values: Sequence[float], q: float) -> float:
    """Linear-interpolated percentile (q in 0..100) of a non-empty sequence."""
    if not values:
        raise ValueError("percentile of an empty sequence")
    ordered = sorted(values)
    if len(ordered) == 1:
        return float(ordered[0])
    pos = (len(ordered) - 1) * q / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return float(ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo))


def summarize(values: Sequence[float], digits: int = 3) -> dict[str, Any]:
    """n, p50, p95, max, mean of a list of numbers (e.g. milliseconds); n=0 gives only n."""
    if not values:
        return {"n": 0}
    return {
        "n": len(values),
        "p50": round(percentile(values, 50), digits),
        "p95": round(percentile(values, 95), digits),
        "max": round(max(values), digits),
        "mean": round(statistics.fmean(values), digits),
    }


def abba_orders(pairs: int) -> list[str]:
    """ "AB", "BA", "AB", "BA", ...: consecutive pairs form A B B A blocks, cancelling drift."""
    return ["AB" if i % 2 == 0 else "BA" for i in range(pairs)]


def median_ratio(ratios: Sequence[float]) -> float | None:
    return round(statistics.median(ratios), 4) if ratios else None


def process_cpu_s(pid: int) -> float | None:
    """User + system CPU seconds a process has used so far (Linux /proc), None if unreadable."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(") ", 1)[1].split()
    except (OSError, IndexError):
        return None
    # After "pid (comm) ", field 3 (state) is index 0, so utime (14) / stime (15) are 11 / 12.
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def thread_run_delay_ms() -> float | None:
    """Milliseconds the calling thread has spent runnable but waiting for a CPU (Linux schedstat).

    The difference over a poll is how long the poller was ready to go on and not scheduled: on a
    host whose cores the load saturates, that is part of a poll's wall time no query change removes.
    """
    try:
        with open(f"/proc/self/task/{threading.get_native_id()}/schedstat") as f:
            return int(f.read().split()[1]) / 1e6
    except (OSError, IndexError, ValueError):
        return None
