"""Runs the rules for every target every recommend_interval_s, off the poll path, and remembers what changed.

It reads only the store (latest state + a window of history), never the server, so a slow rule
or a slow history query delays recommendations, never a poll.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import os
import time
from collections import deque
from typing import get_args

from poolscope.actions.allowlist import refusal
from poolscope.config import Settings, TargetConfig
from poolscope.poller.collectors.global_variables import GlobalVariables
from poolscope.recommend.base import Clear, RecommendContext, RecommendFinding, RecommendRule
from poolscope.recommend.flavors import config_snippet, supports_set_persist
from poolscope.recommend.history import History
from poolscope.recommend.models import (
    EvidenceWindow,
    Recommendation,
    RecommendationsOut,
    RuleStatus,
    VanishedRecommendation,
)
from poolscope.recommend.reads import Reads
from poolscope.recommend.rules import ALL_RULES
from poolscope.recommend.schedule import RecommendSchedule
from poolscope.schemas import ServerInfo, Severity, TargetState
from poolscope.store.health import FailureLog
from poolscope.store.latest import variables_fingerprint
from poolscope.store.sql import SqlStore

log = logging.getLogger(__name__)

VANISHED_KEPT = 50
VARIABLES_EVERY_S = GlobalVariables.every_s
MAX_WINDOW_POINTS = 2000
# How often the latest rows' variables fingerprints are compared with what the rules ran on.
VARIABLES_CHECK_S = 2.0


def local_cpu_count() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def on_loopback(target: TargetConfig) -> bool:
    """Whether the target's server is on this machine (its DSN names a loopback host)."""
    try:
        host = target.connection_params().host
    except ValueError:
        return False
    try:
        return host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def host_cpus(target: TargetConfig, local: bool | None = None) -> tuple[int | None, str | None]:
    """CPUs of the server's host: configured, or this machine's when the server is on loopback
    (`local`: on_loopback(target), when the caller knows it already)."""
    if target.cpus:
        return target.cpus, "configured"
    if local is None:
        local = on_loopback(target)
    return (local_cpu_count(), "local host") if local else (None, None)


def evaluate_rules(
    rules: tuple[RecommendRule, ...], ctx: RecommendContext
) -> list[tuple[RecommendRule, RecommendFinding | Clear]]:
    out: list[tuple[RecommendRule, RecommendFinding | Clear]] = []
    for rule in rules:
        try:
            out.append((rule, rule.evaluate(ctx)))
        except Exception as exc:  # one broken rule must not hide the others
            log.exception("rule %s failed on %s", rule.name, ctx.target)
            out.append((rule, Clear(f"rule failed: {type(exc).__name__}: {exc}")))
    return out


class TargetRecommendations:
    def __init__(self) -> None:
        self.active: dict[str, Recommendation] = {}
        self.vanished: deque[VanishedRecommendation] = deque(maxlen=VANISHED_KEPT)
        self.rules: list[RuleStatus] = []
        self.evaluated_at: float | None = None
        self.note: str | None = "not evaluated yet"


