"""The scheduler with many targets in one process, on replayed fixture targets and a real store.

- A poll's timeout counts from its turn, not from when it queued: many targets whose connect
  costs the event loop real work (handshake, discovery on a busy machine) all come up, instead of
  the later ones timing out behind the others and retrying as the same herd.
- Targets started together spread their first polls over one interval, in cohorts on the slots
  of a grid; a poll that overran or a retry keeps its target's slot.
- A sleeping poll loop holds no task of its own besides itself, and a halt ends it at once.

Where the schedule is what is tested, the scheduler runs on a test clock (tests/clock.py); where
the event loop's real work is (connects that cost CPU, hang or queue), on the real one.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import Counter

import pytest
from pydantic import SecretStr

from poolscope.config import Settings, TargetConfig
from poolscope.poller import scheduler as scheduler_module
from poolscope.poller.connection import ConnectError, StatementResult, register_scheme
from poolscope.poller.scheduler import Scheduler
from poolscope.schemas import PollEvent
from poolscope_dev.replay import FixtureConnection
from tests import FIXTURES_ROOT
from tests.clock import FakeClock
from tests.stores import migrated_store, sqlite_url
from tests.waiting import await_for

FIXTURE_DSN = "fixture://percona/8.4.10"
CONNECT_WORK_S = 0.16  # what one connect keeps the loop busy for


class BusyConnect(FixtureConnection):
    """A replayed server whose connect keeps the event loop busy, as a real one does when hundreds
    of targets connect at once on a loaded machine."""

    async def connect(self) -> None:
        await asyncio.sleep(0.01)  # the handshake's round trip: every target's poll has started
        time.sleep(CONNECT_WORK_S)  # noqa: ASYNC251 - blocking on purpose: the loop's CPU, not a wait
        await asyncio.sleep(0.01)  # discovery's round trip
        await super().connect()


class SlowConnect(FixtureConnection):
    """A replayed server half a second away: its connect waits (the loop is free meanwhile)."""

    started = 0  # connects begun, by every SlowConnect

    async def connect(self) -> None:
        SlowConnect.started += 1
        await asyncio.sleep(0.5)  # the network's round trips
        await super().connect()


class Blackholed(FixtureConnection):
    """A server behind a partition: the first connect fails at once (the target is down from the
    start), every retry hangs for the connect timeout before failing."""

    attempts: dict[str, int] = {}

    async def connect(self) -> None:
        n = Blackholed.attempts[self.config.name] = Blackholed.attempts.get(self.config.name, 0) + 1
        if n > 1:
            await asyncio.sleep(BLACKHOLE_HANG_S)
        raise ConnectError("connect timed out (blackholed)")


class HeldLeases:
    """The lease keeper's side the scheduler reads (Ownership): which targets this member holds."""

    def __init__(self, names: set[str]) -> None:
        self.names = set(names)
        self.asked: Counter[str] = Counter()  # how often each target's lease was checked

    def holds(self, target: str) -> bool:
        self.asked[target] += 1
        return target in self.names


BLACKHOLE_HANG_S = 3.0

register_scheme(
    "blackholed",
    lambda config: Blackholed(config.model_copy(update={"dsn": SecretStr(FIXTURE_DSN)}), FIXTURES_ROOT),
)
register_scheme(
    "busyconnect",
    lambda config: BusyConnect(config.model_copy(update={"dsn": SecretStr(FIXTURE_DSN)}), FIXTURES_ROOT),
)
register_scheme(
    "slowconnect",
    lambda config: SlowConnect(config.model_copy(update={"dsn": SecretStr(FIXTURE_DSN)}), FIXTURES_ROOT),
)


@pytest.fixture
async def store(tmp_path):
    """SQLite only: what is tested here is the scheduler, not the store (tests/fleet/conftest.py
    runs both engines)."""
    async with migrated_store(sqlite_url(tmp_path)) as sql_store:
        yield sql_store


async def first_polls(store, names: set[str], timeout_s: float) -> dict[str, PollEvent]:
    """The first poll event of each target (bounded in time)."""
    async with store.hub.subscribe() as queue:
        return await first_polls_on(queue, names, timeout_s)


async def first_polls_on(queue: asyncio.Queue, names: set[str], timeout_s: float) -> dict[str, PollEvent]:
    seen: dict[str, PollEvent] = {}
    end = time.monotonic() + timeout_s
    while set(seen) != names and (left := end - time.monotonic()) > 0:
        try:
            event = await asyncio.wait_for(queue.get(), timeout=left)
        except TimeoutError:
            break
        if isinstance(event, PollEvent):
            seen.setdefault(event.target, event)
    return seen


