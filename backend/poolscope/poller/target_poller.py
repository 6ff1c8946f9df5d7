"""Polls one target: runs the applicable collectors in one round trip and derives the state.

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
from poolscope.analysis.last_statement import LastStatementMemory
from poolscope.analysis.ratios import CacheRatios
from poolscope.analysis.session_identity import SessionIdentities
from poolscope.analysis.stalls import StallDetector
from poolscope.config import DsnError, Settings, TargetConfig
from poolscope.flavors import flavor_spec
from poolscope.poller.collectors import all_collectors
from poolscope.poller.collectors.base import Collector, CollectorOutput, ParseContext
from poolscope.poller.collectors.global_status import StatusSection
from poolscope.poller.collectors.innodb_trx import MIN_LISTED_AGE_S
from poolscope.poller.collectors.innodb_trx_summary import TrxSummary
from poolscope.poller.collectors.mysql_tp_group_state import MysqlTpCollector
from poolscope.poller.collectors.mysql_tp_group_stats import MysqlGroupCounters, MysqlStatsSection
from poolscope.poller.collectors.percona_threadpool_status import PerconaPoolSection
from poolscope.poller.collectors.processlist import ProcesslistSection
from poolscope.poller.collectors.session_lookup import SessionLookup
from poolscope.poller.collectors.thread_pool_queue_summary import QueueSummary
from poolscope.poller.collectors.thread_pool_stats import GroupCounters
from poolscope.poller.connection import (
    PRIVILEGE_ERRORS,
    ConnectError,
    StatementResult,
    describe_mysql_error,
    error_code,
    open_connection,
)
from poolscope.poller.discovery import capabilities
from poolscope.schemas import (
    CollectorStatus,
    GroupState,
    PoolSummary,
    QueuedConnection,
    Sample,
    ServerInfo,
    TargetInfo,
    TargetState,
    TargetSummary,
    Threads,
    Throughput,
    Transaction,
    Transactions,
)

log = logging.getLogger(__name__)

# After a privilege error the collector is retried this rarely, so a GRANT is picked up
# without paying an extra round trip every second.
PRIVILEGE_RETRY_S = 60.0


@dataclass
class PollResult:
    info: TargetInfo
    state: TargetState | None
    samples: list[Sample]


class TargetPoller:
    def __init__(self, config: TargetConfig, settings: Settings, collectors: list[Collector] | None = None):
        self.config = config
        self.settings = settings
        self.collectors = collectors if collectors is not None else all_collectors()
        self.connection = open_connection(config)
        self.counters = CounterMemory()
        self.stalls = StallDetector()
        self.ratios = CacheRatios(settings.ratio_window_s)
        self.last_statements = LastStatementMemory()
        self.identities = SessionIdentities()
        self.session_lookup = SessionLookup()
        self._statements_sent = 0
        self._privilege_retry_at: dict[str, float] = {}
        # collector name -> (privilege it needs, the server's refusal)
        self._missing_privileges: dict[str, tuple[str, str]] = {}
        # Collectors with a resolution (every_s > 0): when each last succeeded and what it read.
        self._last_run: dict[str, float] = {}
        self._carried: dict[str, CollectorOutput] = {}
        self._refresh_next: set[str] = set()
        self._connections: int | None = None  # Threads_connected as the last poll read it
        self.info = TargetInfo(name=config.name, poll_interval_s=settings.poll_interval_s)
        # One statement stream per connection: polls and read_between_polls() take turns.
        self._turn = asyncio.Lock()

    @property
    def name(self) -> str:
        return self.config.name

    def refresh_soon(self, collector_name: str) -> None:
        """Run that collector on the next poll whatever its resolution (e.g. variables after a SET)."""
        self._refresh_next.add(collector_name)

    def _due(self, collector: Collector, now: float) -> bool:
        if collector.every_s <= 0 or collector.name in self._refresh_next:
            return True
        last = self._last_run.get(collector.name)
        # Half a poll of slack: a 5 s collector polled every 1 s runs every 5th poll, not 6th.
        return last is None or now - last >= collector.every_s - 0.5 * self.settings.poll_interval_s

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
        now = time.time()
        started = time.perf_counter()
        try:
            return await asyncio.wait_for(self._poll(now, started), timeout=self.settings.poll_timeout_s)
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
        self.stalls.forget()
        self.last_statements.forget()
        self.identities.forget()
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

    def _may_wait(self, collector: Collector) -> bool:
        """Slow sources take turns, one per poll, so that no poll pays for all of them at once."""
        return (
            collector.every_s > 0
            and collector.name not in self._refresh_next
            and collector.name in self._carried
        )

    def _record(
        self,
        collector: Collector,
        result: StatementResult,
        ctx: ParseContext,
        outputs: dict[str, CollectorOutput],
        samples: list[Sample],
    ) -> CollectorStatus:
        """Parse one statement's rows into outputs + samples; its status, failures included."""
        status = CollectorStatus(
            name=collector.name,
            ok=False,
            duration_ms=round(result.duration_ms, 3),
            every_s=collector.every_s or None,
        )
        if result.error is not None:
            status.error = describe_mysql_error(result.error)
            if error_code(result.error) in PRIVILEGE_ERRORS:
                self._missing_privileges[collector.name] = (
                    collector.privilege or "a privilege",
                    status.error,
                )
                self._privilege_retry_at[collector.name] = ctx.now + PRIVILEGE_RETRY_S
            return status
        parse_started = time.perf_counter()
        try:
            output = collector.parse(result.rows or [], ctx)
        except Exception as exc:
            log.exception("target %s: collector %s could not parse", self.name, collector.name)
            status.error = f"parse failed: {type(exc).__name__}: {exc}"
        else:
            outputs[collector.name] = output
            samples.extend(output.samples)
            status.ok = True
            if collector.every_s > 0:
                self._last_run[collector.name] = ctx.now
                self._carried[collector.name] = output
            self._missing_privileges.pop(collector.name, None)
            self._privilege_retry_at.pop(collector.name, None)
        status.duration_ms = round(result.duration_ms + (time.perf_counter() - parse_started) * 1000, 3)
        return status

    async def _name_sessions(
        self, ctx: ParseContext, outputs: dict[str, CollectorOutput], samples: list[Sample]
    ) -> CollectorStatus:
        """Learn who the sessions the processlist read are; look up by id the queued and trx ones still unknown."""
        name = self.session_lookup.name
        processlist: ProcesslistSection | None = _section(outputs, "processlist", None)
        if processlist is None:
            return CollectorStatus(name=name, ok=False, skipped="needs the processlist collector")
        self.identities.learn(processlist.identities)
        unknown = self.identities.unknown(_referenced_ids(outputs))
        if not unknown:
            return CollectorStatus(name=name, ok=True, note="on demand: everyone listed is already known")
        lookup = self.session_lookup.for_ids(unknown)
        (result,) = await self.connection.run_batch([lookup.sql(ctx.server)])
        self._statements_sent += 1
        status = self._record(lookup, result, ctx, outputs, samples)
        if name in outputs:
            self.identities.learn(outputs[name].section)
        return status

    async def _poll(self, now: float, started: float) -> PollResult:
        if self.connection.conn is None:
            await self.connection.connect()
        server = self.connection.server
        assert server is not None

        statuses: dict[str, CollectorStatus] = {}
        outputs: dict[str, CollectorOutput] = {}
        to_run: list[Collector] = []
        slow_read = False
        for collector in self.collectors:
            skipped = collector.applies(server)
            retry_at = self._privilege_retry_at.get(collector.name, 0.0)
            if skipped is None and retry_at > now:
                privilege, error = self._missing_privileges[collector.name]
                skipped = f"needs {privilege} ({error}); retrying in {retry_at - now:.0f} s"
            if skipped is not None:
                statuses[collector.name] = CollectorStatus(name=collector.name, ok=False, skipped=skipped)
            elif self._due(collector, now) and not (slow_read and self._may_wait(collector)):
                to_run.append(collector)
                slow_read = slow_read or self._may_wait(collector)
                self._refresh_next.discard(collector.name)
            else:
                # Not due: its last section stands for this poll; its samples were stored when read.
                outputs[collector.name] = CollectorOutput(section=self._carried[collector.name].section)
                carried_s = now - self._last_run[collector.name]
                statuses[collector.name] = CollectorStatus(
                    name=collector.name,
                    ok=True,
                    every_s=collector.every_s,
                    carried_s=round(carried_s, 3),
                    note=f"read every {collector.every_s:g} s; last {carried_s:.1f} s ago",
                )

        results = await self.connection.run_batch([c.sql(server) for c in to_run])
        sent_before = self._statements_sent
        self._statements_sent += len(results)
        ctx = ParseContext(now=now, server=server, counters=self.counters, connections=self._connections)
        samples: list[Sample] = []
        for index, (collector, result) in enumerate(zip(to_run, results, strict=True)):
            # Our statements the server had counted when this one ran (QPS leaves them out); the
            # batch varies in length now that some sources are read less often.
            ctx.own_statements = sent_before + index + 1
            statuses[collector.name] = self._record(collector, result, ctx, outputs, samples)

        statuses[self.session_lookup.name] = await self._name_sessions(ctx, outputs, samples)

        state = self._derive(now, outputs, samples)
        state.collectors = [statuses[c.name] for c in (*self.collectors, self.session_lookup)]
        duration_ms = (time.perf_counter() - started) * 1000
        samples.append(Sample(metric="poll_duration_ms", value=round(duration_ms, 3)))
        samples.append(Sample(metric="target_up", value=1.0))
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
                "summary": _summary(state),
            }
        )
        return PollResult(self.info, state, samples)

    def _derive(self, now: float, outputs: dict[str, CollectorOutput], samples: list[Sample]) -> TargetState:
        """Cross-source values: stall verdicts, retired groups, ratios, TPS, thread counts."""
        server = self.connection.server
        assert server is not None
        variables: dict[str, str] = _section(outputs, "global_variables", {})
        if "thread_pool_exact_stats" in variables:
            # Dynamic: the mode the queue times come from can change between polls.
            exact = variables["thread_pool_exact_stats"].upper() == "ON"
            server.exact_stats = exact
            server.queue_time_mode = "exact" if exact else "coarse"

        # MariaDB's THREAD_POOL_* or MySQL Enterprise's tp_* tables: the same per-group model.
        self._learn_pool_access(server, outputs)
        groups: list[GroupState] = _section(
            outputs, "thread_pool_groups", _section(outputs, "mysql_tp_group_state", [])
        )
        mysql_stats: MysqlStatsSection | None = _section(outputs, "mysql_tp_group_stats", None)
        counters: dict[int, GroupCounters] = _section(
            outputs, "thread_pool_stats", dict(mysql_stats.groups) if mysql_stats else {}
        )
        pool_size = _int_or_none(variables.get("thread_pool_size"))
        spec = flavor_spec(server)
        # MySQL Enterprise counts thread_pool_stall_limit in 10 ms units (flavors.py).
        stall_limit_ms = (
            spec.stall_limit_ms(variables) if spec else _int_or_none(variables.get("thread_pool_stall_limit"))
        )
        for group in groups:
            stats = counters.get(group.group_id)
            if isinstance(stats, MysqlGroupCounters):
                group.stalled_query_ratio = stats.stalled_query_ratio
            if stats is not None:
                group.stalls_per_s = stats.rates["stalls"]
                group.thread_creations_per_s = stats.rates["thread_creations"]
                group.thread_creations_due_to_stall_per_s = stats.rates["thread_creations_due_to_stall"]
                group.dequeues_per_s = stats.rates["dequeues"]
                group.throttles_per_s = stats.rates["throttles"]
                group.wakes_per_s = stats.rates["wakes"]
            group.stall_reason = self.stalls.judge(
                group.group_id,
                now,
                group.queue_length,
                None if stats is None else stats.dequeues,
                None if stats is None else stats.raw["stalls"],
                group.is_stalled,
                stall_limit_ms,
            )
            group.stalled = group.stall_reason is not None
            # Shrinking thread_pool_size leaves old groups listed with their connections (§6).
            group.retired = pool_size is not None and group.group_id >= pool_size
            samples.append(
                Sample(
                    metric="tp_group_stalled",
                    labels={"group": str(group.group_id)},
                    value=1.0 if group.stalled else 0.0,
                )
            )

        status: StatusSection = _section(outputs, "global_status", StatusSection())
        values, rates = status.values, status.rates
        self._connections = _int_or_none(values.get("Threads_connected"))
        # MySQL Enterprise's plugin reports thread_handling=loaded-dynamically: still a pool.
        regime = "pool-of-threads" if server.pool_enabled else server.thread_handling
        thread_ratio, buffer_ratio = self.ratios.update(now, values, regime)
        samples.append(Sample(metric="thread_cache_miss_ratio", value=thread_ratio.value))
        samples.append(Sample(metric="buffer_pool_miss_ratio", value=buffer_ratio.value))

        queue: list[QueuedConnection] | None = _section(outputs, "thread_pool_queues", None)
        queue_summary: QueueSummary | None = _section(outputs, "thread_pool_queue_summary", None)
        transactions: Transactions | None = None
        if "innodb_trx_summary" in outputs:
            summary: TrxSummary = outputs["innodb_trx_summary"].section
            transactions = Transactions(
                count=summary.count,
                lock_waits=summary.lock_waits,
                longest_age_s=summary.longest_age_s,
                listed_min_age_s=MIN_LISTED_AGE_S,
                items=_section(outputs, "innodb_trx", []),
            )
        processlist: ProcesslistSection = _section(outputs, "processlist", ProcesslistSection())
        _join_sessions(queue, transactions, processlist, self.identities)
        self.last_statements.observe(processlist.active, now)
        if queue:
            self.last_statements.annotate(queue, now)
        if queue_summary:
            for group in groups:
                group.oldest_queued_ms = queue_summary.oldest_ms_by_group.get(group.group_id)
        state = TargetState(
            target=self.name,
            ts=now,
            status="up",
            groups=groups,
            queue=queue or [],
            transactions=transactions,
            waits=_section(outputs, "thread_pool_waits", mysql_stats.waits if mysql_stats else []),
            sessions=processlist.active,
            threads=Threads(
                connected=_int_or_none(values.get("Threads_connected")),
                running=_int_or_none(values.get("Threads_running")),
                cached=_int_or_none(values.get("Threads_cached")),
                created_per_s=rates.get("threads_created_per_s"),
                pool_threads=_int_or_none(values.get("Threadpool_threads")),
                pool_idle_threads=_int_or_none(values.get("Threadpool_idle_threads")),
            ),
            throughput=Throughput(
                qps=rates.get("qps"),
                tps=rates.get("tps"),
                connections_per_s=rates.get("connections_per_s"),
                aborted_connects_per_s=rates.get("aborted_connects_per_s"),
                aborted_clients_per_s=rates.get("aborted_clients_per_s"),
            ),
            variables=variables,
            pool=_pool_summary(server, variables, values, stall_limit_ms, groups, outputs),
            missing_privileges=sorted({privilege for privilege, _ in self._missing_privileges.values()}),
        )
        state.ratios.thread_cache_miss = thread_ratio
        state.ratios.buffer_pool_miss = buffer_ratio
        state.queued_connections = queue_summary.total if queue_summary else None
        if state.pool is not None and state.pool.queue_depth is not None:
            # Percona 8.4.10+: the server's own whole-pool count (no per-connection rows).
            state.queued_connections = state.pool.queue_depth.total
        return state

    def _learn_pool_access(self, server: ServerInfo, outputs: dict[str, CollectorOutput]) -> None:
        """What this poll showed the server can report, where discovery could not know it.

        Percona's statistics and queue depth are status variables that exist from 8.4.10 on: the
        capabilities follow what the server reports, not its version. A MySQL Enterprise pool
        whose tp_* tables were hidden (no grant) becomes readable once a read of them succeeds.
        """
        percona: PerconaPoolSection | None = _section(outputs, "percona_threadpool_status", None)
        if percona is not None:
            server.capabilities = capabilities(server, percona.status_names)
        if server.pool_grant_needed is not None:
            readable = {
                c.table for c in self.collectors if isinstance(c, MysqlTpCollector) and c.name in outputs
            }
            if readable:
                server.pool_grant_needed = None
                server.pool_tables = sorted(set(server.pool_tables) | readable)
                server.capabilities = capabilities(server)

    async def close(self) -> None:
        await self.connection.close()


