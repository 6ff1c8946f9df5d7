"""The one place the app's services are built, started and stopped.

Each service gets what it depends on when it is constructed; nothing is attached afterwards. Data
flows one way: each poll goes from its poller to the live hub, the alert engine (-> snapshots) and
the store, in that order (poller/scheduler.py); the store is one consumer among them. The snapshot service
reads the servers' raw tables through the running pollers it was built with, and returns an
automatic snapshot's id to the alert engine, which records the link on the alert itself.

Roles: "all" is one process doing everything (`workers = 0`, tests,
create_app); "poller" polls the targets whose lease it holds (poolscope/fleet/) and runs the alert
engine, notifications and automatic snapshots, with no HTTP; "api" serves HTTP and polls nothing.
"""

from __future__ import annotations

import gc
import logging
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from typing import Literal

from poolscope import targets_source
from poolscope.actions.apply import Applier
from poolscope.actions.audit import AuditLog
from poolscope.actions.fleet import Presence
from poolscope.actions.guard import Guard
from poolscope.alerts.engine import AlertEngine
from poolscope.alerts.notifiers.alertmanager import AlertmanagerNotifier
from poolscope.alerts.notifiers.webhook import WebhookDispatcher
from poolscope.alerts.repository import AlertRepository
from poolscope.auth import AuthService
from poolscope.auth.revocations import RevocationWatcher
from poolscope.clock import SYSTEM, Clock
from poolscope.config import Settings
from poolscope.fleet.leases import LeaseKeeper, default_node_id
from poolscope.poller.scheduler import Scheduler, target_pollers
from poolscope.recommend.engine import Recommender
from poolscope.snapshots.service import SnapshotService
from poolscope.store.backlog import Holding
from poolscope.store.feed import AlertEventLog, LiveFeed
from poolscope.store.migrate import upgrade_when_up_async
from poolscope.store.sql import SqlStore

log = logging.getLogger(__name__)

ServiceRole = Literal["all", "api", "poller"]


@dataclass(frozen=True)
class Services:
    settings: Settings
    store: SqlStore
    scheduler: Scheduler
    audit: AuditLog
    recommender: Recommender
    applier: Applier
    guard: Guard
    dispatcher: WebhookDispatcher
    snapshots: SnapshotService
    alerts: AlertEngine | None  # None when alerting is off
    alertmanager: AlertmanagerNotifier | None  # None without Alertmanager URLs
    role: ServiceRole = "all"
    fleet: LeaseKeeper | None = None  # role "poller": the leases that say what it polls
    feed: LiveFeed | None = None  # role "api": the live channel from the store


def external_url(settings: Settings) -> str:
    """The base URL links in notifications point to."""
    url = settings.alerts.external_url or f"http://{settings.listen_host}:{settings.listen_port}"
    return url.rstrip("/")


def build_services(
    settings: Settings, store: SqlStore, role: ServiceRole = "all", clock: Clock = SYSTEM
) -> Services:
    """Every service, wired, on one clock; nothing runs yet (run_services starts them in order)."""
    fleet = None
    if role == "poller":
        fleet = LeaseKeeper(
            store.engine,
            settings.node_id or default_node_id(),
            lambda: scheduler.target_names(),
            ttl_s=settings.lease_ttl_s,
            grace_s=settings.store_outage_grace_s,
            clock=clock,
            health=store.health,
        )
    pollers = target_pollers(settings, clock)
    audit = AuditLog(store.engine)
    applier = Applier(settings, store, audit, clock)
    alert_repo = AlertRepository(store.engine)
    url = external_url(settings)
    dispatcher = WebhookDispatcher(settings.alerts.webhooks, alert_repo, url)
    # An API process runs no pollers: snapshots read the raw tables on a connection of their own.
    snapshots = SnapshotService(settings, store, alert_repo, {} if role == "api" else pollers)
    alerts = alertmanager = None
    # Alerts are evaluated where the polls are (an API process reads them from the store).
    if settings.alerts.enabled and role != "api":
        alerts = AlertEngine(
            settings.alerts,
            store.hub,
            alert_repo,
            dispatcher,
            snapshots=snapshots,
            shared_silences=role == "poller",
            clock=clock,
            writes=store.writer,
        )
        if settings.alerts.alertmanager.urls:
            alertmanager = AlertmanagerNotifier(settings.alerts.alertmanager, url, store.hub, alerts.current)
    scheduler = Scheduler(settings, store, pollers, ownership=fleet, judge=alerts, clock=clock)
    return Services(
        settings=settings,
        store=store,
        scheduler=scheduler,
        audit=audit,
        recommender=Recommender(settings, store),
        applier=applier,
        guard=Guard(settings, store, audit, applier, clock),
        dispatcher=dispatcher,
        snapshots=snapshots,
        alerts=alerts,
        alertmanager=alertmanager,
        role=role,
        fleet=fleet,
        feed=LiveFeed(store.latest_rows, store.hub, store.url, clock=clock) if role == "api" else None,
    )


def holding(settings: Settings, role: ServiceRole) -> Holding:
    """What a process holds for a failing store, and where: a process that polls holds its polls in
    memory, then in its spool file, and says how the store does in spool_dir (store/health.py);
    an API process writes no polls."""
    if role == "api":
        return Holding(node="api", memory_bytes=int(settings.store_buffer_memory_mb * 2**20))
    return Holding(
        node="local" if role == "all" else settings.node_id or default_node_id(),
        memory_bytes=int(settings.store_buffer_memory_mb * 2**20),
        spool_bytes=int(settings.store_buffer_spool_mb * 2**20),
        spool_dir=settings.spool_directory(),
    )