def on_clock(store, clock: FakeClock, settings: Settings) -> Scheduler:  # type: ignore[no-untyped-def]
    """A scheduler on the test clock; its store's writer batches for 10 ms, not 150 (the polls of
    one instant of the test clock are submitted together anyway, and each instant waits for them)."""
    store.writer.max_delay_s = 0.01
    return Scheduler(settings, store, clock=clock)


async def test_polls_queued_behind_costly_connects_do_not_time_out(store, monkeypatch):
    # 30 connects of 160 ms each: 4.8 s of loop time, well past the 2 s poll timeout if the timeout
    # counted while a poll queued (every target queued past the first dozen would time out). Few
    # targets with costly connects, two connects at a time and polls every 2 s: the up targets'
    # polls (the replay's CPU) stay a small part of a turn, so a machine loaded by the rest of the
    # suite does not time the test out (60 targets of 40 ms, four at a time and a 1 s timeout: 4
    # of 60 timed out at load 9).
    monkeypatch.setattr(scheduler_module, "MAX_CONNECTS_IN_FLIGHT", 2)
    names = {f"busy{i:02d}" for i in range(30)}
    settings = Settings(
        poll_interval_s=2.0,
        poll_timeout_s=2.0,
        targets=[TargetConfig(name=n, dsn="busyconnect://x/") for n in sorted(names)],
    )
    scheduler = Scheduler(settings, store)
    scheduler.start()
    try:
        seen = await first_polls(store, names, timeout_s=60)
    finally:
        await scheduler.stop()
    assert set(seen) == names
    down = {n: e.target_info.reason for n, e in seen.items() if e.target_info.status != "up"}
    assert not down, down


async def test_a_stop_does_not_wait_for_the_polls_still_queued_for_a_turn(store, monkeypatch):
    # One connect at a time, half a second each: 30 targets queue for 15 s.
    monkeypatch.setattr(scheduler_module, "MAX_CONNECTS_IN_FLIGHT", 1)
    settings = Settings(
        poll_interval_s=0.1,
        targets=[TargetConfig(name=f"slow{i:02d}", dsn="slowconnect://x/") for i in range(30)],
    )
    scheduler = Scheduler(settings, store)
    SlowConnect.started = 0
    scheduler.start()
    # One connect done, the next under way, the rest queued behind it.
    await await_for(lambda: SlowConnect.started, 10, "no second connect began", until=lambda n: n >= 2)
    stopping_at = time.monotonic()
    await scheduler.stop()
    assert time.monotonic() - stopping_at < 5.0  # the poll in flight, not the queue behind it
    assert not scheduler.polling()


async def test_targets_started_together_spread_their_first_polls_over_one_interval(store):
    clock = FakeClock()
    names = {f"spread{i:02d}" for i in range(20)}
    settings = Settings(
        poll_interval_s=2.0, targets=[TargetConfig(name=n, dsn=FIXTURE_DSN) for n in sorted(names)]
    )
    scheduler = on_clock(store, clock, settings)
    started = clock.time()
    async with store.hub.subscribe() as queue:
        scheduler.start()
        try:
            await clock.settle(*scheduler._tasks.values())
            await clock.advance(settings.poll_interval_s - 0.01)
            seen = await first_polls_on(queue, names, timeout_s=5)
        finally:
            await scheduler.stop()
    assert set(seen) == names
    offsets = sorted(round(e.target_info.last_poll_at - started, 6) for e in seen.values())
    # 20 targets over 2 s on 10 slots: two at each slot, 0.2 s apart. All at once (the old way)
    # would put them all at 0.
    assert offsets == [round(slot * 0.2, 6) for slot in range(10) for _ in range(2)]