class Recommender:
    def __init__(
        self, settings: Settings, store: SqlStore, rules: tuple[RecommendRule, ...] = ALL_RULES
    ) -> None:
        self.settings = settings
        self.store = store
        self.rules = rules
        self._rounds_log = FailureLog(log, "evaluating recommendations")
        self._variables_log = FailureLog(log, "reading the variables fingerprints")
        # Each target's window of the rules' metrics, kept between evaluations (recommend/history.py).
        self._history = History(
            store, sorted({m for rule in rules for m in rule.metrics}), settings.recommend_window_s
        )
        # The store connection evaluations read on (one kept while the run loop runs, on SQLite).
        self.reads = Reads(store)
        self.targets: dict[str, TargetConfig] = {}
        self._state: dict[str, TargetRecommendations] = {}
        self._task: asyncio.Task[None] | None = None
        self._locks: dict[str, asyncio.Lock] = {}
        self._followups: set[asyncio.Task[None]] = set()
        self._schedule = RecommendSchedule([], settings)
        self._wake = asyncio.Event()
        # The fingerprint of the variables each target's rules last ran on (or that last brought a
        # run forward): a latest row showing another brings the next run forward.
        self._variables_fp: dict[str, str] = {}
        # Whether each target's server is on loopback, by its configuration (parsing the DSN was
        # 5 % of an evaluation).
        self._loopback: dict[str, tuple[TargetConfig, bool]] = {}
        self._targets_seen: list[TargetConfig] | None = None
        self._follow_targets()

    def _follow_targets(self) -> None:
        """Follow settings.targets, which a reload of the targets files replaces (targets_source.py):
        an added target gets its (empty) recommendations and is due at once, a removed one is forgotten."""
        if self.settings.targets is self._targets_seen:
            return
        self._targets_seen = self.settings.targets
        self.targets = {t.name: t for t in self.settings.targets}
        for name in list(self._state):
            if name not in self.targets:
                del self._state[name]
                self._locks.pop(name, None)
                self._forget(name)
        for name in self.targets:
            self._state.setdefault(name, TargetRecommendations())
            self._locks.setdefault(name, asyncio.Lock())
        self._schedule.sync(list(self.targets))

    def _forget(self, name: str) -> None:
        self._variables_fp.pop(name, None)
        self._loopback.pop(name, None)
        self._history.forget(name)

    def _host_cpus(self, target: TargetConfig) -> tuple[int | None, str | None]:
        known = self._loopback.get(target.name)
        if known is None or known[0] is not target:
            known = self._loopback[target.name] = (target, on_loopback(target))
        return host_cpus(target, known[1])

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="recommender")
        watcher = asyncio.create_task(self._watch_variables(), name="recommender-variables")
        self._followups.add(watcher)
        watcher.add_done_callback(self._followups.discard)

    async def stop(self) -> None:
        for followup in list(self._followups):
            followup.cancel()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
            self._task = None

    async def _run(self) -> None:
        async with self.reads.kept():
            await self._rounds()

    async def _rounds(self) -> None:
        schedule = self._schedule
        while True:
            self._wake.clear()
            self._follow_targets()
            for name in schedule.due(time.monotonic()):
                if name not in self._state:
                    continue  # removed by a reload while an earlier one was evaluated
                try:
                    await self.evaluate(name)
                except Exception as error:
                    self._rounds_log.failed(error)
                else:
                    self._rounds_log.ok()
                if (st := self._state.get(name)) is not None:
                    schedule.done(name, time.monotonic(), evaluated=st.evaluated_at is not None)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(
                    self._wake.wait(),
                    timeout=max(0.05, schedule.next_at(time.monotonic()) - time.monotonic()),
                )

    async def _watch_variables(self) -> None:
        """A variable changed on the server (by anyone): evaluate that target within a few seconds,
        not at its turn. Whichever process polls the target puts a fingerprint of the variables in
        its latest row (store/latest.py variables_fp): compared here for all targets at once, in
        memory for this process's own polls, else with one small query, never decoding a state."""
        while True:
            await asyncio.sleep(VARIABLES_CHECK_S)
            known = self._variables_fp
            if not known:
                continue
            try:
                stored = await self.store.latest_rows.variables_fps(list(known))
            except Exception as error:
                self._variables_log.failed(error)
                continue
            self._variables_log.ok()
            changed = [name for name, fp in stored.items() if known.get(name, fp) != fp]
            for name in changed:
                known[name] = stored[name]  # one run brought forward per change
                self._schedule.soon(name)
            if changed:
                self._wake.set()

    def get(self, name: str) -> RecommendationsOut:
        self._follow_targets()
        return self._answer(name, self._state[name])

    @staticmethod
    def _answer(name: str, st: TargetRecommendations) -> RecommendationsOut:
        return RecommendationsOut(
            target=name,
            evaluated_at=st.evaluated_at,
            active=sorted(st.active.values(), key=_severity_order),
            vanished=list(reversed(st.vanished)),
            rules=st.rules,
            note=st.note,
        )

    def find(self, name: str, rec_id: str) -> Recommendation | None:
        self._follow_targets()
        return self._state[name].active.get(rec_id)

    async def evaluate(self, name: str, now: float | None = None) -> RecommendationsOut:
        self._follow_targets()
        # Taken before any await: a reload may remove the target meanwhile (the answer is then
        # this evaluation's, of a target no longer watched, not a KeyError).
        st, target = self._state[name], self.targets[name]
        async with self._locks[name]:
            await self._evaluate(name, st, target, time.time() if now is None else now)
        self._follow_targets()
        if self._state.get(name) is not st:  # removed by a reload meanwhile: what it put back goes
            self._forget(name)
        return self._answer(name, st)

    def evaluate_after_change(self, name: str, variable: str, value: str) -> None:
        """Re-evaluate, in the background, once a poll has seen `variable` = `value` (variables are
        read every few seconds), so a fulfilled proposal does not linger until the next round."""
        task = asyncio.create_task(self._evaluate_when_seen(name, variable, value), name=f"reeval:{name}")
        self._followups.add(task)
        task.add_done_callback(self._followups.discard)

    async def _evaluate_when_seen(self, name: str, variable: str, value: str) -> None:
        deadline = time.monotonic() + 3 * self.settings.poll_interval_s + VARIABLES_EVERY_S + 2
        while time.monotonic() < deadline:
            latest = await self.store.latest(name)
            if latest and latest[1] is not None and latest[1].variables.get(variable) == value:
                break
            await asyncio.sleep(self.settings.poll_interval_s / 2)
        try:
            await self.evaluate(name)
        except Exception:
            log.exception("re-evaluating %s after a change failed", name)

    async def _evaluate(self, name: str, st: TargetRecommendations, target: TargetConfig, now: float) -> None:
        # The latest row and the history on one connection (recommend/reads.py).
        async with self.reads.connection() as conn:
            latest = await self.store.latest(name, conn)
            if latest is None or latest[1] is None or latest[0].server is None:
                st.note = "no successful poll yet"
                return
            info, state = latest
            assert state is not None and info.server is not None
            if info.status != "up":
                # Keep what we had: a target that is down tells nothing new about its tuning.
                st.note = f"target is {info.status}; recommendations as of the last successful poll"
                return
            window_s = self.settings.recommend_window_s
            start = now - window_s
            points = int(min(MAX_WINDOW_POINTS, max(10, window_s / self.settings.poll_interval_s)))
            window = await self._history.window(name, start, now, points, self.settings.poll_interval_s, conn)
        cpus, cpus_source = self._host_cpus(target)
        ctx = RecommendContext(
            target=name,
            now=now,
            server=info.server,
            state=state,
            info=info,
            window=window,
            cpus=cpus,
            cpus_source=cpus_source,
        )
        results = evaluate_rules(self.rules, ctx)
        st.rules = []
        seen: set[str] = set()
        for rule, result in results:
            rec_id = f"{name}:{rule.name}"
            if isinstance(result, RecommendFinding):
                seen.add(rec_id)
                previous = st.active.get(rec_id)
                polls = max((ctx.window.count(m) for m in rule.metrics), default=0)
                st.active[rec_id] = self._recommendation(
                    rec_id, rule, result, target, info.server, ctx, polls, previous
                )
                st.rules.append(RuleStatus(rule=rule.name, recommends=True, note=result.summary))
            else:
                st.rules.append(RuleStatus(rule=rule.name, recommends=False, note=result.reason))
                gone = st.active.pop(rec_id, None)
                if gone is not None:
                    st.vanished.append(
                        VanishedRecommendation(
                            id=gone.id,
                            rule=gone.rule,
                            target=name,
                            variable=gone.variable,
                            title=gone.title,
                            proposed=gone.proposed,
                            first_seen=gone.first_seen,
                            gone_at=now,
                            why_gone=_why_gone(gone, state, result.reason),
                        )
                    )
        st.evaluated_at = now
        st.note = None
        self._variables_fp[name] = variables_fingerprint(state.variables)

    def _recommendation(
        self,
        rec_id: str,
        rule: RecommendRule,
        finding: RecommendFinding,
        target: TargetConfig,
        server: ServerInfo,
        ctx: RecommendContext,
        polls: int,
        previous: Recommendation | None,
    ) -> Recommendation:
        reason = None
        if finding.apply == "restart":
            reason = f"{finding.variable} is read only at start-up: use the config snippet and restart"
        else:
            reason = refusal(target, finding.variable)
        start, end = ctx.window.start, ctx.window.end
        return Recommendation(
            id=rec_id,
            rule=rule.name,
            target=ctx.target,
            variable=finding.variable,
            current=finding.current,
            proposed=finding.proposed,
            unit=finding.unit,
            title=finding.summary,
            why=finding.description,
            evidence=finding.evidence,
            window=EvidenceWindow(from_=start, to=end, seconds=end - start, polls=polls),
            severity=finding.severity,
            apply=finding.apply,
            applicable=reason is None,
            not_applicable_reason=reason,
            read_more=finding.read_more,
            chart_metrics=finding.chart_metrics,
            chart_url=f"/targets/{ctx.target}?from={int(start)}&to={int(end) + 1}",
            config_snippet=finding.config_snippet
            or config_snippet(server.flavor, finding.variable, finding.proposed),
            persist_sql=(
                f"SET PERSIST {finding.variable} = {finding.proposed}"
                if finding.apply == "live" and supports_set_persist(server.flavor, server.version_tuple)
                else None
            ),
            first_seen=previous.first_seen if previous else ctx.now,
            last_seen=ctx.now,
        )


def _why_gone(gone: Recommendation, state: TargetState, reason: str) -> str:
    now_value = state.variables.get(gone.variable)
    if now_value is not None and gone.current is not None and now_value != gone.current:
        return f"{gone.variable} changed from {gone.current} to {now_value}; now: {reason}"
    return f"no longer holds: {reason}"


def _severity_order(rec: Recommendation) -> tuple[int, str]:
    return (get_args(Severity).index(rec.severity), rec.rule)
