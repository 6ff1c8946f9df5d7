"""Polls one target: runs the applicable collectors in one round trip and derives the state.

Each collector puts its typed section in the poll's record (outputs.PollOutputs); derive.py
turns that record and the target's memory into the state.

Each collector fails on its own (a missing privilege, a parse error) and records its own success
and duration; only a broken connection fails the whole poll, and that marks the target down.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass
from typing import Any

from poolscope.analysis.counters import CounterMemory
from poolscope.analysis.flight_recorder import FlightRecorder
from poolscope.analysis.held_time import HeldTime
from poolscope.analysis.last_statement import LastStatementMemory
from poolscope.analysis.ratios import CacheRatios
from poolscope.analysis.session_identity import SessionIdentities
from poolscope.analysis.stalls import StallDetector
from poolscope.clock import SYSTEM, Clock
from poolscope.config import Settings, TargetConfig
from poolscope.dsn import DsnError
from poolscope.metrics import Metric
from poolscope.poller.collectors import all_collectors
from poolscope.poller.collectors.base import Collector, CollectorOutput, ParseContext, sample
from poolscope.poller.collectors.session_lookup import SessionLookup
from poolscope.poller.collectors.thread_lookup import ThreadLookup
from poolscope.poller.collectors.trx_lookup import TrxLookup
from poolscope.poller.connection import (
    PRIVILEGE_ERRORS,
    ConnectError,
    StatementResult,
    describe_mysql_error,
    error_code,
    open_connection,
)
from poolscope.poller.derive import TargetMemory, derive_state, lookup_ids, referenced_ids, target_summary
from poolscope.poller.outputs import PollOutputs
from poolscope.schemas import (
    CollectorStatus,
    FlightEntry,
    Sample,
    TargetInfo,
    TargetState,
    TargetSummary,
)
from poolscope.values import int_or_none

log = logging.getLogger(__name__)

# After a privilege error the collector is retried this rarely, so a GRANT is picked up
# without paying an extra round trip every second.
PRIVILEGE_RETRY_S = 60.0
PRESSURE_NOTE = "read only while a group has a queue or is stalled, and one poll after"

METRICS = (
    Metric("target_up", "1 when the poll succeeded", prometheus="poolscope_target_up"),
    Metric("poll_duration_ms", "wall time of the poll", unit="ms"),
)


@dataclass
class PollResult:
    info: TargetInfo
    state: TargetState | None
    samples: list[Sample]


class TargetPoller:
    def __init__(
        self,
        config: TargetConfig,
        settings: Settings,
        collectors: list[Collector[Any]] | None = None,
        *,
        clock: Clock = SYSTEM,
    ) -> None:
        self.config = config
        self.settings = settings
        self.clock = clock  # a poll's timestamp, and when a collector with a resolution is due
        self.collectors = collectors if collectors is not None else all_collectors()
        self.connection = open_connection(config)
        self.counters = CounterMemory()
        self.memory = TargetMemory(
            stalls=StallDetector(),
            ratios=CacheRatios(settings.ratio_window_s),
            last_statements=LastStatementMemory(),
            identities=SessionIdentities(),
            held_time=HeldTime(settings.poll_interval_s),
            recorder=FlightRecorder(max_bytes=settings.flight_recorder_kb * 1024),
        )
        self.session_lookup = SessionLookup()
        # The second round trip's other lookups, asked only on polls that read the holders.
        self.thread_lookup = ThreadLookup()
        self.trx_lookup = TrxLookup()
        self._statements_sent = 0
        self._privilege_retry_at: dict[str, float] = {}
        # collector name -> (privilege it needs, the server's refusal)
        self._missing_privileges: dict[str, tuple[str, str]] = {}
        # Collectors with a resolution (every_s > 0): when each last succeeded and what it read.
        self._last_run: dict[str, float] = {}
        self._carried: dict[str, CollectorOutput[Any]] = {}
        self._refresh_next: set[str] = set()
        self._connections: int | None = None  # Threads_connected as the last poll read it
        self.info = TargetInfo(
            name=config.name, tags=dict(config.tags), poll_interval_s=settings.poll_interval_s
        )
        # One statement stream per connection: polls and read_between_polls() take turns.
        self._turn = asyncio.Lock()

    @property
    def name(self) -> str:
        return self.config.name

    def refresh_soon(self, collector_name: str) -> None:
        """Run that collector on the next poll whatever its resolution (e.g. variables after a SET)."""
        self._refresh_next.add(collector_name)

    def _due(self, collector: Collector[Any], now: float) -> bool:
        if collector.every_s <= 0 or collector.name in self._refresh_next:
            return True
        last = self._last_run.get(collector.name)
        # Half a poll of slack: a 5 s collector polled every 1 s runs every 5th poll, not 6th.
        return last is None or now - last >= collector.every_s - 0.5 * self.settings.poll_interval_s

    def flight_recorder(self, until: float | None = None) -> list[FlightEntry]:
        """The last 120 s of who held and queued in each group, one entry a second (snapshots)."""
        return self.memory.recorder.entries(until)

    async def read_between_polls(self, statements: list[str], timeout_s: float) -> list[StatementResult]:
        """Run extra statements on the poll's own connection, between two polls (incident snapshots).

        The poller's extra_port connection is the one that answers during a stall, and with the
        default extra_max_connections=1 it is the only one there is. Raises ConnectError when the
        target is not connected, TimeoutError when the server does not answer in time.
        """
        async with self._turn:
            if self.connection.conn is None:
                raise ConnectError("not connected")
            results = await asyncio.wait_for(self.connection.run_batch(statements), timeout=timeout_s)
            self._statements_sent += len(results)  # QPS leaves out our own statements
            return results

    async def poll_once(self) -> PollResult:
        async with self._turn:
            return await self._poll_once()

    async def _poll_once(self) -> PollResult:
        now = self.clock.time()
        started = time.perf_counter()
        try:
            # A timeout scope, not wait_for: no extra task per poll (Python 3.11's wait_for makes one).
            async with asyncio.timeout(self.settings.poll_timeout_s):
                return await self._poll(now, started)
        except (ConnectError, DsnError) as exc:
            return await self._down(now, started, str(exc))
        except TimeoutError:
            return await self._down(now, started, f"poll timed out after {self.settings.poll_timeout_s:g} s")
        except Exception as exc:  # the connection broke mid-poll
            log.warning("target %s: poll failed: %s", self.name, describe_mysql_error(exc))
            return await self._down(now, started, f"connection lost: {describe_mysql_error(exc)}")

    async def _down(self, now: float, started: float, reason: str) -> PollResult:
        await self.connection.close()
        # The server may come back restarted: old counters and progress no longer compare.
        self.counters.forget()
        self.memory.forget()
        self._last_run.clear()
        self._carried.clear()
        self._refresh_next.clear()
        self._connections = None
        for collector in self.collectors:
            collector.reset()
        self.info = self.info.model_copy(
            update={
                "status": "down",
                "reason": reason,
                "last_poll_at": now,
                "poll_duration_ms": (time.perf_counter() - started) * 1000,
                "collectors": [],
                "summary": TargetSummary(),
            }
        )
        return PollResult(self.info, None, [Sample(metric="target_up", value=0.0)])

    def _may_wait(self, collector: Collector[Any]) -> bool:
        """Slow sources take turns, one per poll, so that no poll pays for all of them at once."""
        return (
            collector.every_s > 0
            and collector.name not in self._refresh_next
            and collector.name in self._carried
        )

    def _record(
        self,
        collector: Collector[Any],
        result: StatementResult,
        ctx: ParseContext,
        outputs: PollOutputs,
        samples: list[Sample],
    ) -> CollectorStatus:
        """Parse one statement's rows into outputs + samples; its status, failures included."""
        every_s = float(collector.every_s) if collector.every_s else None
        if result.error is not None:
            error = describe_mysql_error(result.error)
            if error_code(result.error) in PRIVILEGE_ERRORS:
                self._missing_privileges[collector.name] = (collector.privilege or "a privilege", error)
                self._privilege_retry_at[collector.name] = ctx.now + PRIVILEGE_RETRY_S
            return CollectorStatus(
                name=collector.name,
                ok=False,
                duration_ms=round(result.duration_ms, 3),
                every_s=every_s,
                error=error,
            )
        parse_started = time.perf_counter()
        parse_error: str | None = None
        try:
            output = collector.parse(result.rows or [], ctx)
        except Exception as exc:
            log.exception("target %s: collector %s could not parse", self.name, collector.name)
            parse_error = f"parse failed: {type(exc).__name__}: {exc}"
        else:
            _put(collector, outputs, output.section)
            samples.extend(output.samples)
            if collector.every_s > 0:
                self._last_run[collector.name] = ctx.now
                self._carried[collector.name] = output
            self._missing_privileges.pop(collector.name, None)
            self._privilege_retry_at.pop(collector.name, None)
        # One status object, built once its fields are known (a poll makes a dozen).
        return CollectorStatus(
            name=collector.name,
            ok=parse_error is None,
            duration_ms=round(result.duration_ms + (time.perf_counter() - parse_started) * 1000, 3),
            every_s=every_s,
            error=parse_error,
        )

    async def _follow_up(
        self, ctx: ParseContext, outputs: PollOutputs, samples: list[Sample]
    ) -> dict[str, CollectorStatus]:
        """The poll's second round trip, only when the first named someone it must look up: who the
        queued and trx sessions not yet known are and, while the pool is under pressure, the
        connections behind performance_schema thread ids and the blocking transactions not listed."""
        statuses: dict[str, CollectorStatus] = {}
        lookups: list[Collector[Any]] = []
        identities = self.memory.identities
        if outputs.processlist is None:
            statuses[self.session_lookup.name] = _status(
                self.session_lookup.name, ok=False, skipped="needs the processlist collector"
            )
        else:
            identities.learn(outputs.processlist.identities, complete=outputs.processlist.complete)
            if unknown := identities.unknown(referenced_ids(outputs)):
                lookups.append(self.session_lookup.for_ids(unknown))
            else:
                statuses[self.session_lookup.name] = _status(
                    self.session_lookup.name, ok=True, note="on demand: everyone listed is already known"
                )
        threads, trx_ids = lookup_ids(outputs) if self._reads_holders(outputs) else (set(), set())
        if threads:
            lookups.append(self.thread_lookup.for_ids(threads))
        if trx_ids:
            lookups.append(self.trx_lookup.for_ids(trx_ids))
        for idle in (self.thread_lookup, self.trx_lookup):
            if not any(lookup.name == idle.name for lookup in lookups):
                statuses[idle.name] = _status(idle.name, ok=True, note="on demand: nothing to look up")
        if lookups:
            results = await self.connection.run_batch([lookup.sql(ctx.server) for lookup in lookups])
            self._statements_sent += len(results)
            for lookup, result in zip(lookups, results, strict=True):
                statuses[lookup.name] = self._record(lookup, result, ctx, outputs, samples)
        if outputs.session_lookup is not None:
            identities.learn(outputs.session_lookup)
        return statuses

    def _reads_holders(self, outputs: PollOutputs) -> bool:
        """This poll names who holds the pool: the last one had pressure, or this one queues."""
        groups = outputs.thread_pool_groups or outputs.mysql_tp_group_state or []
        return self.memory.reads_holders or any(g.queue_length > 0 for g in groups)

    async def _poll(self, now: float, started: float) -> PollResult:
        if self.connection.conn is None:
            await self.connection.connect()
        server = self.connection.server
        assert server is not None

        statuses: dict[str, CollectorStatus] = {}
        outputs = PollOutputs()
        to_run: list[Collector[Any]] = []
        slow_read = False
        for collector in self.collectors:
            skipped = collector.applies(server)
            retry_at = self._privilege_retry_at.get(collector.name, 0.0)
            if skipped is None and retry_at > now:
                privilege, error = self._missing_privileges[collector.name]
                skipped = f"needs {privilege} ({error}); retrying in {retry_at - now:.0f} s"
            if skipped is not None:
                statuses[collector.name] = _status(collector.name, ok=False, skipped=skipped)
            elif collector.on_pressure and not self.memory.reads_holders:
                # An idle pool pays nothing for who holds it: on_pressure collectors wait for a queue or a stall.
                statuses[collector.name] = _status(collector.name, ok=True, note=PRESSURE_NOTE)
            elif self._due(collector, now) and not (slow_read and self._may_wait(collector)):
                to_run.append(collector)
                slow_read = slow_read or self._may_wait(collector)
                self._refresh_next.discard(collector.name)
            else:
                # Not due: its last section stands for this poll; its samples were stored when read.
                _put(collector, outputs, self._carried[collector.name].section)
                carried_s = now - self._last_run[collector.name]
                statuses[collector.name] = CollectorStatus(
                    name=collector.name,
                    ok=True,
                    every_s=float(collector.every_s),
                    carried_s=round(carried_s, 3),
                    note=f"read every {collector.every_s:g} s; last {carried_s:.1f} s ago",
                )

        statements = [c.sql(server) for c in to_run]
        results = await self.connection.run_batch(statements)
        sent_before = self._statements_sent
        self._statements_sent += len(results)
        ctx = ParseContext(now=now, server=server, counters=self.counters, connections=self._connections)
        samples: list[Sample] = []
        for index, (collector, result) in enumerate(zip(to_run, results, strict=True)):
            # Our statements the server had counted when this one ran (QPS leaves them out); the
            # batch varies in length now that some sources are read less often.
            ctx.own_statements = sent_before + index + 1
            statuses[collector.name] = self._record(collector, result, ctx, outputs, samples)

        statuses.update(await self._follow_up(ctx, outputs, samples))

        status_values = outputs.global_status.values if outputs.global_status else {}
        self._connections = int_or_none(status_values.get("Threads_connected"))
        missing = sorted({privilege for privilege, _ in self._missing_privileges.values()})
        state = derive_state(self.name, now, server, outputs, self.memory, missing, samples)
        lookups = (self.session_lookup, self.thread_lookup, self.trx_lookup)
        state.collectors = [statuses[c.name] for c in (*self.collectors, *lookups)]
        duration_ms = (time.perf_counter() - started) * 1000
        samples.append(Sample(metric="poll_duration_ms", value=round(duration_ms, 3)))
        samples.append(sample("target_up", 1.0))
        failed = [s.name for s in state.collectors if s.error]
        self.info = self.info.model_copy(
            update={
                "status": "up",
                "reason": f"collectors failing: {', '.join(failed)}" if failed else None,
                # A snapshot: the connection keeps updating its own copy (exact_stats is dynamic).
                "server": server.model_copy(),
                "connection": self.connection.info.model_copy() if self.connection.info else None,
                "last_poll_at": now,
                "last_success_at": now,
                "poll_duration_ms": round(duration_ms, 3),
                "collectors": state.collectors,
                "missing_privileges": state.missing_privileges,
                "summary": target_summary(state),
            },
        )
        return PollResult(self.info, state, samples)

    async def close(self) -> None:
        await self.connection.close()


def _status(name: str, ok: bool, skipped: str | None = None, note: str | None = None) -> CollectorStatus:
    """A status with nothing per poll in it (no duration, no age)."""
    return CollectorStatus(name=name, ok=ok, skipped=skipped, note=note)


def _put(collector: Collector[Any], outputs: PollOutputs, section: Any) -> None:
    collector.put(outputs, section)
    if (table := collector.readable_table) is not None:
        outputs.readable_tables.add(table)
