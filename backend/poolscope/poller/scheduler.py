"""Runs every target's poller on its own schedule; polls of one target never overlap.

Where a poll goes, in this order, from the target's own loop: the live hub (SSE clients of this
process), the alert engine (the judge: it judges the poll here, in order, store or no store), then
the store's writer, one consumer among them. A slow or dead target delays only its own next poll;
a store error is logged and the next poll goes on, so one bad second never stops monitoring.

Hundreds of targets in one process: targets started together get their first polls spread over one
interval on a grid of POLL_SLOTS slots (and keep that phase), and polls wait for a turn
(MAX_POLLS_IN_FLIGHT, of which at most MAX_CONNECTS_IN_FLIGHT connect) before their timeout
starts, so a process short of CPU polls late instead of timing out. It did time out: 500 first
polls at the same instant on a busy 2-core machine each took over poll_timeout_s, every connection
was closed, and the retries met the same herd, so at 1,000 targets nothing ever came up.

In a fleet (poolscope/fleet/) the scheduler polls only the targets whose lease this process
holds: the lease is checked before each poll (and again when a queued poll gets its turn), and
the lease keeper tells it (on_ownership) when one is won or given up. It tells the judge in turn:
a target won is taken over (its open alerts read back) before its first poll here, and a target
given up is handed over only once its loop ended, so the polls in flight while its lease moves
are judged here, once; the lease is freed for the new owner after that. The target list can change
while it runs (set_targets): a target whose configuration did not change keeps its poller, its
connection and its schedule.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
from collections.abc import Collection
from typing import Protocol

from poolscope.clock import SYSTEM, Clock
from poolscope.config import Settings, TargetConfig
from poolscope.poller.target_poller import PollResult, TargetPoller
from poolscope.schemas import PollEvent
from poolscope.store.health import FailureLog
from poolscope.store.live import LiveHub
from poolscope.store.sql import SqlStore

log = logging.getLogger(__name__)

# A target that is down is retried with growing pauses, never slower than this.
MAX_RETRY_INTERVAL_S = 10.0
# Polls of this process running at once; the rest wait their turn before their timeout starts.
# Enough for hundreds of targets at 1 s across a WAN (a poll is one or two round trips).
MAX_POLLS_IN_FLIGHT = 128
# Of those, polls that first connect (handshake, discovery, every collector): the costly kind.
MAX_CONNECTS_IN_FLIGHT = 16
# Retries of targets that are down queue apart: a partition of unreachable targets, each holding
# its slot for the connect timeout, must not keep healthy targets from (re)connecting.
MAX_RETRIES_IN_FLIGHT = 16
MAINTENANCE_INTERVAL_S = 30.0
# Polls start on this many slots of an interval, a cohort of targets in each, not each at its own
# instant: a poller then wakes POLL_SLOTS times per interval to send a cohort's statements and
# handles their answers together, instead of being woken and switched out for every target. At
# 300 targets that cut the pollers' CPU per target-poll by ~15 % and their context switches
# 3-4x (docs/decisions/0011-polls-in-cohorts.md). The cost: a poll's wall time (poll_duration_ms) includes
# the loop's work on its cohort's other answers.
POLL_SLOTS = 10
# How long past the poll timeout a stopping target's loop may take to store its last poll.
STOP_GRACE_S = 5.0
# The lease under which one process of a fleet runs store maintenance (not a valid target name).
MAINTENANCE_LEASE = ":store-maintenance"


class _Loop:
    """One target's poll loop: halted ends it after the poll in flight; a loop that is idle
    (asleep, or queued for a turn) is cancelled at once. Its sleep is a plain timer, not a wait
    on an event with a timeout (that made a task per poll)."""

    __slots__ = ("halted", "idle", "task")

    def __init__(self) -> None:
        self.halted = False
        self.idle = False
        self.task: asyncio.Task[None] | None = None

    def halt(self) -> None:
        self.halted = True
        if self.idle and self.task is not None:
            self.task.cancel()


class Ownership(Protocol):
    """Who may poll what; without one (a single process) every target is ours."""

    def holds(self, target: str) -> bool: ...


class Judge(Protocol):
    """What judges the polls (the alert engine): each poll in order, and which targets are its."""

    async def evaluate(self, event: PollEvent) -> None: ...

    async def take_over(self, targets: Collection[str]) -> None: ...

    async def hand_over(self, targets: Collection[str]) -> None: ...


def target_pollers(settings: Settings, clock: Clock = SYSTEM) -> dict[str, TargetPoller]:
    """A poller for each configured target, by name (a Scheduler's `by_name`)."""
    return {t.name: TargetPoller(t, settings, clock=clock) for t in settings.targets}


class Scheduler:
    def __init__(
        self,
        settings: Settings,
        store: SqlStore,
        by_name: dict[str, TargetPoller] | None = None,
        *,
        ownership: Ownership | None = None,
        judge: Judge | None = None,
        hub: LiveHub | None = None,
        clock: Clock = SYSTEM,
    ) -> None:
        self.settings = settings
        self.store = store
        self.ownership = ownership
        self.judge = judge
        self.hub = hub if hub is not None else store.hub
        self.clock = clock
        # Changed in place by set_targets: the snapshot service reads pollers through this dict.
        self.by_name: dict[str, TargetPoller] = (
            by_name if by_name is not None else target_pollers(settings, clock)
        )
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._loops: dict[str, _Loop] = {}
        self._in_flight = asyncio.Semaphore(MAX_POLLS_IN_FLIGHT)
        self._connecting = asyncio.Semaphore(MAX_CONNECTS_IN_FLIGHT)
        self._retrying = asyncio.Semaphore(MAX_RETRIES_IN_FLIGHT)
        self._maintenance: asyncio.Task[None] | None = None
        self._stopping = asyncio.Event()
        self._running = False
        self._origin = clock.monotonic()  # of the slots' grid
        # set_targets and ownership changes run one at a time.
        self._changing = asyncio.Lock()
        self._maintenance_log = FailureLog(log, "store maintenance", clock)
        # Each target's last status and since when (monotonic): a change is logged once.
        self._status: dict[str, tuple[str, float]] = {}

    @property
    def pollers(self) -> list[TargetPoller]:
        return list(self.by_name.values())

    def target_names(self) -> list[str]:
        """What a fleet member asks leases for: every target, and the store maintenance."""
        return [*self.by_name, MAINTENANCE_LEASE]

    def polling(self) -> set[str]:
        """The targets with a running poll loop."""
        return {name for name, task in self._tasks.items() if not task.done()}

    def _may_poll(self, name: str) -> bool:
        return self.ownership is None or self.ownership.holds(name)

    def start(self) -> None:
        self._running = True
        self._start_tasks()
        self._maintenance = asyncio.create_task(self._run_maintenance(), name="store-maintenance")

    async def stop(self) -> None:
        self._stopping.set()
        self._running = False
        await self._stop_tasks(list(self._tasks))
        if self._maintenance is not None:
            self._maintenance.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._maintenance
        for poller in self.by_name.values():
            await poller.close()

    # --- which targets run -----------------------------------------------------------------

    def _start_tasks(self) -> None:
        """Start a loop for every target we may poll that has none, their first polls spread
        over the slots of one interval from the current one on (the same grid as the loops
        already running, so that targets won later join their cohorts)."""
        starting = [
            name
            for name in self.by_name
            if self._may_poll(name) and ((task := self._tasks.get(name)) is None or task.done())
        ]
        slot_s = self.settings.poll_interval_s / POLL_SLOTS
        # The slot we are in: its cohort polls at once, the others at their slots' times.
        start = self._origin + (self.clock.monotonic() - self._origin) // slot_s * slot_s
        for i, name in enumerate(starting):
            loop = self._loops[name] = _Loop()
            first_at = start + (i * POLL_SLOTS // len(starting)) * slot_s
            loop.task = self._tasks[name] = asyncio.create_task(
                self._run_target(self.by_name[name], loop, first_at), name=f"poll:{name}"
            )

    async def _stop_tasks(self, names: list[str]) -> None:
        """End these targets' loops between polls, all at once: a poll in flight finishes, is
        judged and stored (or held for the store) unless it overruns the poll timeout. Their
        connections are closed: a target we do not poll holds none."""
        stopping = []
        for name in names:
            loop = self._loops.pop(name, None)
            if loop is not None:
                loop.halt()
            task = self._tasks.pop(name, None)
            if task is not None:
                stopping.append(task)
        if stopping:
            await asyncio.wait(stopping, timeout=self.settings.poll_timeout_s + STOP_GRACE_S)
        for task in stopping:
            if not task.done():
                task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        # Their polls are written (or held) before anyone else may poll them: a next owner's
        # latest row must not be written before the last one made here.
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(
                self.store.writer.flush(), timeout=self.settings.poll_timeout_s + STOP_GRACE_S
            )
        for name in names:
            if (poller := self.by_name.get(name)) is not None:
                await poller.close()
            # Its polls are stored (or held, by name only): what the store keeps per target to
            # write them would only go stale (and grow with every target that ever passed through
            # this process).
            self.store.forget(name)

    async def on_ownership(self, gained: set[str], lost: set[str]) -> None:
        """Leases changed: stop what we may no longer poll and hand it over to its next judge
        (before its lease is freed), take over what we won, then start polling it."""
        async with self._changing:
            if not self._running:
                return
            await self._stop_tasks([name for name in self._tasks if not self._may_poll(name)])
            if self.judge is not None:
                if lost := lost - {MAINTENANCE_LEASE}:
                    await self.judge.hand_over(lost)
                if gained := gained - {MAINTENANCE_LEASE}:
                    await self.judge.take_over(gained)
            self._start_tasks()

    async def set_targets(self, targets: list[TargetConfig]) -> None:
        """Replace the target list: unchanged targets poll on without a break; removed ones stop;
        added ones start; a changed one restarts with a fresh poller (and connection)."""
        async with self._changing:
            wanted = {t.name: t for t in targets}
            going = [name for name, poller in self.by_name.items() if wanted.get(name) != poller.config]
            await self._stop_tasks(going)
            for name in going:
                del self.by_name[name]
            kept = dict(self.by_name)
            self.by_name.clear()
            for name, config in wanted.items():
                self.by_name[name] = kept.get(name) or TargetPoller(config, self.settings, clock=self.clock)
            if self._running:
                self._start_tasks()

    # --- the loops -------------------------------------------------------------------------

    async def _run_target(self, poller: TargetPoller, loop: _Loop, first_at: float) -> None:
        interval = self.settings.poll_interval_s
        retry = interval
        next_at = first_at
        while not loop.halted:
            if (wait_s := next_at - self.clock.monotonic()) > 0:
                loop.idle = True
                try:
                    await self.clock.sleep(wait_s)  # halt() cancels it
                finally:
                    loop.idle = False
            if loop.halted:
                return
            if not self._may_poll(poller.name):
                # The lease lapsed (the store unreachable, or taken over): stop until it is won back.
                # Return without awaiting, so a lease won back meanwhile finds this loop done and
                # starts a new one; the next ownership change closes the connection (_stop_tasks).
                return
            result = await self._poll(poller, loop, retrying=retry > interval)
            if result is None:
                return
            # The next poll keeps this target's phase (its slot), also after a retry or a poll
            # that overran: targets that stalled together do not end up in one cohort.
            if result.info.status == "down":
                retry = min(retry * 2, MAX_RETRY_INTERVAL_S)
                next_at = _next_tick(next_at, self.clock.monotonic() + retry, interval)
                result.info.retry_in_s = retry  # so the UI says when, not "every 1 s"
            else:
                retry = interval
                # An overrun skips the missed ticks instead of bursting to catch up.
                next_at = _next_tick(next_at, self.clock.monotonic(), interval)
                result.info.retry_in_s = None
            self._say_status(result)
            await self._deliver(result)

    def _say_status(self, result: PollResult) -> None:
        """One log line when a target's status changes (not one per failed poll)."""
        info = result.info
        now = self.clock.monotonic()
        before = self._status.get(info.name)
        if before is not None and before[0] == info.status:
            return
        self._status[info.name] = (info.status, now)
        if info.status == "down":
            log.warning("target %s down: %s; retrying in %g s", info.name, info.reason, info.retry_in_s or 0)
        elif before is not None and before[0] == "down":
            log.info("target %s up again after %.0f s down", info.name, now - before[1])
        elif info.server is not None:
            log.info("target %s up: %s %s", info.name, info.server.flavor, info.server.version)

    async def _deliver(self, result: PollResult) -> None:
        """The poll to each of its consumers in turn; one that fails keeps it from no other."""
        info = result.info
        ts = info.last_poll_at or self.clock.time()
        event = PollEvent(
            target=info.name, ts=ts, target_info=info, state=result.state, samples=list(result.samples)
        )
        try:
            self.hub.publish(event)
        except Exception:
            log.exception("target %s: telling live subscribers of the poll failed", info.name)
        if self.judge is not None:
            try:
                await self.judge.evaluate(event)
            except Exception:
                log.exception("alert evaluation of %s failed", info.name)
        try:
            # Batched with other targets' polls, or held while the store fails (store/writer.py).
            self.store.writer.offer(info, result.state, result.samples, ts=ts)
        except Exception:
            log.exception("target %s: storing the poll failed", info.name)

    async def _poll(self, poller: TargetPoller, loop: _Loop, *, retrying: bool) -> PollResult | None:
        """One poll once it has a turn: its timeout counts from then, not while it queued. A halt
        while it queues cancels it (None: a stop must not wait for the queue). The lease is checked
        again once the turn comes: a poller that queued for seconds may have lost the target to
        another member meanwhile (the lease keeper allows a poll only with a second of lease left,
        which assumed it starts at once)."""
        cold = poller.connection.conn is None
        gate = self._retrying if retrying else self._connecting if cold else contextlib.nullcontext()
        loop.idle = True
        try:
            async with gate, self._in_flight:
                loop.idle = False
                if loop.halted or not self._may_poll(poller.name):
                    return None
                return await poller.poll_once()
        finally:
            loop.idle = False

    async def _run_maintenance(self) -> None:
        while not self._stopping.is_set():
            await self.clock.sleep(MAINTENANCE_INTERVAL_S)  # stop() cancels it
            if not self._may_poll(MAINTENANCE_LEASE):
                continue  # another member of the fleet maintains the store
            try:
                await self.store.maintain()
            except Exception as error:
                self._maintenance_log.failed(error)
            else:
                self._maintenance_log.ok()


def _next_tick(last: float, at: float, interval: float) -> float:
    """The first of `last` + n * `interval` (n >= 1) at or after `at`: `last`'s phase kept."""
    return last + max(math.ceil((at - last) / interval), 1) * interval
