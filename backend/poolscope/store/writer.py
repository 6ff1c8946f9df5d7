"""Writes polls (and, while the store fails, alert changes and snapshots) to the store, in order,
without the poller waiting for it: the store is one consumer of a poll among others
(poller/scheduler.py), and it may lag or fail.

While the store takes writes, polls are batched across targets: `offer` queues a poll, and a batch
is flushed after `max_delay_s` or at `max_rows` samples, one transaction. On PostgreSQL two batches
are in flight at once, each on its own connection (docs/decisions/0007-batched-writes.md);
their samples are inserted side by side, but the latest rows keep batch order: a batch writes its
latest rows and commits only after the batch before it is done, so a target's latest row never goes
back to an older poll. A batch that fails on its data (a duplicate sample) is retried once, then
each of its polls on its own, so one bad poll loses only itself.

When a write fails because the store cannot take writes (store/health.py `is_outage`: unreachable,
disk full, ...), the store is failing: that batch and everything after it goes to the backlog
(store/backlog.py: memory, then a spool file, bounded in bytes), a record per poll holding its
samples, while each target's newest poll (and its last good state) is kept aside for its latest
row. Alert changes and snapshots (`write_op`) join the backlog in the same order. Every
`retry_s` the head of the backlog is tried again; once the store takes it, the backlog is written
in order, idempotently (a poll whose target_up sample is already stored is not written again; an
op is an upsert), and the latest rows last. Polls that find the backlog full are dropped and
counted (`counts`, /metrics, the UI), never silently.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

from poolscope.clock import SYSTEM, Clock
from poolscope.schemas import Sample, TargetInfo, TargetState
from poolscope.store.backlog import DEFAULT_MEMORY_BYTES, Backlog
from poolscope.store.health import StoreHealth, is_outage
from poolscope.store.ingest import Poll

if TYPE_CHECKING:
    from poolscope.store.sql import SqlStore

log = logging.getLogger(__name__)

MAX_DELAY_S = 0.15
MAX_ROWS = 20_000
# Polls queued for the next batches; beyond it (the store lags) new polls go to the backlog.
MAX_QUEUED_POLLS = 5_000
# Batches in flight on PostgreSQL: one server process each, for the 2 cores measured on.
PG_IN_FLIGHT = 2
# While the store fails, the head of the backlog is tried again this often.
RETRY_S = 1.0
# Records of the backlog written per transaction when it drains.
REPLAY_RECORDS = 500
# An op (an alert change) tried directly waits this long for the store before it is held.
OP_TIMEOUT_S = 5.0
# How long stop() tries to write what is held before it spills it to the spool for the next process.
STOP_DRAIN_S = 5.0

_Item = tuple[Poll, asyncio.Future[None] | None]
# An op's application: its payload in, the row id it wrote (or None) out. Idempotent: a retry
# after a write whose answer was lost writes nothing twice.
OpHandler = Callable[[dict[str, Any]], Awaitable[int | None]]
OpWritten = Callable[[int | None], None]


class BatchWriter:
    def __init__(
        self,
        store: SqlStore,
        *,
        max_delay_s: float = MAX_DELAY_S,
        max_rows: int = MAX_ROWS,
        max_queued: int = MAX_QUEUED_POLLS,
        in_flight: int | None = None,
        backlog: Backlog | None = None,
        health: StoreHealth | None = None,
        retry_s: float = RETRY_S,
        clock: Clock = SYSTEM,
    ) -> None:
        self.store = store
        self.max_delay_s = max_delay_s
        self.max_rows = max_rows
        self.max_queued = max_queued
        self.retry_s = retry_s
        self.clock = clock
        self.backlog = backlog if backlog is not None else Backlog(DEFAULT_MEMORY_BYTES, 0, None)
        self.health = health if health is not None else StoreHealth("local", clock=clock)
        self.health.counts = self.counts
        self._pending: deque[_Item] = deque()
        self._pending_rows = 0
        self._wake = asyncio.Event()  # polls queued, a backlog to write, or stop()
        self._full = asyncio.Event()  # a batch's worth queued: no need to wait out the delay
        self._task: asyncio.Task[None] | None = None
        self._stopped = False
        self.batches_written = 0  # committed batches, for tests and the bench
        # Only PostgreSQL: on SQLite a batch waiting for its turn would hold the one write lock.
        postgres = getattr(store, "dialect", None) == "postgresql"
        self.in_flight = max(PG_IN_FLIGHT if in_flight is None else in_flight, 1) if postgres else 1
        self._slots = asyncio.Semaphore(self.in_flight)
        # Batches being written, with the (target, ts) of their polls.
        self._writing: dict[asyncio.Task[None], set[tuple[str, float]]] = {}
        # Done once the newest dispatched batch is done: the next batch's latest rows wait for it.
        self._turn: asyncio.Future[None] | None = None
        self._batches = 0  # sequence of dispatched batches
        # Batches that failed with an outage, by sequence: they go to the backlog's head, in order.
        self._failed: list[tuple[int, list[_Item]]] = []
        # Per target: the newest poll held in the backlog and the newest one with a state (its
        # latest row is written from them once the backlog is written).
        self._newest: dict[str, Poll] = {}
        self._newest_good: dict[str, Poll] = {}
        self._replaying = False
        # Polls offered and not yet written (or held): flush() waits for none.
        self._unwritten = 0
        self._flushed = asyncio.Event()
        self._ops: dict[str, OpHandler] = {}
        self._op_written: dict[str, OpWritten] = {}
        self.buffered_polls = self.buffered_samples = 0
        self.dropped_polls = self.dropped_samples = 0

    # --- taking polls and ops --------------------------------------------------------------

    def offer(
        self, info: TargetInfo, state: TargetState | None, samples: Sequence[Sample], ts: float
    ) -> None:
        """Take one poll to store; never waits (a store that lags or fails has it held, in order)."""
        self._take(Poll(info, state, samples, ts), None)

    async def submit(
        self, info: TargetInfo, state: TargetState | None, samples: Sequence[Sample], ts: float
    ) -> None:
        """Store one poll with others; returns once it is committed, or held for a failing store."""
        poll = Poll(info, state, samples, ts)
        if self._stopped:  # after stop(): nothing batches any more, so write it at once
            await self.store.write_polls([poll])
            return
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        # Read the outcome even when the caller was cancelled, so no "never retrieved" warning.
        done.add_done_callback(lambda f: f.cancelled() or f.exception())
        self._take(poll, done)
        # Shielded: a cancelled caller (scheduler stopping) leaves the poll to be stored anyway.
        await asyncio.shield(done)

    def _take(self, poll: Poll, done: asyncio.Future[None] | None) -> None:
        # Held while anything is (a replay has taken the backlog's head: it is not empty), or the
        # store is known to fail: a poll never overtakes an older one.
        if self.backlog or self._replaying or self.health.failing or self._stopped:
            self._hold(poll)
            _settle([(poll, done)], None)
        else:
            if len(self._pending) >= self.max_queued:  # the store lags: the queue goes to the backlog
                self._hold_pending()
                self._hold(poll)
                _settle([(poll, done)], None)
            else:
                self._pending.append((poll, done))
                self._unwritten += 1
                self._pending_rows += len(poll.samples)
                if self._pending_rows >= self.max_rows:
                    self._full.set()
        self._ensure_started()
        self._wake.set()

    def _done(self, items: Sequence[_Item], error: Exception | None) -> None:
        """These queued polls are written (or held, or failed): their submitters are answered."""
        _settle(items, error)
        self._unwritten -= len(items)
        if self._unwritten <= 0:
            self._unwritten = 0
            self._flushed.set()

    async def flush(self) -> None:
        """Until every poll offered so far is written, or held for a failing store (the scheduler
        hands a target over only then: its next owner's polls must not be written before)."""
        while self._unwritten:
            self._flushed.clear()
            await self._flushed.wait()

    def handle(self, kind: str, handler: OpHandler) -> None:
        """How ops of `kind` are written (the alert engine's changes, the snapshot service's documents)."""
        self._ops[kind] = handler

    async def write_op(
        self,
        kind: str,
        key: str,
        payload: dict[str, Any],
        written: OpWritten | None = None,
        *,
        essential: bool = False,
    ) -> int | None:
        """Write an op now if the store takes it (its row id), else hold it in order and return
        None: `written` is called with the id once the held op is written (by this process).
        `key` names the op; a later op of the same key replaces the earlier one's callback."""
        if not self.backlog and not self.health.failing and not self._failed:
            try:
                async with asyncio.timeout(OP_TIMEOUT_S):
                    return await self._ops[kind](payload)
            except Exception as error:
                if not is_outage(error):
                    raise
                self.health.failed(error, f"writing {kind}")
        if written is not None:
            self._op_written[key] = written
        record = _encode({"k": "o", "kind": kind, "key": key, "p": payload})
        if not self.backlog.push(record, essential=essential):
            log.warning("store buffer full: %s %s dropped", kind, key)
            self._op_written.pop(key, None)
            if written is not None:
                written(None)
        self._ensure_started()
        self._wake.set()
        return None

    def adopted(self, records: bytes) -> None:
        """Records of a stopped process were put in the backlog (store/backlog.py Backlog.adopt):
        they count as held, and are written as soon as the store takes them."""
        polls = [_decode(line) for line in records.splitlines()]
        held = [r for r in polls if r is not None and r["k"] == "p"]
        self.buffered_polls += len(held)
        self.buffered_samples += sum(len(r["s"]) for r in held)
        with contextlib.suppress(RuntimeError):  # no running loop yet: the first offer starts it
            self._ensure_started()

    @property
    def holding(self) -> bool:
        """Something waits to be written (the backlog, a replay under way, latest rows)."""
        return bool(self.backlog) or self._replaying or bool(self._newest)

    def counts(self) -> dict[str, int]:
        return {
            "buffered_polls": self.buffered_polls,
            "buffered_samples": self.buffered_samples,
            "buffered_bytes": self.backlog.size,
            "spooled_bytes": self.backlog.in_spool,
            "dropped_polls": self.dropped_polls,
            "dropped_samples": self.dropped_samples,
        }

    def _hold(self, poll: Poll, *, front: bool = False) -> None:
        name = poll.info.name
        newest = self._newest.get(name)
        if newest is None or poll.ts >= newest.ts:
            self._newest[name] = poll
        good = self._newest_good.get(name)
        if poll.state is not None and (good is None or poll.ts >= good.ts):
            self._newest_good[name] = poll
        record = _encode_poll(poll)
        if front:
            self.backlog.push_front([record])
        elif not self.backlog.push(record):
            self.dropped_polls += 1
            self.dropped_samples += len(poll.samples)
            return
        self.buffered_polls += 1
        self.buffered_samples += len(poll.samples)

    def _hold_pending(self) -> None:
        """The queued polls go to the backlog, after it (they came after what it holds)."""
        items, self._pending = list(self._pending), deque()
        self._pending_rows = 0
        self._full.clear()
        for poll, _ in items:
            self._hold(poll)
        self._done(items, None)

    def _hold_failed(self) -> None:
        """Batches that failed with an outage go to the backlog's head, oldest first, before the
        queue: they came before everything else held."""
        failed, self._failed = sorted(self._failed, key=lambda f: f[0]), []
        items = [item for _, batch in failed for item in batch]
        for poll, _ in reversed(items):
            self._hold(poll, front=True)
        self._done(items, None)
        self._hold_pending()

    # --- running ---------------------------------------------------------------------------

    def _ensure_started(self) -> None:
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._run(), name="store-batch-writer")

    async def stop(self) -> None:
        """Write what it holds (for up to STOP_DRAIN_S while the store fails), then put what is
        left in the spool, for the next process of this host."""
        self._stopped = True
        self._wake.set()
        self._full.set()
        task, self._task = self._task, None
        if task is not None and not task.done():
            try:
                await asyncio.wait_for(asyncio.shield(task), timeout=STOP_DRAIN_S)
            except TimeoutError:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
            except Exception:
                log.exception("store: the writer failed while stopping")
        await self._wait_writing()
        if self._failed or self._pending:
            self._hold_failed()
        if self.backlog:
            spilled = self.backlog.spill()
            log.warning(
                "store: stopping with %d poll(s) not written (%s)",
                self.buffered_polls,
                f"kept in {self.backlog.spool_path} for the next start" if spilled else "lost: no spool",
            )
        self.backlog.close()
        self.health.withdraw()

    async def _run(self) -> None:
        while True:
            if self._failed or (self.health.failing and self._pending):
                await self._wait_writing()
                self._hold_failed()
            if self.backlog or self._newest:
                if await (self._replay() if self.backlog else self._write_newest()):
                    continue
                if self._stopped:
                    return
                await self._pause()
                continue
            if not self._pending:
                if self._stopped:
                    return
                self._wake.clear()
                await self._wake.wait()
                continue
            if not self._full.is_set() and not self._stopped:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._full.wait(), timeout=self.max_delay_s)
            if not self._pending:  # moved to the backlog meanwhile
                continue
            await self._slots.acquire()
            items = self._next_batch()
            await self._dispatch(items)

    async def _pause(self) -> None:
        """Until the next retry, or stop()."""
        self._wake.clear()
        waits = [
            asyncio.ensure_future(self.clock.sleep(self.retry_s)),
            asyncio.ensure_future(self._stop_wait()),
        ]
        try:
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for waiter in waits:
                waiter.cancel()

    async def _stop_wait(self) -> None:
        while not self._stopped:
            self._wake.clear()
            await self._wake.wait()

    def _next_batch(self) -> list[_Item]:
        items: list[_Item] = []
        rows = 0
        while self._pending and (not items or rows < self.max_rows):
            item = self._pending.popleft()
            items.append(item)
            rows += len(item[0].samples)
        self._pending_rows = max(self._pending_rows - rows, 0)
        if self._pending_rows < self.max_rows:
            self._full.clear()
        return items

    async def _wait_writing(self) -> None:
        while self._writing:
            await asyncio.gather(*self._writing, return_exceptions=True)

    # --- the store takes writes: batches ---------------------------------------------------

    async def _dispatch(self, items: list[_Item]) -> None:
        """Write a batch (holding a slot): at once with one slot; else in a task that keeps batch order."""
        self._batches += 1
        seq = self._batches
        if self.in_flight == 1:
            try:
                await self._write(seq, items)
            finally:
                self._slots.release()
            return
        polls = {(p.info.name, p.ts) for p, _ in items}
        # The same poll twice (say submitted again) in two batches in flight: the earlier batch's
        # insert could wait for the later one's transaction, which waits for the earlier batch's
        # turn. So such a batch starts only after the batches in flight are done.
        if any(not polls.isdisjoint(other) for other in self._writing.values()):
            await self._wait_writing()
        previous = self._turn
        self._turn = turn = asyncio.get_running_loop().create_future()
        task = asyncio.create_task(self._write_in_turn(seq, items, previous, turn), name="store-batch")
        self._writing[task] = polls
        task.add_done_callback(self._done_writing)

    def _done_writing(self, task: asyncio.Task[None]) -> None:
        self._writing.pop(task, None)

    async def _write_in_turn(
        self, seq: int, items: list[_Item], previous: asyncio.Future[None] | None, turn: asyncio.Future[None]
    ) -> None:
        try:
            await self._write(seq, items, previous)
        finally:
            # Also when this task is cancelled: the batches after it must not wait for ever.
            if not turn.done():
                turn.set_result(None)
            self._slots.release()

    async def _write(
        self, seq: int, items: list[_Item], previous: asyncio.Future[None] | None = None
    ) -> None:
        """`previous`: done when the batch before this one is; its latest rows go first."""
        polls = [p for p, _ in items]
        error: Exception | None = None
        # With batches in flight, the store writes the samples, then waits for `previous`.
        ordered: dict[str, Any] = {} if self.in_flight == 1 else {"after": _ready(previous)}
        for attempt in range(2):
            try:
                await self.store.write_polls(polls, **ordered)
                self.batches_written += 1
                self.health.ok()
                self._done(items, None)
                return
            except Exception as exc:
                if is_outage(exc):
                    self.health.failed(exc, "writing polls")
                    self._failed.append((seq, items))
                    self._wake.set()
                    return
                error = exc
                log.warning(
                    "store: a batch of %d polls failed (attempt %d): %s", len(polls), attempt + 1, exc
                )
        if len(items) == 1:
            self._done(items, error)
            return
        # One poll may be what fails the batch (say a duplicate sample): the others still land.
        for item in items:
            try:
                await self.store.write_polls([item[0]], **ordered)
                self._done([item], None)
            except Exception as exc:
                self._done([item], exc)

    # --- the store failed: the backlog ------------------------------------------------------

    async def _replay(self) -> bool:
        """Write the head of the backlog; False when the store still fails (it stays held)."""
        self._replaying = True
        try:
            return await self._replay_head()
        finally:
            self._replaying = False

    async def _replay_head(self) -> bool:
        records = self.backlog.take(REPLAY_RECORDS)
        decoded = [_decode(r) for r in records]  # None: a record cut by a kill, nothing to write
        index = 0
        try:
            while index < len(records):
                record = decoded[index]
                if record is not None and record["k"] == "o":
                    await self._replay_op(record)
                    index += 1
                    continue
                end, polls, rows = index, [], 0
                while end < len(records) and rows < self.max_rows and (decoded[end] or {}).get("k") != "o":
                    if (held := decoded[end]) is not None:
                        polls.append(_poll_of(held))
                        rows += len(polls[-1].samples)
                    end += 1
                await self._write_held(polls)
                index = end
        except Exception as error:
            self.backlog.push_front(records[index:])
            if not is_outage(error):
                # Not the store's state but this op's data: it would fail for ever. It is dropped.
                log.error("store: a held record could not be written and is dropped: %s", error)
                self.backlog.take(1)
                return True
            self.health.failed(error, "writing what was held")
            return False
        self.health.ok()
        return True

    async def _write_held(self, polls: list[Poll]) -> None:
        """Write held polls (idempotently: store/sql.py write_held); when the store refuses one
        poll's data, each is written on its own and the one refused is dropped and counted."""
        if not polls:
            return
        try:
            await self.store.write_held(polls)
        except Exception as error:
            if is_outage(error):
                raise
            if len(polls) > 1:
                for poll in polls:
                    await self._write_held([poll])
                return
            self._lost(polls, error)
        self.buffered_polls -= len(polls)
        self.buffered_samples -= sum(len(p.samples) for p in polls)

    def _lost(self, polls: list[Poll], error: Exception) -> None:
        log.error(
            "store: a held poll of %s could not be written and is dropped: %s", polls[0].info.name, error
        )
        self.dropped_polls += len(polls)
        self.dropped_samples += sum(len(p.samples) for p in polls)

    async def _replay_op(self, record: dict[str, Any]) -> None:
        kind, key = record["kind"], record["key"]
        handler = self._ops.get(kind)
        if handler is None:  # nothing in this process writes that kind any more
            log.warning("store: a held %s (%s) has no writer here and is dropped", kind, key)
            return
        row_id = await handler(record["p"])
        written = self._op_written.pop(key, None)
        if written is not None:
            written(row_id)

    async def _write_newest(self) -> bool:
        """The backlog is written: each target's latest row from its newest polls held. False when
        the store fails again (they are written on the next try)."""
        polls = []
        for name, newest in self._newest.items():
            good = self._newest_good.get(name)
            if good is not None and good is not newest:
                polls.append(good)
            polls.append(newest)
        try:
            await self.store.write_latest(polls)
        except Exception as error:
            if is_outage(error):
                self.health.failed(error, "writing the latest rows")
                return False
            log.error("store: the latest rows of the polls held could not be written: %s", error)
        self._newest.clear()
        self._newest_good.clear()
        self.buffered_polls = self.buffered_samples = 0
        log.info(
            "store caught up: everything held was written (%d poll(s) dropped so far)", self.dropped_polls
        )
        self.health.publish()
        return True


