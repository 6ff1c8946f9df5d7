"""Guarded apply: judge a change when its window after ends; revert it on a conclusive "worse" only."""

from __future__ import annotations

import asyncio
import contextlib
import logging

from poolscope.actions.apply import Actor, Applier
from poolscope.actions.audit import AuditLog
from poolscope.actions.compare import judge_change
from poolscope.actions.models import AuditEntry
from poolscope.actions.verdict import headline
from poolscope.clock import SYSTEM, Clock
from poolscope.config import Settings
from poolscope.errors import DomainError
from poolscope.store.sql import SqlStore

log = logging.getLogger(__name__)

GUARD_USER = "poolscope-guard"


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
        verdict = await judge_change(self.store, self.audit, entry, window, self.settings)
        # The verdicts below are recorded only while the change is still watched: a newer change
        # of the variable, or a person's revert, ends the watch (and a revert checks that under
        # the target's lock).
        if verdict.verdict != "worse":
            # Inconclusive (the load moved, another change overlaps) is not a reason to revert.
            await self.audit.end_watch(entry.id, "kept", f"{headline(verdict)} [{window:.0f} s each side]")
            return
        why = "; ".join(verdict.reasons)
        try:
            revert = await self.applier.revert(
                entry.target, entry.id, Actor(GUARD_USER, None), guard_reason=f"worse: {why}"
            )
        except DomainError as exc:
            await self.audit.end_watch(
                entry.id, "interrupted", f"regression ({why}) but the automatic revert failed: {exc.detail}"
            )
            return
        log.warning("target %s: guard reverted change #%d (#%d): %s", entry.target, entry.id, revert.id, why)
