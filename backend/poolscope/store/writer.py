"""Batches polls of many targets into one store transaction (a commit per poll cost more than
its inserts once a poller runs hundreds of targets).

`submit()` returns once the poll's batch committed (or raises if it could not be stored), so a
poll's caller still knows it is stored. A batch is flushed after `max_delay_s` or at `max_rows`
samples; the queue is bounded, so a store that falls behind slows submitters instead of growing
memory. A failed batch is retried once, then each of its polls is written on its own, so one bad
poll loses only itself. `stop()` flushes everything accepted.

On PostgreSQL two batches are in flight at once, each on its own connection (with one at a time
the writer and the server took turns: docs/decisions/0007-batched-writes.md). Their samples are inserted side by side,
but the latest rows keep batch order: a batch writes its latest rows and commits only after the
batch before it is done (committed, or given up after its retries), so a target's latest row
never goes back to an older poll and the rows' sequence follows commit order. A submitter is
still answered only once its own batch committed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING

from poolscope.schemas import Sample, TargetInfo, TargetState
from poolscope.store.ingest import Poll

if TYPE_CHECKING:
    from poolscope.store.sql import SqlStore

log = logging.getLogger(__name__)

MAX_DELAY_S = 0.15
MAX_ROWS = 20_000
MAX_QUEUED_POLLS = 5_000
# Batches in flight on PostgreSQL: one server process each, for the 2 cores measured on.
PG_IN_FLIGHT = 2

_Item = tuple[Poll, asyncio.Future[None]]
_Queued = _Item | None  # None: stop() was called


class BatchWriter:
    def __init__(
        self,
        store: SqlStore,
        *,
        max_delay_s: float = MAX_DELAY_S,
        max_rows: int = MAX_ROWS,
        max_queued: int = MAX_QUEUED_POLLS,
        in_flight: int | None = None,
    ) -> None:
        self.store = store
        self.max_delay_s = max_delay_s
        self.max_rows = max_rows
        self._queue: asyncio.Queue[_Queued] = asyncio.Queue(maxsize=max_queued)
        self._task: asyncio.Task[None] | None = None
        self._stopped = False
        # Set when a batch should not wait out its delay: enough rows queued, or stop().
        self._wake = asyncio.Event()
        self._queued_rows = 0
        self.batches_written = 0  # committed batches, for tests and the bench
        # Only PostgreSQL: on SQLite a batch waiting for its turn would hold the one write lock.
        postgres = getattr(store, "dialect", None) == "postgresql"
        self.in_flight = max(PG_IN_FLIGHT if in_flight is None else in_flight, 1) if postgres else 1
        self._slots = asyncio.Semaphore(self.in_flight)
        # Batches being written, with the (target, ts) of their polls.
        self._writing: dict[asyncio.Task[None], set[tuple[str, float]]] = {}
        # Done once the newest dispatched batch is done: the next batch's latest rows wait for it.
        self._turn: asyncio.Future[None] | None = None

    async def submit(
        self, info: TargetInfo, state: TargetState | None, samples: Sequence[Sample], ts: float
    ) -> None:
        """Store one poll with others; returns when it is committed."""
        poll = Poll(info, state, samples, ts)
        if self._stopped:  # after stop(): nothing batches any more, so write it at once
            await self.store.write_polls([poll])
            return
        self._ensure_started()
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        # Read the outcome even when the caller was cancelled, so no "never retrieved" warning.
        done.add_done_callback(lambda f: f.cancelled() or f.exception())
        await self._queue.put((poll, done))
        self._queued_rows += len(samples)
        if self._queued_rows >= self.max_rows:
            self._wake.set()
        # Shielded: a cancelled caller (scheduler stopping) leaves the poll to be stored anyway.
        await asyncio.shield(done)

    def _ensure_started(self) -> None:
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._run(), name="store-batch-writer")

    async def stop(self) -> None:
        """Store everything accepted, then end the flusher."""
        self._stopped = True
        task, self._task = self._task, None
        self._wake.set()
        if task is not None and not task.done():
            # Queued behind every accepted poll, so the flusher writes them all before it ends.
            await self._queue.put(None)
            await task
        # Submitters that were waiting for room when the flusher ended.
        for _ in range(3):
            await asyncio.sleep(0)
            await self._drain()

    async def _drain(self) -> None:
        items: list[_Item] = []
        while not self._queue.empty():
            item = self._queue.get_nowait()
            if item is not None:
                items.append(item)
        if items:
            await self._dispatch(items)
        await self._wait_writing()

    async def _run(self) -> None:
        # One timed wait per batch, then whatever is queued is taken at once: a wait_for per
        # queued poll (a task and a timer each) cost more than the rest of the batching.
        stopping = False
        while not stopping:
            first = await self._queue.get()
            if first is None:
                break
            if not self._wake.is_set():
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), timeout=self.max_delay_s)
            if not self._stopped:
                self._wake.clear()
            # Polls go on queueing while every slot is busy: the next batch takes them all.
            await self._slots.acquire()
            items = [first]
            rows = len(first[0].samples)
            while rows < self.max_rows and not self._queue.empty():
                item = self._queue.get_nowait()
                if item is None:
                    stopping = True
                    break
                items.append(item)
                rows += len(item[0].samples)
            self._queued_rows = max(self._queued_rows - rows, 0)
            if self._queued_rows >= self.max_rows:  # the next batch is full already
                self._wake.set()
            await self._dispatch(items, acquired=True)
        await self._drain()

    async def _dispatch(self, items: list[_Item], *, acquired: bool = False) -> None:
        """Write a batch: at once with one slot; else in a task that keeps batch order."""
        if self.in_flight == 1:
            try:
                await self._write(items)
            finally:
                if acquired:
                    self._slots.release()
            return
        if not acquired:
            await self._slots.acquire()
        polls = {(p.info.name, p.ts) for p, _ in items}
        # The same poll twice (say submitted again) in two batches in flight: the earlier batch's
        # insert could wait for the later one's transaction, which waits for the earlier batch's
        # turn. So such a batch starts only after the batches in flight are done.
        if any(not polls.isdisjoint(other) for other in self._writing.values()):
            await self._wait_writing()
        previous = self._turn
        self._turn = turn = asyncio.get_running_loop().create_future()
        task = asyncio.create_task(self._write_in_turn(items, previous, turn), name="store-batch")
        self._writing[task] = polls
        task.add_done_callback(self._done_writing)

    def _done_writing(self, task: asyncio.Task[None]) -> None:
        self._writing.pop(task, None)

    async def _wait_writing(self) -> None:
        while self._writing:
            await asyncio.gather(*self._writing)

    async def _write_in_turn(
        self, items: list[_Item], previous: asyncio.Future[None] | None, turn: asyncio.Future[None]
    ) -> None:
        try:
            await self._write(items, previous)
        finally:
            # Also when this task is cancelled: the batches after it must not wait for ever.
            if not turn.done():
                turn.set_result(None)
            self._slots.release()

    async def _write(self, items: list[_Item], previous: asyncio.Future[None] | None = None) -> None:
        """`previous`: done when the batch before this one is; its latest rows go first."""
        polls = [p for p, _ in items]
        error: Exception | None = None
        # With batches in flight, the store writes the samples, then waits for `previous`.
        ordered = {} if self.in_flight == 1 else {"after": _ready(previous)}
        for attempt in range(2):
            try:
                await self.store.write_polls(polls, **ordered)
                self.batches_written += 1
                _settle(items, None)
                return
            except Exception as exc:
                error = exc
                log.warning(
                    "store: a batch of %d polls failed (attempt %d): %s", len(polls), attempt + 1, exc
                )
        if len(items) == 1:
            _settle(items, error)
            return
        # One poll may be what fails the batch (say a duplicate sample): the others still land.
        for item in items:
            try:
                await self.store.write_polls([item[0]], **ordered)
                _settle([item], None)
            except Exception as exc:
                _settle([item], exc)


def _ready(previous: asyncio.Future[None] | None) -> asyncio.Future[None]:
    """`previous`, or a done future for the first batch (a future can be awaited again and again:
    each attempt at the batch does)."""
    if previous is None:
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        done.set_result(None)
        return done
    return previous


def _settle(items: list[_Item], error: Exception | None) -> None:
    for _, done in items:
        if done.done():
            continue
        if error is None:
            done.set_result(None)
        else:
            done.set_exception(error)
