"""Starts and stops the incident services beside the poller: alert engine, webhook receivers,
Alertmanagers, snapshots."""

from __future__ import annotations

from dataclasses import dataclass

from fastapi import FastAPI

from poolscope.alerts.engine import AlertEngine
from poolscope.alerts.notifiers.alertmanager import AlertmanagerNotifier
from poolscope.alerts.notifiers.webhook import WebhookDispatcher
from poolscope.alerts.repository import AlertRepository
from poolscope.config import Settings
from poolscope.snapshots.service import SnapshotService
from poolscope.store.sql import SqlStore


@dataclass
class IncidentServices:
    engine: AlertEngine | None
    dispatcher: WebhookDispatcher
    snapshots: SnapshotService
    alertmanager: AlertmanagerNotifier | None = None

    async def stop(self) -> None:
        if self.alertmanager is not None:
            await self.alertmanager.stop()
        if self.engine is not None:
            await self.engine.stop()
        await self.dispatcher.stop()
        await self.snapshots.stop()


async def start_incident_services(app: FastAPI, settings: Settings, store: SqlStore) -> IncidentServices:
    """Call before the poller starts, so the engine sees the first poll."""
    repo = AlertRepository(store.engine)
    external_url = (
        settings.alerts.external_url or f"http://{settings.listen_host}:{settings.listen_port}"
    ).rstrip("/")
    dispatcher = WebhookDispatcher(settings.alerts.webhooks, repo, external_url)
    snapshots = SnapshotService(settings, store, repo)
    scheduler = getattr(app.state, "scheduler", None)
    if scheduler is not None:
        snapshots.pollers = {p.name: p for p in scheduler.pollers}
    engine: AlertEngine | None = None
    alertmanager: AlertmanagerNotifier | None = None
    if settings.alerts.enabled:
        engine = AlertEngine(settings.alerts, store.hub, repo, dispatcher)
        engine.firing_listeners.append(snapshots.on_alert_firing)
        snapshots.link_alert = engine.link_snapshot
        dispatcher.start()
        await engine.start()
        if settings.alerts.alertmanager.urls:
            alertmanager = AlertmanagerNotifier(
                settings.alerts.alertmanager, external_url, store.hub, engine.current
            )
            await alertmanager.start()
    await snapshots.start()
    app.state.alerts = engine
    app.state.snapshots = snapshots
    app.state.alertmanager = alertmanager
    return IncidentServices(engine, dispatcher, snapshots, alertmanager)
