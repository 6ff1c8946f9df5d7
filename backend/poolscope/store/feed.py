"""The live channel across processes and hosts.

Pollers write each poll's latest row (store/latest.py) and, through `AlertEventLog`, each alert
change. In an API process, `LiveFeed` reads what is new and hands it to the local hub's SSE
clients as ready frames, in the same format as in-process events (store/live.py `encode`):
  - SQLite: a short poll by sequence (rows commit in sequence order).
  - PostgreSQL: LISTEN on a dedicated connection; a NOTIFY names the targets written (or alert
    events), and the feed reads those rows. A slow poll by sequence is the safety net, and a
    lost connection is reopened. Sequences from a PostgreSQL sequence are not in commit order,
    so that poll starts one round back and drops rows it already sent (by target and sequence).
With no SSE client connected the feed does nothing (and holds no LISTEN connection); it reads the
polls of the targets its clients want only (store/live.py LiveHub.poll_targets).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

import asyncpg
from sqlalchemy.engine import make_url

from poolscope.clock import SYSTEM, Clock
from poolscope.schemas import AlertEvent
from poolscope.store.health import FailureLog
from poolscope.store.latest import ALERTS_PAYLOAD, CHANNEL, LatestRow, LatestRows
from poolscope.store.live import Frame, LiveHub

log = logging.getLogger(__name__)

POLL_S = 0.25  # SQLite: how often the tail looks for new rows while clients are connected
SAFETY_POLL_S = 2.0  # PostgreSQL: a read by sequence even when no NOTIFY came
COALESCE_S = 0.05  # PostgreSQL: notifications arriving this close together are read at once
RECONNECT_MAX_S = 5.0
LISTEN_APPLICATION = "poolscope-live"  # the LISTEN connection's name in pg_stat_activity
ALERT_EVENTS_KEEP_S = 3600.0


async def _cancel(task: asyncio.Task[None] | None) -> None:
    if task is not None:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task


def poll_frame(row: LatestRow) -> Frame:
    return Frame(
        kind="poll", target=row.target, data=b"event: poll\ndata: " + row.poll_frame_json() + b"\n\n"
    )


def alert_frame(target: str, data: str) -> Frame:
    return Frame(kind="alert", target=target, data=b"event: alert\ndata: " + data.encode() + b"\n\n")


def asyncpg_dsn(store_url: str) -> str:
    return make_url(store_url).set(drivername="postgresql").render_as_string(hide_password=False)


class LiveFeed:
    def __init__(
        self,
        rows: LatestRows,
        hub: LiveHub,
        store_url: str,
        *,
        poll_s: float = POLL_S,
        safety_poll_s: float = SAFETY_POLL_S,
        clock: Clock = SYSTEM,
    ) -> None:
        self.rows = rows
        self.clock = clock
        self.hub = hub
        self.store_url = store_url
        self.poll_s = poll_s
        self.safety_poll_s = safety_poll_s
        self.postgres = rows.postgres
        self.reconnects = 0  # LISTEN connections reopened after a loss (tests read it)
        self._read_log = FailureLog(log, "live feed: reading the store", clock)
        self.looks = 0  # reads by sequence done (catch_up): tests wait for the next one
        self._task: asyncio.Task[None] | None = None
        self._reset(0, 0)

    def _reset(self, high: int, alert_high: int) -> None:
        self._start_high = high
        self._seen: dict[str, int] = {}  # target -> sequence of the row last sent
        self._floor = self._high = self._prev_high = high
        self._alert_floor = self._alert_high = self._prev_alert_high = alert_high
        self._alerts_seen: set[int] = set()

    async def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="live-feed")

    async def stop(self) -> None:
        await _cancel(self._task)
        self._task = None

    async def _run(self) -> None:
        backoff = self.poll_s
        while True:
            await self.hub.wait_for_client()
            try:
                async with self.rows.engine.connect() as conn:
                    self._reset(*await self.rows.high_water(conn))
                if self.postgres:
                    await self._follow_notify()
                else:
                    await self._follow_poll()
                backoff = self.poll_s
            except asyncio.CancelledError:
                raise
            except Exception as error:
                self._read_log.failed(error)
                await self.clock.sleep(backoff)
                backoff = min(backoff * 2, RECONNECT_MAX_S)

    async def _follow_poll(self) -> None:
        while self.hub.client_count:
            await self.catch_up()
            await self.clock.sleep(self.poll_s)

    async def catch_up(self) -> None:
        """Send what was committed since the last look, by sequence; of the polls, only those of
        targets some client wants (none while only alert streams are open, the UI's app-wide one)."""
        async with self.rows.engine.connect() as conn:
            # The mark first, then who wants what: a client that joins after this look took its
            # wants gets every row committed since from the next look (its sequence is above).
            high = await self.rows.latest_seq(conn)
            wanted = self.hub.poll_targets()
            # The rows nobody wants are not read, and the mark passes them all the same: a client
            # that wants them later gets the polls from then on, as a new client does.
            rows = await self.rows.rows_since(conn, self._floor, wanted, high) if wanted != set() else []
            self._high = max(self._high, high)
            events = await self.rows.alert_events_since(conn, self._alert_floor)
        for row in rows:
            self._send(row, self._start_high)
            self._high = max(self._high, row.seq)
        for seq, target, data in events:
            if seq not in self._alerts_seen:
                self._alerts_seen.add(seq)
                self.hub.publish_frame(alert_frame(target, data))
            self._alert_high = max(self._alert_high, seq)
        if self.postgres:
            # A row with a lower sequence may still commit: the next look starts one round back.
            self._floor, self._prev_high = self._prev_high, self._high
            self._alert_floor, self._prev_alert_high = self._prev_alert_high, self._alert_high
        else:
            self._floor, self._alert_floor = self._high, self._alert_high
        self._alerts_seen = {s for s in self._alerts_seen if s > self._alert_floor}
        self.looks += 1

    def _send(self, row: LatestRow, default_seen: int) -> None:
        if row.seq > self._seen.get(row.target, default_seen):
            self._seen[row.target] = row.seq
            self.hub.publish_frame(poll_frame(row))

    async def _read_targets(self, targets: set[str]) -> None:
        async with self.rows.engine.connect() as conn:
            rows = await self.rows.rows_for(conn, targets)
        for row in rows:
            self._send(row, 0)  # notified: new even if its sequence is below the start

    async def _follow_notify(self) -> None:
        backoff = self.poll_s
        while self.hub.client_count:
            try:
                conn = await asyncpg.connect(
                    asyncpg_dsn(self.store_url), server_settings={"application_name": LISTEN_APPLICATION}
                )
            except (OSError, asyncpg.PostgresError) as exc:
                log.warning(
                    "live feed: LISTEN connection failed (%s); retrying in %.1f s",
                    type(exc).__name__,
                    backoff,
                )
                await self.clock.sleep(backoff)
                backoff = min(backoff * 2, RECONNECT_MAX_S)
                continue
            backoff = self.poll_s
            if await self._session(conn) and self.hub.client_count:
                self.reconnects += 1
                log.warning("live feed: the LISTEN connection was lost; reconnecting")

    async def _session(self, conn: asyncpg.Connection) -> bool:
        """Follow NOTIFYs on one connection until no client is left (False) or it is lost (True)."""
        wake: asyncio.Queue[str] = asyncio.Queue()
        lost = asyncio.Event()
        try:
            conn.add_termination_listener(lambda _c: lost.set())
            await conn.add_listener(CHANNEL, lambda *args: wake.put_nowait(args[-1]))
            await self.catch_up()  # what was written while nobody listened
            await self._listen(wake, lost)
        except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError):
            lost.set()
        finally:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(conn.close(), timeout=2)
        return lost.is_set()

    async def _listen(self, wake: asyncio.Queue[str], lost: asyncio.Event) -> None:
        next_safety = self.clock.monotonic() + self.safety_poll_s
        while self.hub.client_count and not lost.is_set():
            timeout = min(max(0.0, next_safety - self.clock.monotonic()), self.poll_s * 4)
            payload = await self._notified(wake, lost, timeout)
            if payload is not None:
                # Real time: notifications arrive as the store commits, whatever a test's clock says.
                await asyncio.sleep(COALESCE_S)
                payloads = [payload]
                while not wake.empty():
                    payloads.append(wake.get_nowait())
                targets = {p for p in payloads if p != ALERTS_PAYLOAD}
                if (wanted := self.hub.poll_targets()) is not None:
                    targets &= wanted
                if targets:
                    await self._read_targets(targets)
                if ALERTS_PAYLOAD in payloads:
                    await self.catch_up()
            if self.clock.monotonic() >= next_safety:
                await self.catch_up()
                next_safety = self.clock.monotonic() + self.safety_poll_s

    async def _notified(self, wake: asyncio.Queue[str], lost: asyncio.Event, within_s: float) -> str | None:
        """The next notification; None when the connection is lost or after `within_s` on the clock
        (to look at the safety poll and the clients again)."""
        if not wake.empty():
            return wake.get_nowait()
        got = asyncio.ensure_future(wake.get())
        others = [asyncio.ensure_future(lost.wait()), asyncio.ensure_future(self.clock.sleep(within_s))]
        try:
            await asyncio.wait((got, *others), return_when=asyncio.FIRST_COMPLETED)
        finally:
            for waiter in (*others, got):
                waiter.cancel()  # a no-op on one that is done: a notification taken is not lost
        return got.result() if got.done() and not got.cancelled() else None