def _encode(record: dict[str, Any]) -> bytes:
    return json.dumps(record, separators=(",", ":")).encode()


def _encode_poll(poll: Poll) -> bytes:
    samples = [[s.metric, s.labels, s.value] if s.labels else [s.metric, s.value] for s in poll.samples]
    return _encode({"k": "p", "t": poll.info.name, "ts": poll.ts, "s": samples})


def _decode(record: bytes) -> dict[str, Any] | None:
    try:
        decoded = json.loads(record)
    except ValueError:
        return None
    return decoded if isinstance(decoded, dict) and decoded.get("k") in ("p", "o") else None


def _poll_of(record: dict[str, Any]) -> Poll:
    samples = [
        Sample(metric=s[0], labels=s[1], value=s[2]) if len(s) == 3 else Sample(metric=s[0], value=s[1])
        for s in record["s"]
    ]
    # Only the name counts: a held poll's latest row is written from the newest poll (_write_newest).
    return Poll(
        TargetInfo.model_construct(name=record["t"], poll_interval_s=0.0), None, samples, float(record["ts"])
    )


def _ready(previous: asyncio.Future[None] | None) -> asyncio.Future[None]:
    """`previous`, or a done future for the first batch (a future can be awaited again and again:
    each attempt at the batch does)."""
    if previous is None:
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        done.set_result(None)
        return done
    return previous


def _settle(items: Sequence[_Item], error: Exception | None) -> None:
    for _, done in items:
        if done is None or done.done():
            continue
        if error is None:
            done.set_result(None)
        else:
            done.set_exception(error)
