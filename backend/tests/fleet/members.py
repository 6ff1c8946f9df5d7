"""Poller processes of a fleet in one test process, wired as services.py wires them (store,
alert engine with the store's writer, lease keeper with the grace, scheduler), on one test clock;
the test runs their lease rounds (`run`, or `keeper.cycle()` step by step)."""

from __future__ import annotations

import asyncio
import contextlib
from collections import defaultdict

from poolscope.alerts.engine import AlertEngine
from poolscope.alerts.repository import AlertRepository
from poolscope.config import Settings
from poolscope.fleet.leases import LeaseKeeper, rendezvous_owner
from poolscope.poller.scheduler import Scheduler
from poolscope.schemas import Alert, PollEvent
from poolscope.store.sql import SqlStore
from tests.clock import FakeClock

TTL_S = 8.0


class Recorder:
    """The webhook dispatcher's interface: what would be sent."""

    def __init__(self) -> None:
        self.sent: list[tuple[str | None, str]] = []
        self.notified: list[Alert] = []

    def notify(self, alert: Alert) -> None:
        self.sent.append((alert.group, alert.status))
        self.notified.append(alert)


class Member:
    """One poller process of the fleet: its own store connection, alert engine, leases and
    scheduler, wired as services.py wires them; lease rounds are run by the test (cycle)."""

    def __init__(self, node: str, store: SqlStore, clock: FakeClock, settings: Settings) -> None:
        self.node = node
        self.clock = clock
        self.store = store
        store.writer.max_delay_s = 0.01  # each instant of the test clock waits for its batch anyway
        self.recorder = Recorder()
        self.engine = AlertEngine(
            settings.alerts,
            store.hub,
            AlertRepository(store.engine),
            self.recorder,  # type: ignore[arg-type]
            shared_silences=True,
            clock=clock,
            writes=store.writer,
        )
        self.keeper = LeaseKeeper(
            store.engine,
            node,
            lambda: self.scheduler.target_names(),
            ttl_s=TTL_S,
            grace_s=settings.store_outage_grace_s,
            clock=clock,
            store_clock=clock.store_now,
            health=store.health,
        )
        self.scheduler = Scheduler(settings, store, ownership=self.keeper, judge=self.engine, clock=clock)
        self.keeper.add_listener(self.scheduler.on_ownership)
        self.polls: list[float] = []  # ts of every poll this member made
        self.polls_of: dict[str, list[float]] = defaultdict(list)  # the same by target
        self.alive = False

    async def start(self) -> None:
        await self.engine.start(restore=False)
        self.scheduler.start()
        self.alive = True
        self._watch = asyncio.create_task(self._record_polls())

    async def _record_polls(self) -> None:
        async with self.store.hub.subscribe(frozenset({"poll"})) as queue:
            while True:
                event = await queue.get()
                assert isinstance(event, PollEvent)
                self.polls.append(event.ts)
                self.polls_of[event.target].append(event.ts)

    async def stop(self) -> None:
        """A graceful stop, as run_services does it: polling ends, then the leases are freed."""
        self.alive = False
        await self.scheduler.stop()
        await self.keeper.stop()
        await self.engine.stop()

    async def kill(self) -> None:
        """As SIGKILL: the loops end where they are, nothing more is judged, written or freed."""
        self.alive = False
        self.scheduler._running = False
        tasks = [t for t in [*self.scheduler._tasks.values(), self.scheduler._maintenance] if t is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await self.engine.stop()

    async def close(self) -> None:
        self._watch.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._watch
        if self.alive:
            await self.stop()


def stalling_name(owner: str) -> str:
    """A target name that rendezvous hashing gives to `owner` among members a and b."""
    return next(n for n in (f"s{i}" for i in range(100)) if rendezvous_owner(n, ["a", "b"]) == owner)


async def run(clock: FakeClock, members: list[Member], seconds: float) -> None:
    """Move the clock on, a lease round of every live member every renew interval."""
    end = clock.monotonic() + seconds
    while (left := end - clock.monotonic()) > 1e-9:
        await clock.advance(min(left, TTL_S / 3))
        for member in members:
            if member.alive:
                await member.keeper.round()
        for member in members:  # loops a round started: their first poll made
            await clock.settle(*member.scheduler._tasks.values())