async def test_a_sleeping_loop_holds_no_extra_task_and_a_halt_ends_it_at_once(store):
    clock = FakeClock()
    interval_s = 5.0
    names = [f"idle{i}" for i in range(5)]
    settings = Settings(
        poll_interval_s=interval_s, targets=[TargetConfig(name=n, dsn=FIXTURE_DSN) for n in names]
    )
    scheduler = on_clock(store, clock, settings)
    scheduler.start()
    try:
        await clock.settle(*scheduler._tasks.values())
        await clock.advance(interval_s - 0.01)  # every first poll made
        # Every loop is asleep until its next poll, and so is the store-maintenance loop.
        assert clock.sleeping == len(names) + 1
        tasks = asyncio.all_tasks()
        poll_loops = [t for t in tasks if t.get_name().startswith("poll:")]
        assert len(poll_loops) == len(names)
        # Waiting with a timeout on an event made one more task per target (wait_for, Python 3.11).
        waiters = [t for t in tasks if "wait" in t.get_coro().__qualname__.lower()]
        assert len(waiters) <= 1, waiters  # the store-maintenance loop's, one per scheduler
        stopped_at = time.monotonic()
        await scheduler.set_targets([])  # halts every loop mid-sleep
        # Not left to its stop timeout (poll_timeout_s + STOP_GRACE_S): the test clock never wakes it.
        assert time.monotonic() - stopped_at < scheduler_module.STOP_GRACE_S
        assert not scheduler.polling()
        assert clock.sleeping == 1  # the store-maintenance loop
    finally:
        await scheduler.stop()


async def test_a_poll_whose_lease_lapsed_while_it_queued_is_not_made(store, monkeypatch):
    # One connect at a time, half a second each: 10 targets queue for ~5 s. Meanwhile this member
    # loses half of them (another member holds them now): those must not be polled when their turn
    # comes (the old scheduler checked the lease only before queueing, and polled them all).
    monkeypatch.setattr(scheduler_module, "MAX_CONNECTS_IN_FLIGHT", 1)
    names = [f"queued{i:02d}" for i in range(10)]
    lost = set(names[5:])
    leases = HeldLeases(set(names))
    settings = Settings(
        poll_interval_s=0.1, targets=[TargetConfig(name=n, dsn="slowconnect://x/") for n in names]
    )
    scheduler = Scheduler(settings, store, ownership=leases)
    polled: set[str] = set()
    async with store.hub.subscribe() as queue:
        scheduler.start()
        try:
            # Every loop has checked its lease (once started, once before its first poll): it
            # queues for a turn at once after that (no await between).
            await await_for(
                lambda: leases.asked,
                10,
                "not every loop checked its lease",
                until=lambda asked: all(asked[n] >= 2 for n in names),
            )
            leases.names -= lost
            end = time.monotonic() + 15
            while set(names) - lost - polled and (left := end - time.monotonic()) > 0:
                with contextlib.suppress(TimeoutError):
                    event = await asyncio.wait_for(queue.get(), timeout=left)
                    if isinstance(event, PollEvent):
                        polled.add(event.target)
            # The lost targets' loops end when their turn comes, with or without a poll.
            await await_for(
                lambda: [n for n in lost if not scheduler._tasks[n].done()],
                15,
                lambda queued: f"loops still queued: {queued}",
                until=lambda queued: not queued,
            )
            while not queue.empty():
                event = queue.get_nowait()
                if isinstance(event, PollEvent):
                    polled.add(event.target)
        finally:
            await scheduler.stop()
    assert set(names) - lost <= polled
    assert not polled & lost, sorted(polled & lost)


async def test_retries_of_unreachable_targets_do_not_hold_up_a_healthy_connect(store, monkeypatch):
    # One connect slot. Twelve blackholed targets go down at once, then retry every few seconds,
    # each retry hanging 3 s: queued with first connects they would keep the one slot busy for
    # ~36 s per round, and a healthy target added now would wait behind them.
    monkeypatch.setattr(scheduler_module, "MAX_CONNECTS_IN_FLIGHT", 1)
    Blackholed.attempts.clear()
    down = [f"partitioned{i:02d}" for i in range(12)]
    targets = [TargetConfig(name=n, dsn="blackholed://x/") for n in down]
    settings = Settings(poll_interval_s=1.0, targets=targets)
    scheduler = Scheduler(settings, store)
    scheduler.start()
    try:
        first = await first_polls(store, set(down), timeout_s=30)
        assert {e.target_info.status for e in first.values()} == {"down"}
        await await_for(
            lambda: sum(1 for n in down if Blackholed.attempts.get(n, 0) > 1),
            20,
            "the retries never began to hang",
            until=lambda hanging: hanging >= 6,
        )
        healthy = TargetConfig(name="healthy", dsn=FIXTURE_DSN)
        added_at = time.time()
        async with store.hub.subscribe() as queue:
            await scheduler.set_targets([*targets, healthy])
            seen = await first_polls_on(queue, {"healthy"}, timeout_s=30)
    finally:
        await scheduler.stop()
    assert seen["healthy"].target_info.status == "up"
    # Behind the retries it would have waited for several 3 s hangs; apart from them, at once.
    polled_after_s = (seen["healthy"].target_info.last_poll_at or 0.0) - added_at
    assert polled_after_s < 2 * BLACKHOLE_HANG_S, polled_after_s