class AlertEventLog:
    """In a poller process: every alert change the local engine publishes, logged for the API processes."""

    def __init__(self, hub: LiveHub, rows: LatestRows, keep_s: float = ALERT_EVENTS_KEEP_S) -> None:
        self.hub = hub
        self.rows = rows
        self.keep_s = keep_s
        self._task: asyncio.Task[None] | None = None
        self._written = 0
        self._write_log = FailureLog(log, "logging alert changes for the API processes")

    async def start(self) -> None:
        ready = asyncio.Event()
        self._task = asyncio.create_task(self._run(ready), name="alert-event-log")
        await ready.wait()

    async def stop(self) -> None:
        await _cancel(self._task)
        self._task = None

    async def _run(self, ready: asyncio.Event) -> None:
        async with self.hub.subscribe(frozenset({"alert"})) as queue:
            ready.set()
            while True:
                event: Any = await queue.get()
                if not isinstance(event, AlertEvent):
                    continue
                # Old events are dropped now and then, in the same transaction as a new one.
                keep_after = event.ts - self.keep_s if self._written % 100 == 0 else None
                try:
                    await self.rows.write_alert_event(
                        event.target, event.ts, event.model_dump_json(), keep_after
                    )
                    self._written += 1
                except Exception as error:
                    # The change itself is held for the store with the alert (alerts/engine.py);
                    # this live notice of it is not.
                    self._write_log.failed(error)
                else:
                    self._write_log.ok()