def _section(outputs: dict[str, CollectorOutput], name: str, default: Any) -> Any:
    """A collector's section, or the default when it did not run or failed this poll."""
    output = outputs.get(name)
    return output.section if output is not None else default


def _referenced_ids(outputs: dict[str, CollectorOutput]) -> set[int]:
    """Connection ids this poll must name: the queued ones and the transactions' threads."""
    queue: list[QueuedConnection] = _section(outputs, "thread_pool_queues", [])
    trx: list[Transaction] = _section(outputs, "innodb_trx", [])
    ids = {e.connection_id for e in queue}
    ids.update(t.thread_id for t in trx)
    ids.discard(None)
    return ids  # type: ignore[return-value]


def _join_sessions(
    queue: list[QueuedConnection] | None,
    transactions: Transactions | None,
    processlist: ProcesslistSection,
    identities: SessionIdentities,
) -> None:
    """Name who is queued and whose transaction it is, from PROCESSLIST (joined here, not in SQL).

    Who (user, host, db) comes from what the poller has learnt of each session, this poll's
    processlist included; a queued connection looks idle until a worker reads its request, so
    its command, time and SQL are there only when it is active this poll.
    """
    for entry in queue or []:
        if entry.connection_id is None:
            continue
        if (known := identities.get(entry.connection_id)) is not None:
            entry.user, entry.host, entry.db = known
        if (session := processlist.by_id.get(entry.connection_id)) is not None:
            entry.command, entry.time_s, entry.state, entry.info = (
                session.command,
                session.time_s,
                session.state,
                session.info,
            )
    for trx in transactions.items if transactions else []:
        if trx.thread_id is None:
            continue
        known = identities.get(trx.thread_id)
        if known is not None:
            trx.user, trx.host, trx.db = known