async def test_polls_come_in_cohorts_on_a_grid_of_slots(store):
    # 50 targets every 2 s: spread one by one they would start a poll every 40 ms, each waking the
    # loop on its own; on POLL_SLOTS slots they start a few at a time, every 2 s / POLL_SLOTS.
    clock = FakeClock()
    interval_s, slots = 2.0, scheduler_module.POLL_SLOTS
    names = [f"cohort{i:02d}" for i in range(50)]
    settings = Settings(
        poll_interval_s=interval_s, targets=[TargetConfig(name=n, dsn=FIXTURE_DSN) for n in names]
    )
    scheduler = on_clock(store, clock, settings)
    started: dict[str, list[float]] = {name: [] for name in names}
    for poller in scheduler.by_name.values():
        poll_once = poller.poll_once

        async def recorded(poll_once=poll_once, times=started[poller.name]):  # type: ignore[no-untyped-def]
            times.append(clock.monotonic())
            return await poll_once()

        poller.poll_once = recorded  # type: ignore[method-assign]
    scheduler.start()
    try:
        await clock.settle(*scheduler._tasks.values())
        await clock.advance(2 * interval_s - 0.01)
    finally:
        await scheduler.stop()
    assert all(len(t) == 2 for t in started.values()), started
    # The second polls (the first ones also connect, and connects take turns): five targets at
    # each of the slots, one interval after their first.
    cohorts: dict[float, int] = {}
    for first, second in started.values():
        assert second - first == pytest.approx(interval_s)
        cohorts[round(second, 6)] = cohorts.get(round(second, 6), 0) + 1
    assert len(cohorts) == slots and set(cohorts.values()) == {len(names) // slots}, cohorts
    grid = sorted(cohorts)
    assert [round(b - a, 6) for a, b in zip(grid, grid[1:], strict=False)] == [interval_s / slots] * (
        slots - 1
    )


def test_the_next_poll_keeps_its_targets_phase():
    # On time: one interval on. Overran by 1.5 intervals: the missed ticks are skipped, on the same
    # phase (the old scheduler restarted the phase at the overrun's end). A retry 4 s on: the
    # first tick of the phase at or after it.
    assert scheduler_module._next_tick(10.3, 10.5, 1.0) == pytest.approx(11.3)
    assert scheduler_module._next_tick(10.3, 11.8, 1.0) == pytest.approx(12.3)
    assert scheduler_module._next_tick(10.3, 10.5 + 4.0, 1.0) == pytest.approx(15.3)


class Flaky(FixtureConnection):
    """A replayed server that can be taken away and brought back (`Flaky.down`)."""

    down = False

    async def connect(self) -> None:
        if Flaky.down:
            raise ConnectError("connection refused (taken away by the test)")
        await super().connect()

    async def run_batch(self, statements: list[str]) -> list[StatementResult]:
        if Flaky.down:
            self.conn = None  # the server went away under an open connection
            raise ConnectError("connection lost (taken away by the test)")
        return await super().run_batch(statements)


register_scheme(
    "flaky", lambda config: Flaky(config.model_copy(update={"dsn": SecretStr(FIXTURE_DSN)}), FIXTURES_ROOT)
)


async def test_a_target_going_down_and_coming_back_is_one_log_line_each(store, caplog):
    """Not one line per failed poll (issue 34: nothing was said at all), and what changed."""
    caplog.set_level(logging.INFO, logger="poolscope.poller.scheduler")
    clock = FakeClock()
    settings = Settings(poll_interval_s=1.0, targets=[TargetConfig(name="flaky1", dsn="flaky://x/")])
    scheduler = on_clock(store, clock, settings)
    Flaky.down = False
    scheduler.start()
    try:
        await clock.settle(*scheduler._tasks.values())
        await clock.advance(3)
        Flaky.down = True
        for _ in range(40):  # every retry of 30 s down, each failing
            await clock.advance(1)
        Flaky.down = False
        for _ in range(15):  # the retry interval is at most 10 s
            await clock.advance(1)
    finally:
        Flaky.down = False
        await scheduler.stop()
    said = [(r.levelname, r.getMessage()) for r in caplog.records if "flaky1" in r.getMessage()]
    assert [level for level, _ in said] == ["INFO", "WARNING", "INFO"], said
    assert said[0][1].startswith("target flaky1 up: ")
    assert said[1][1].startswith("target flaky1 down: ") and "taken away by the test" in said[1][1]
    assert said[2][1].startswith("target flaky1 up again after ")