@asynccontextmanager
async def run_services(
    settings: Settings,
    auth: AuthService | None,
    *,
    start_poller: bool = True,
    role: ServiceRole = "all",
    clock: Clock = SYSTEM,
) -> AsyncIterator[Services]:
    """Migrate the store, build the services of `role` and start them downstream first (so the
    alert engine sees the first poll); stop them in the reverse order. start_poller=False builds
    everything and starts no polling (the API contract, tests). `auth` is None only for "poller"."""
    await upgrade_when_up_async(settings.store_url, clock)
    store = SqlStore(
        settings.store_url,
        raw_retention_s=settings.raw_retention_hours * 3600,
        rollup_retention_s=settings.rollup_retention_days * 86400,
        rollup_step_s=settings.rollup_step_s,
        holding=holding(settings, role),
        clock=clock,
    )
    serves_http, polls = role != "poller", role != "api" and start_poller
    async with AsyncExitStack() as stack:
        stack.push_async_callback(store.close)
        services = build_services(settings, store, role, clock)
        if serves_http:
            assert auth is not None, "the API roles need the auth service"
            await auth.attach(store.engine)
            # Logouts taken by the other API processes of a fleet, within seconds.
            revocations = RevocationWatcher(auth, store.url, postgres=store.latest_rows.postgres, clock=clock)
            revocations.start()
            stack.push_async_callback(revocations.stop)
            # Guards run where their apply ran: an API process, named as their owner. Only those of
            # a process that is gone are interrupted (a poller, or another API process, starting
            # must not touch them).
            presence = Presence(store.engine)
            await presence.start()
            stack.push_async_callback(presence.stop)
            await services.audit.interrupt_watches(presence.alive)
        stack.push_async_callback(services.guard.stop)
        if services.alerts is not None and role != "api":
            services.dispatcher.start()
        stack.push_async_callback(services.dispatcher.stop)
        if serves_http:
            await services.snapshots.start()  # resumes unfinished snapshots: one process does it
        stack.push_async_callback(services.snapshots.stop)
        if services.alerts is not None and role != "api":
            # A fleet poller owns no target yet: it reads a target's alerts back when it wins it
            # (the scheduler tells it, Scheduler.on_ownership).
            await services.alerts.start(restore=services.fleet is None)
            stack.push_async_callback(services.alerts.stop)
        if services.alertmanager is not None and role != "api":
            await services.alertmanager.start()
            stack.push_async_callback(services.alertmanager.stop)
        if services.fleet is not None:
            # Stopped after the scheduler (exit order is reversed): polling ends before leases are freed.
            services.fleet.add_listener(services.scheduler.on_ownership)
            stack.push_async_callback(services.fleet.stop)
        stack.push_async_callback(services.scheduler.stop)
        stack.push_async_callback(services.recommender.stop)
        await _start_cross_process_live(stack, services)
        if polls:
            services.scheduler.start()
            if services.fleet is not None:
                services.fleet.start()
        if start_poller and role != "poller":
            services.recommender.start()
        if targets_source.watched(settings):
            # Re-read targets_file / targets_dir on change; the scheduler follows the new list.
            watcher = targets_source.TargetsWatcher(
                settings, services.scheduler.set_targets if polls else None, quiet=role == "poller"
            )
            watcher.start()
            stack.push_async_callback(watcher.stop)
        tune_gc(role)
        log.info(
            "poolscope (%s): %d target(s), polling every %g s",
            role if services.fleet is None else f"poller {services.fleet.node_id}",
            len(settings.targets),
            settings.poll_interval_s,
        )
        yield services


# A poller's objects mostly live about a poll (a target's state until the next poll, a writer
# batch until it commits): at the default threshold (700) young collections ran ~20 times a second
# while they were alive, walked them and promoted many, so collections took 8 % of a poller's CPU
# at 300 targets; at 50,000 most are freed before the count gets there: 0.3-1.4 %, one collection
# of 15-50 ms every few seconds to a minute, RSS unchanged (docs/decisions/0012-poller-runtime.md).
POLLER_GC_THRESHOLD = (50_000, 10, 10)


def tune_gc(role: ServiceRole) -> None:
    """Once start-up is done, in a process of its own (`serve`'s children, `poolscope poller` /
    `api`): what start-up built lives as long as the process, so full collections need not walk it
    again (they made a 24 h chart page alternate between ~55 and ~100 ms CPU);
    a poller also collects its young objects less often. Role "all" (tests, create_app) is left alone."""
    if role == "all":
        return
    gc.freeze()
    if role == "poller":
        gc.set_threshold(*POLLER_GC_THRESHOLD)


async def _start_cross_process_live(stack: AsyncExitStack, services: Services) -> None:
    """Role "api": the live feed from the store; role "poller": alert changes logged for it."""
    if services.feed is not None:
        await services.feed.start()
        stack.push_async_callback(services.feed.stop)
    if services.role == "poller":
        alert_log = AlertEventLog(services.store.hub, services.store.latest_rows)
        await alert_log.start()
        stack.push_async_callback(alert_log.stop)