def _summary(state: TargetState) -> TargetSummary:
    queue_length = sum(g.queue_length for g in state.groups) if state.groups else None
    return TargetSummary(
        queue_length=queue_length,
        queued_connections=state.queued_connections,
        groups=len(state.groups) if state.groups else None,
        stalled_groups=sum(1 for g in state.groups if g.stalled) if state.groups else None,
        threads_connected=state.threads.connected,
        threads_running=state.threads.running,
        qps=state.throughput.qps,
        tps=state.throughput.tps,
        active_transactions=state.transactions.count if state.transactions else None,
        pool_threads=state.threads.pool_threads,
        pool_idle_threads=state.threads.pool_idle_threads,
    )


def _pool_summary(
    server: ServerInfo,
    variables: dict[str, str],
    status: dict[str, float],
    stall_limit_ms: float | None,
    groups: list[GroupState],
    outputs: dict[str, CollectorOutput],
) -> PoolSummary | None:
    """Whole-pool figures; for Percona (no per-group tables) this is all there is of the pool."""
    if not server.pool_enabled:
        return None
    spec = flavor_spec(server)
    raw_limit = variables.get(spec.stall_limit.name if spec else "thread_pool_stall_limit")
    percona: PerconaPoolSection | None = _section(outputs, "percona_threadpool_status", None)
    mysql_stats: MysqlStatsSection | None = _section(outputs, "mysql_tp_group_stats", None)
    threads = _int_or_none(status.get("Threadpool_threads"))
    if threads is None and groups:
        threads = sum(g.threads for g in groups)
    return PoolSummary(
        kind=server.pool_kind,
        size=_int_or_none(variables.get("thread_pool_size")),
        stall_limit_ms=stall_limit_ms,
        stall_limit_raw=None
        if raw_limit is None
        else f"{raw_limit} {spec.stall_limit.unit_label if spec else ''}".strip(),
        threads=threads,
        idle_threads=_int_or_none(status.get("Threadpool_idle_threads")),
        high_prio_mode=variables.get("thread_pool_high_prio_mode"),
        high_prio_tickets=variables.get("thread_pool_high_prio_tickets"),
        queue_wait=percona.stats if percona else [],
        queue_depth=percona.queue_depth if percona else None,
        admin_group=mysql_stats.admin if mysql_stats else None,
        thread_states=_section(outputs, "mysql_tp_thread_state", None),
    )


def _int_or_none(value: str | float | None) -> int | None:
    if value is None:
        return None
    try:
        return int(float(value))
    except ValueError:
        return None
