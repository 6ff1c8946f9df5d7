"""Guarded apply: watch throughput, queue length and stall rate after a change; revert on a regression."""

from __future__ import annotations

import asyncio
import contextlib
import logging

from poolscope.actions.apply import Actor, Applier
from poolscope.actions.audit import AuditLog
from poolscope.actions.compare import window_means
from poolscope.actions.models import AuditEntry
from poolscope.clock import SYSTEM, Clock
from poolscope.config import Settings
from poolscope.errors import DomainError
from poolscope.store.sql import SqlStore

log = logging.getLogger(__name__)

GUARD_USER = "poolscope-guard"
# Growth in queue length / stall rate must also be this large in absolute terms: 0.1 → 0.3 is
# +200% but means nothing.
MIN_QUEUE_GROWTH = 2.0
MIN_STALL_GROWTH = 0.5
MIN_BASELINE_QPS = 1.0


def regressions(
    before: dict[str, float | None], after: dict[str, float | None], settings: Settings
) -> list[str]:
    """Why the after-window is worse than the before-window (empty: no regression). Pure."""
    out = []
    qps_b, qps_a = before.get("qps"), after.get("qps")
    if (
        qps_b is not None
        and qps_a is not None
        and qps_b >= MIN_BASELINE_QPS
        and qps_a < qps_b * (1 - settings.guard_max_throughput_drop)
    ):
        out.append(
            f"throughput fell {1 - qps_a / qps_b:.0%} ({qps_b:.1f} → {qps_a:.1f} queries/s;"
            f" limit {settings.guard_max_throughput_drop:.0%})"
        )
    q_b, q_a = before.get("tp_group_queue_length"), after.get("tp_group_queue_length")
    if (
        q_b is not None
        and q_a is not None
        and q_a - q_b >= MIN_QUEUE_GROWTH
        and q_a > q_b * (1 + settings.guard_max_queue_growth)
    ):
        out.append(f"mean queue length grew {q_b:.1f} → {q_a:.1f}")
    s_b, s_a = before.get("tp_group_stalls_per_s"), after.get("tp_group_stalls_per_s")
    if (
        s_b is not None
        and s_a is not None
        and s_a - s_b >= MIN_STALL_GROWTH
        and s_a > s_b * (1 + settings.guard_max_stall_growth)
    ):
        out.append(f"stall rate grew {s_b:.2f} → {s_a:.2f} per s")
    return out


def summary(before: dict[str, float | None], after: dict[str, float | None]) -> str:
    def f(v: float | None) -> str:
        return "n/a" if v is None else f"{v:.1f}"

    return (
        f"qps {f(before.get('qps'))} → {f(after.get('qps'))}, queue {f(before.get('tp_group_queue_length'))}"
        f" → {f(after.get('tp_group_queue_length'))}, stalls/s {f(before.get('tp_group_stalls_per_s'))}"
        f" → {f(after.get('tp_group_stalls_per_s'))}"
    )


class Guard:
    def __init__(
        self, settings: Settings, store: SqlStore, audit: AuditLog, applier: Applier, clock: Clock = SYSTEM
    ) -> None:
        self.settings = settings
        self.clock = clock
        self.store = store
        self.audit = audit
        self.applier = applier
        self._tasks: dict[int, asyncio.Task[None]] = {}

    def watch(self, entry: AuditEntry) -> None:
        self._tasks[entry.id] = asyncio.create_task(self._watch(entry), name=f"guard:{entry.id}")

    async def stop(self) -> None:
        tasks = list(self._tasks.values())  # each one removes itself from _tasks as it ends
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._tasks.clear()

    async def _watch(self, entry: AuditEntry) -> None:
        try:
            await self._judge(entry)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.exception("guard of change #%d failed", entry.id)
            await self.audit.end_watch(
                entry.id, "interrupted", f"the guard failed: {type(exc).__name__}: {exc}"
            )
        finally:
            self._tasks.pop(entry.id, None)

    async def _judge(self, entry: AuditEntry) -> None:
        window = self.settings.guard_window_s
        step = self.settings.poll_interval_s
        # Wait for the window, plus one poll so its last second is stored.
        await self.clock.sleep(entry.ts + window + step - self.clock.time())
        current = await self.audit.get(entry.id)
        if current is None or current.guard_status != "watching":
            return  # reverted or superseded meanwhile
        before = await window_means(self.store, entry.target, entry.ts - window, entry.ts - step, step)
        after = await window_means(self.store, entry.target, entry.ts + step, entry.ts + window, step)
        found = regressions(before, after, self.settings)
        numbers = summary(before, after)
        # The verdicts below are recorded only while the change is still watched: a newer change
        # of the variable, or a person's revert, ends the watch (and a revert checks that under
        # the target's lock).
        if not found:
            await self.audit.end_watch(entry.id, "kept", f"no regression in {window:.0f} s: {numbers}")
            return
        why = "; ".join(found)
        try:
            revert = await self.applier.revert(
                entry.target, entry.id, Actor(GUARD_USER, None), guard_reason=f"{why} [{numbers}]"
            )
        except DomainError as exc:
            await self.audit.end_watch(
                entry.id, "interrupted", f"regression ({why}) but the automatic revert failed: {exc.detail}"
            )
            return
        log.warning("target %s: guard reverted change #%d (#%d): %s", entry.target, entry.id, revert.id, why)
