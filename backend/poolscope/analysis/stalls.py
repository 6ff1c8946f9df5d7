"""Poolscope's own verdict on whether a thread group is stalled.

IS_STALLED is set only for an instant by the pool's timer (0-2 of ~400 samples in a provoked
stall), so it cannot be the signal. Two independent signals are used:
  * the group's STALLS counter rose since the previous poll (the server's timer saw it), and
  * the poller's own check: the queue is non-empty and no request was dequeued for longer than
    thread_pool_stall_limit. With a large stall_limit STALLS never moves while queries wait
    for seconds; only this check catches that.
"""

from __future__ import annotations

from dataclasses import dataclass

from poolscope.schemas import StallReason


@dataclass
class _GroupProgress:
    dequeues: int
    # Last moment the group was known to make progress (dequeued, or had nothing queued).
    progress_at: float
    stalls: int


class StallDetector:
    """Per-target memory of each group's progress between polls."""

    def __init__(self) -> None:
        self._groups: dict[int, _GroupProgress] = {}

    def judge(
        self,
        group_id: int,
        now: float,
        queue_length: int,
        dequeues: int | None,
        stalls: int | None,
        is_stalled_flag: bool,
        stall_limit_ms: float | None,
    ) -> StallReason | None:
        previous = self._groups.get(group_id)
        reason: StallReason | None = None
        if dequeues is None or stalls is None:
            # Without THREAD_POOL_STATS only the server's instantaneous flag is left.
            return "server_flag" if is_stalled_flag else None
        if previous is None or dequeues < previous.dequeues or stalls < previous.stalls:
            # First sight, or counters were reset: no history to judge from yet.
            self._groups[group_id] = _GroupProgress(dequeues, now, stalls)
            return "server_flag" if is_stalled_flag else None
        progressed = dequeues != previous.dequeues or queue_length == 0
        progress_at = now if progressed else previous.progress_at
        if stalls > previous.stalls:
            reason = "stalls_counter"
        elif not progressed and stall_limit_ms is not None and (now - progress_at) * 1000.0 > stall_limit_ms:
            reason = "no_dequeue"
        elif is_stalled_flag:
            reason = "server_flag"
        self._groups[group_id] = _GroupProgress(dequeues, progress_at, stalls)
        return reason

    def forget(self) -> None:
        self._groups.clear()
