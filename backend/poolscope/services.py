"""The one place the app's services are built, started and stopped.

Each service gets what it depends on when it is constructed; nothing is attached afterwards. Data
flows one way: pollers -> store -> live hub -> alert engine -> snapshots. The snapshot service
reads the servers' raw tables through the running pollers it was built with, and returns an
automatic snapshot's id to the alert engine, which records the link on the alert itself.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass

from poolscope import targets_source
from poolscope.actions.apply import Applier
from poolscope.actions.audit import AuditLog
from poolscope.actions.guard import Guard
from poolscope.alerts.engine import AlertEngine
from poolscope.alerts.notifiers.alertmanager import AlertmanagerNotifier
from poolscope.alerts.notifiers.webhook import WebhookDispatcher
from poolscope.alerts.repository import AlertRepository
from poolscope.auth import AuthService
from poolscope.config import Settings
from poolscope.poller.scheduler import Scheduler
from poolscope.recommend.engine import Recommender
from poolscope.snapshots.service import SnapshotService
from poolscope.store.migrate import upgrade_to_head
from poolscope.store.sql import SqlStore

log = logging.getLogger(__name__)


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


def external_url(settings: Settings) -> str:
    """The base URL links in notifications point to."""
    url = settings.alerts.external_url or f"http://{settings.listen_host}:{settings.listen_port}"
    return url.rstrip("/")


def build_services(settings: Settings, store: SqlStore) -> Services:
    """Every service, wired; nothing runs yet (run_services starts them in order)."""
    scheduler = Scheduler(settings, store)
    audit = AuditLog(store.engine)
    applier = Applier(settings, store, audit)
    alert_repo = AlertRepository(store.engine)
    url = external_url(settings)
    dispatcher = WebhookDispatcher(settings.alerts.webhooks, alert_repo, url)
    snapshots = SnapshotService(settings, store, alert_repo, {p.name: p for p in scheduler.pollers})
    alerts = alertmanager = None
    if settings.alerts.enabled:
        alerts = AlertEngine(settings.alerts, store.hub, alert_repo, dispatcher, snapshots=snapshots)
        if settings.alerts.alertmanager.urls:
            alertmanager = AlertmanagerNotifier(settings.alerts.alertmanager, url, store.hub, alerts.current)
    return Services(
        settings=settings,
        store=store,
        scheduler=scheduler,
        audit=audit,
        recommender=Recommender(settings, store),
        applier=applier,
        guard=Guard(settings, store, audit, applier),
        dispatcher=dispatcher,
        snapshots=snapshots,
        alerts=alerts,
        alertmanager=alertmanager,
    )


@asynccontextmanager
async def run_services(
    settings: Settings, auth: AuthService, *, start_poller: bool = True
) -> AsyncIterator[Services]:
    """Migrate the store, build the services and start them downstream first (so the alert engine
    sees the first poll); stop them in the reverse order."""
    await asyncio.to_thread(upgrade_to_head, settings.store_url)
    store = SqlStore(
        settings.store_url,
        raw_retention_s=settings.raw_retention_hours * 3600,
        rollup_retention_s=settings.rollup_retention_days * 86400,
        rollup_step_s=settings.rollup_step_s,
    )
    async with AsyncExitStack() as stack:
        stack.push_async_callback(store.close)
        services = build_services(settings, store)
        await auth.attach(store.engine)
        await services.audit.interrupt_watches()
        stack.push_async_callback(services.guard.stop)
        if services.alerts is not None:
            services.dispatcher.start()
        stack.push_async_callback(services.dispatcher.stop)
        await services.snapshots.start()
        stack.push_async_callback(services.snapshots.stop)
        if services.alerts is not None:
            await services.alerts.start()
            stack.push_async_callback(services.alerts.stop)
        if services.alertmanager is not None:
            await services.alertmanager.start()
            stack.push_async_callback(services.alertmanager.stop)
        stack.push_async_callback(services.scheduler.stop)
        stack.push_async_callback(services.recommender.stop)
        if start_poller:
            services.scheduler.start()
            services.recommender.start()
        if targets_source.watched(settings):
            # Re-read targets_file / targets_dir on change; the scheduler follows the new list.
            watcher = targets_source.TargetsWatcher(
                settings, services.scheduler.set_targets if start_poller else None
            )
            watcher.start()
            stack.push_async_callback(watcher.stop)
        log.info(
            "poolscope: %d target(s), polling every %g s", len(settings.targets), settings.poll_interval_s
        )
        yield services
