"""The alert engine: judges every poll of this process's targets, in order, and runs the lifecycle.

The scheduler hands it each poll as it is made, before the store has it (poller/scheduler.py):
polls are judged by the process that made them, whether or not the store is up, and in a fleet
also the polls in flight while a target's lease moves (the scheduler hands a target over only
once its last poll here is judged; the new owner starts from the store's open alerts, take_over).
Lifecycle per target + rule + group (the fingerprint):
  pending (condition seen) -> firing (held for the rule's for-duration) -> resolved (clear for
  resolve_after_s; the rule's resolve threshold, lower than the firing one, keeps it firing in
  between). An alert that fired flap_max_fires times within flap_window_s is flapping: it then
  resolves only after flap_resolve_after_s clear, so a condition that comes and goes pages once.
Firing and resolution are written to the database before anyone is told; firing alerts are
restored on start-up. A firing alert may take a snapshot (the snapshot taker it was built with):
the engine records the snapshot's id on the alert itself, so snapshots never call back into it.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections import defaultdict, deque
from collections.abc import Awaitable, Callable, Collection, Iterable, Sequence
from typing import Any, Protocol

from poolscope.alerts.model import AlertContext, AlertFinding, AlertRule, Observation
from poolscope.alerts.notifiers.webhook import WebhookDispatcher
from poolscope.alerts.repository import AlertRepository
from poolscope.alerts.rules import all_rules
from poolscope.alerts.settings import AlertSettings
from poolscope.clock import SYSTEM, Clock
from poolscope.schemas import Alert, AlertEvent, AlertTransition, PollEvent, Silence
from poolscope.store.health import FailureLog
from poolscope.store.live import LiveHub

log = logging.getLogger(__name__)

# How often the engine re-reads silences that another process may have changed.
SILENCE_REFRESH_S = 2.0


class HeldWrites(Protocol):
    """The store's writer as the engine uses it (store/writer.py): an alert change is written at
    once if the store takes it, else held in order with the polls and written when it is back."""

    def handle(self, kind: str, handler: Callable[[dict[str, Any]], Awaitable[int | None]]) -> None: ...

    async def write_op(
        self,
        kind: str,
        key: str,
        payload: dict[str, Any],
        written: Callable[[int | None], None] | None = None,
        *,
        essential: bool = False,
    ) -> int | None: ...


class SnapshotTaker(Protocol):
    """What the engine needs of the snapshot service: a capture for a firing alert."""

    async def on_alert_firing(self, alert: Alert, poll: PollEvent | None = None) -> int | None:
        """The id of the snapshot taken for this alert (`poll`: the poll it fired on, whose state
        the capture starts from, store or no store), or None when it takes none."""
        ...


def fingerprint(target: str, rule: str, group: str | None) -> str:
    return hashlib.sha256(f"{target}\x00{rule}\x00{group or ''}".encode()).hexdigest()[:16]


class AlertEngine:
    def __init__(
        self,
        settings: AlertSettings,
        hub: LiveHub,
        repo: AlertRepository,
        dispatcher: WebhookDispatcher | None = None,
        rules: list[AlertRule] | None = None,
        snapshots: SnapshotTaker | None = None,
        shared_silences: bool = False,
        clock: Clock = SYSTEM,
        writes: HeldWrites | None = None,
    ) -> None:
        self.settings = settings
        # For-durations count in the polls' own timestamps; the clock is for silences, acks and
        # the events' times.
        self.clock = clock
        self.hub = hub
        self.repo = repo
        self.dispatcher = dispatcher
        self.rules = rules if rules is not None else all_rules()
        self.active: dict[str, Alert] = {}
        self._fire_times: dict[str, deque[float]] = defaultdict(deque)
        self._history: dict[str, deque[Observation]] = defaultdict(deque)
        # Alerts read back from the store (start-up, take_over) whose condition this engine has not
        # seen yet: when their first poll here came (None: none yet). They resolve only after
        # resolve_after_s of polls here, not from their stored last_active_at: the polls between
        # (a failover's, a restart's) were judged by no one, and the first poll after them knows
        # less (a stall verdict needs a poll before it).
        self._resumed: dict[str, float | None] = {}
        self.silences: list[Silence] = []
        # In a fleet, silences are changed through an API process: re-read them from the store.
        self.shared_silences = shared_silences
        self._silences_read_at = self.clock.monotonic()
        self._silences_log = FailureLog(log, "reading silences from the store", clock)
        self.snapshots = snapshots
        # Without it (tests), alert changes are written straight to the repository.
        self.writes = writes
        if writes is not None:
            writes.handle("alert", self._write_held)
            writes.handle("alert_snapshot", self._write_link)
        self.evaluations = 0
        self._judging: PollEvent | None = None  # the poll being judged (a firing's snapshot starts from it)
        self._background: set[asyncio.Task[None]] = set()
        self._lock = asyncio.Lock()

    # --- running ---------------------------------------------------------------------------

    async def start(self, *, restore: bool = True) -> None:
        """Read the silences and (restore) every alert open in the store back: one process judges
        every target. A fleet poller restores a target's alerts when it takes the target over."""
        if restore:
            for alert in await self.repo.open_alerts():
                self._resume(alert)
        self.silences = await self.repo.silences(active_at=self.clock.time())

    async def stop(self) -> None:
        for task in list(self._background):
            task.cancel()
        self._background.clear()

    async def take_over(self, targets: Collection[str]) -> None:
        """In a fleet (poolscope/fleet/): these targets' polls are judged here from now on. Their
        open alerts are read back from the store, where their previous poller left them once it had
        judged its last poll of them, so an alert still firing there continues here, never fires
        again, and what this process knew of them before is replaced."""
        gained = set(targets)
        if not gained:
            return
        async with self._lock:
            self._forget(gained)
            for alert in await self.repo.open_alerts():
                if alert.target in gained:
                    self._resume(alert)

    async def hand_over(self, targets: Collection[str]) -> None:
        """In a fleet: these targets are no longer polled here, and every poll made here is judged
        (the scheduler says so only once their loops ended): their new owner goes on from the store."""
        async with self._lock:
            self._forget(set(targets))

    def _resume(self, alert: Alert) -> None:
        self.active[alert.fingerprint] = alert
        self._resumed[alert.fingerprint] = None

    def _forget(self, targets: set[str]) -> None:
        for fp in [fp for fp, a in self.active.items() if a.target in targets]:
            del self.active[fp]
            self._resumed.pop(fp, None)
        for target in targets:
            self._history.pop(target, None)

    # --- evaluation ------------------------------------------------------------------------

    async def evaluate(self, event: PollEvent) -> None:
        """Judge one poll (the scheduler awaits it: a target's polls are judged in order)."""
        async with self._lock:
            await self._evaluate(event)

    async def _evaluate(self, event: PollEvent) -> None:
        self.evaluations += 1
        self._judging = event
        await self._refresh_silences()  # before anything fires: a silenced alert sends nothing
        target, now = event.target, event.ts
        observation = Observation(event.ts, event.target_info, event.state)
        thresholds = self.settings.thresholds_for(target)
        ctx = AlertContext(
            target=target,
            now=now,
            info=event.target_info,
            state=event.state,
            history=self._observe(target, observation) if self._keeps_history else (observation,),
            thresholds=thresholds,
        )
        untouched: set[str] = set()
        for rule in self.rules:
            if rule.needs_state and event.state is None:
                untouched |= self._alerts_of(target, rule)  # target down: nothing fires or resolves
                continue
            try:
                findings = rule.evaluate(ctx)
            except Exception:
                log.exception("alert rule %s failed on %s", rule.name, target)
                untouched |= self._alerts_of(target, rule)
                continue
            for finding in findings:
                fp = fingerprint(target, rule.name, finding.group)
                untouched.add(fp)
                await self._apply(rule, finding, fp, target, now, event.ts, rule.for_s(thresholds))
        for fp, alert in list(self.active.items()):
            if alert.target != target or fp in untouched:
                continue
            if alert.status == "pending":
                del self.active[fp]
                await self._publish(
                    alert.model_copy(update={"status": "resolved", "resolved_at": now}), "resolved"
                )
                continue
            delay = self.settings.flap_resolve_after_s if alert.flapping else self.settings.resolve_after_s
            clear_since = alert.last_active_at
            if fp in self._resumed:
                first_here = self._resumed[fp]
                if first_here is None:
                    first_here = self._resumed[fp] = now
                clear_since = max(clear_since, first_here)
            if now - clear_since >= delay:
                await self._resolve(fp, alert, now)
        await self._apply_silences(now)

    @property
    def rules(self) -> list[AlertRule]:
        return self._rules

    @rules.setter
    def rules(self, rules: Sequence[AlertRule]) -> None:
        """What follows from the rules is derived here, so replacing them keeps it true."""
        self._rules = list(rules)
        self._rules_by_name = {r.name: r for r in self._rules}
        # Recent polls per target, only while a rule reads them: each holds a whole TargetState, and
        # 120 s of them for every target were most of a poller's memory and of its full collections.
        self._keeps_history = any(rule.reads_history for rule in self._rules)

    def _observe(self, target: str, observation: Observation) -> tuple[Observation, ...]:
        """The target's polls of the last history_s, this one last (kept only for rules that read them)."""
        history = self._history[target]
        history.append(observation)
        while history and history[0].ts < observation.ts - self.settings.history_s:
            history.popleft()
        return tuple(history)

    def _alerts_of(self, target: str, rule: AlertRule) -> set[str]:
        """The fingerprints of the target's active alerts of this rule (a rule touches only its own)."""
        return {fp for fp, a in self.active.items() if a.target == target and a.rule == rule.name}

    async def _refresh_silences(self) -> None:
        """Silences may be added or ended, and alerts acknowledged, by another process (an API
        node in a fleet): re-read them from the store every few seconds, a query each for every
        target. An ack is taken in silently (the API process announced it): what this engine says
        of the alert from then on carries it."""
        if not self.shared_silences or self.clock.monotonic() - self._silences_read_at < SILENCE_REFRESH_S:
            return
        self._silences_read_at = self.clock.monotonic()
        try:
            self.silences = await self.repo.silences(active_at=self.clock.time())
            unacked = {a.id: a for a in self.active.values() if a.id is not None and a.acked_by is None}
            for alert_id, (user, at) in (await self.repo.acks(unacked)).items():
                unacked[alert_id].acked_by, unacked[alert_id].acked_at = user, at
        except Exception as error:
            self._silences_log.failed(error)  # the known ones stay
        else:
            self._silences_log.ok()

    async def _apply(
        self,
        rule: AlertRule,
        finding: AlertFinding,
        fp: str,
        target: str,
        now: float,
        poll_ts: float,
        for_s: float,
    ) -> None:
        alert = self.active.get(fp)
        if alert is None:
            if finding.level != "breach":
                return
            alert = Alert(
                fingerprint=fp,
                target=target,
                rule=rule.name,
                group=finding.group,
                severity=rule.severity,
                status="pending",
                summary=finding.summary,
                description=finding.description,
                value=finding.value,
                labels=finding.labels,
                annotations=finding.annotations,
                started_at=now,
                last_active_at=now,
            )
            if for_s <= 0:
                # No for-duration: it fires now. It joins the active list only once fired, so an
                # API read during the store insert never lists it as pending.
                await self._fire(fp, alert, now, poll_ts)
                return
            self.active[fp] = alert
            await self._publish(alert, "pending")
        else:
            alert.summary, alert.description, alert.value = (
                finding.summary,
                finding.description,
                finding.value,
            )
            alert.labels = {**alert.labels, **finding.labels}
            # Merged, as the labels: a later poll that names no holder (the statement ended, the
            # group is clearing) keeps the last one named, so the resolution says who held it.
            alert.annotations = {**alert.annotations, **finding.annotations}
            alert.last_active_at = now
            self._resumed.pop(fp, None)
        if alert.status == "pending":
            if finding.level != "breach":
                # Back under the firing threshold before the for-duration: it never fires.
                del self.active[fp]
                await self._publish(
                    alert.model_copy(update={"status": "resolved", "resolved_at": now}), "resolved"
                )
            elif now - alert.started_at >= for_s:
                await self._fire(fp, alert, now, poll_ts)

    async def _fire(self, fp: str, alert: Alert, now: float, poll_ts: float) -> None:
        fires = self._fire_times[fp]
        fires.append(now)
        while fires and fires[0] < now - self.settings.flap_window_s:
            fires.popleft()
        firing = alert.model_copy(
            update={
                "status": "firing",
                "fired_at": now,
                "poll_ts": poll_ts,
                "flapping": len(fires) >= self.settings.flap_max_fires,
                "silenced_by": self._silence_for(alert, now),
            }
        )
        await self._store(firing)
        # Only now, with its id (or held for a failing store), does the active alert turn firing:
        # an API read during the insert must not list a firing alert that cannot be acknowledged yet.
        for field in ("status", "fired_at", "poll_ts", "flapping", "silenced_by", "id"):
            setattr(alert, field, getattr(firing, field))
        self.active[fp] = alert
        await self._publish(alert, "firing")
        if self.snapshots is not None:
            self._spawn(self._take_snapshot(alert.model_copy(), self._judging))

    async def _take_snapshot(self, alert: Alert, poll: PollEvent | None) -> None:
        assert self.snapshots is not None
        snapshot_id = await self.snapshots.on_alert_firing(alert, poll)
        if snapshot_id is not None:
            await self.link_snapshot(alert, snapshot_id)

    async def _store(self, alert: Alert) -> None:
        """Write the alert's row (it has fired): at once, or held for the store in order with the
        polls; its id is set when written (then, if it was held, an "updated" change says so)."""
        if self.writes is None:
            alert.id = await self.repo.upsert(alert)
            return
        fp, fired_at = alert.fingerprint, alert.fired_at
        row_id = await self.writes.write_op(
            "alert",
            f"{fp}@{fired_at}",
            alert.model_dump(mode="json"),
            lambda row_id: self._written(fp, fired_at, row_id),
            essential=True,
        )
        if row_id is not None:
            alert.id = row_id

    async def _write_held(self, payload: dict[str, Any]) -> int | None:
        return await self.repo.upsert(Alert.model_validate(payload))

    def _written(self, fp: str, fired_at: float | None, row_id: int | None) -> None:
        """A held alert change was written: the alert still open here gets its id."""
        alert = self.active.get(fp)
        if alert is None or alert.fired_at != fired_at or row_id is None or alert.id == row_id:
            return
        alert.id = row_id
        self._spawn(self._publish_locked(alert, "updated"))

    async def _publish_locked(self, alert: Alert, transition: AlertTransition) -> None:
        async with self._lock:
            await self._publish(alert, transition)

    async def _resolve(self, fp: str, alert: Alert, now: float) -> None:
        alert.status = "resolved"
        alert.resolved_at = now
        del self.active[fp]
        self._resumed.pop(fp, None)
        await self._store(alert)
        await self._publish(alert, "resolved")

    async def _publish(self, alert: Alert, transition: AlertTransition) -> None:
        snapshot = alert.model_copy()
        self.hub.publish(
            AlertEvent(target=alert.target, ts=self.clock.time(), transition=transition, alert=snapshot)
        )
        # Only page on firing and resolution, and not for muted alerts.
        if (
            self.dispatcher is not None
            and transition in ("firing", "resolved")
            and snapshot.fired_at is not None
            and snapshot.silenced_by is None
        ):
            self.dispatcher.notify(snapshot)

    def _spawn(self, coro: Awaitable[None]) -> None:
        task = asyncio.ensure_future(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    # --- silences and acknowledgement ------------------------------------------------------

    def _silence_for(self, alert: Alert, now: float) -> int | None:
        return next((s.id for s in self.silences if s.matches(alert, now)), None)

    async def _apply_silences(self, now: float) -> None:
        self.silences = [s for s in self.silences if s.ends_at > now]
        for alert in self.active.values():
            if alert.status != "firing":
                continue
            silenced_by = self._silence_for(alert, now)
            if silenced_by != alert.silenced_by:
                alert.silenced_by = silenced_by
                await self._publish(alert, "silenced" if silenced_by is not None else "unsilenced")

    async def add_silence(self, silence: Silence) -> None:
        async with self._lock:
            self.silences.append(silence)
            await self._apply_silences(self.clock.time())

    async def expire_silence(self, silence_id: int) -> Silence | None:
        async with self._lock:
            now = self.clock.time()
            silence = await self.repo.expire_silence(silence_id, now)
            if silence is not None:
                self.silences = [s for s in self.silences if s.id != silence_id]
                await self._apply_silences(now)
            return silence

    async def acknowledge(self, alert_id: int, user: str) -> Alert | None:
        async with self._lock:
            alert = next((a for a in self.active.values() if a.id == alert_id), None)
            if alert is None:
                return None
            alert.acked_by, alert.acked_at = user, self.clock.time()
            await self._store(alert)
            await self._publish(alert, "acknowledged")
            return alert.model_copy()

    async def link_snapshot(self, fired: Alert, snapshot_id: int) -> None:
        """The snapshot taken for this alert (as it fired): recorded on the alert, open or not."""
        async with self._lock:
            alert = self.active.get(fired.fingerprint)
            if alert is not None and alert.fired_at == fired.fired_at:
                alert.snapshot_id = snapshot_id
                await self._store(alert)
                await self._publish(alert, "updated")
                return
        # Resolved since (or handed over): only the stored row's link is written.
        link = {"fingerprint": fired.fingerprint, "fired_at": fired.fired_at, "snapshot_id": snapshot_id}
        if self.writes is None:
            await self._write_link(link)
        else:
            await self.writes.write_op(
                "alert_snapshot", f"{fired.fingerprint}@{fired.fired_at}#snapshot", link
            )

    async def _write_link(self, link: dict[str, Any]) -> int | None:
        await self.repo.link_snapshot(link["fingerprint"], link["fired_at"], link["snapshot_id"])
        return None

    def current(self) -> list[Alert]:
        return active_order(a.model_copy() for a in self.active.values())


def active_order(alerts: Iterable[Alert]) -> list[Alert]:
    """Firing first, then pending; critical first; newest first."""
    order = {"firing": 0, "pending": 1}
    return sorted(
        alerts,
        key=lambda a: (order.get(a.status, 2), a.severity != "critical", -(a.fired_at or a.started_at)),
    )
