"""Alerts: current and past alerts, rules and thresholds, silences, acknowledgement, webhook delivery log."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import APIRouter, Depends, HTTPException, Query
from pydantic import Field

from poolscope.alerts.engine import active_order
from poolscope.alerts.model import AlertRule
from poolscope.alerts.repository import AlertRepository
from poolscope.alerts.rules import all_rules
from poolscope.api.deps import ALERTS_NOT_RUNNING, RowId, ServicesDep, SettingsDep
from poolscope.auth import User, require_role
from poolscope.schemas import Alert, AlertEvent, Delivery, Severity, Silence
from poolscope.schemas.base import Schema
from poolscope.services import Services
from poolscope.store.feed import ALERT_EVENTS_KEEP_S

# Reads are as open as /api/live, which carries every alert change anyway; changes need an operator.
router = APIRouter(prefix="/api/alerts", tags=["alerts"])


Operator = Annotated[User, Depends(require_role("operator"))]


class AlertsOut(Schema):
    """The alerts open now and the silences in effect."""

    active: list[Alert]
    """Firing and pending alerts, firing first."""
    silences: list[Silence]
    """Silences in effect now."""


class RuleOut(Schema):
    """An alert rule as the API lists it."""

    name: str
    """The rule's name (also its file in alerts/rules/)."""
    severity: Severity
    """How loud its alerts are: critical or warning."""
    help: str
    """What makes it fire, in one line."""
    for_s: float
    """How long its condition must hold before it fires, in s (0: at once)."""


class RulesOut(Schema):
    """The alert rules and the settings in effect."""

    rules: list[RuleOut]
    """Every alert rule."""
    thresholds: dict[str, Any]
    """Every threshold by name, as configured ([alerts.thresholds])."""
    overrides: dict[str, dict[str, Any]]
    """Per target: the thresholds that differ for it ([alerts.overrides.<target>])."""
    resolve_after_s: float
    """A firing alert resolves after its condition is clear this long, in s."""
    flap_window_s: float
    """The window in which fires are counted for flapping, in s."""
    flap_max_fires: int
    """Fired this often within flap_window_s: the alert is flapping."""
    flap_resolve_after_s: float
    """A flapping alert resolves only after this long clear, in s."""
    receivers: list[dict[str, Any]]
    """The webhook receivers: name, URL without its path, query or credentials, send_resolved."""


class SilenceIn(Schema):
    """A silence to make: at least one matcher, and how long."""

    target: str | None = Field(default=None, max_length=64)
    """Match alerts of this target (404 when unknown); null: any."""
    rule: str | None = Field(default=None, max_length=64)
    """Match alerts of this rule (422 when unknown); null: any."""
    group: str | None = Field(default=None, max_length=32)
    """Match alerts of this thread group; null: any."""
    duration_s: float = Field(ge=60, le=7 * 86400)
    """How long the silence lasts, in s (60 s to 7 days)."""
    comment: str = Field(default="", max_length=500)
    """Why, for the others."""


@dataclass(frozen=True)
class AlertReader:
    """What the read endpoints need: the engine's, or in an API process (the pollers evaluate
    alerts there) the store's."""

    repo: AlertRepository
    rules: list[AlertRule]


def alert_reader(services: ServicesDep) -> AlertReader:
    if services.alerts is not None:
        return AlertReader(services.alerts.repo, services.alerts.rules)
    if services.role == "api" and services.settings.alerts.enabled:
        return AlertReader(AlertRepository(services.store.engine), all_rules())
    raise HTTPException(status_code=503, detail=ALERTS_NOT_RUNNING)


AlertReaderDep = Annotated[AlertReader, Depends(alert_reader)]


@router.get("", response_model=AlertsOut)
async def current_alerts(services: ServicesDep, reader: AlertReaderDep) -> AlertsOut:
    """Alerts firing or pending now, and the silences in effect."""
    now = time.time()
    engine = services.alerts
    if engine is not None:
        return AlertsOut(active=engine.current(), silences=[s for s in engine.silences if s.ends_at > now])
    return await _stored_alerts(reader.repo, services, now)


async def _stored_alerts(repo: AlertRepository, services: Services, now: float) -> AlertsOut:
    """An API process: firing alerts and silences from the store, and pending ones (never stored)
    from the alert change log (store/feed.py)."""
    silences = await repo.silences(active_at=now)
    active = {a.fingerprint: a for a in await repo.open_alerts()}
    last_change: dict[str, Alert] = {}
    for data in await services.store.latest_rows.alert_events_after(now - ALERT_EVENTS_KEEP_S):
        alert = AlertEvent.model_validate_json(data).alert
        last_change[alert.fingerprint] = alert
    for fp, alert in last_change.items():
        if alert.status == "pending" and fp not in active:
            active[fp] = alert
    for alert in active.values():
        alert.silenced_by = next((s.id for s in silences if s.matches(alert, now)), None)
    return AlertsOut(active=active_order(active.values()), silences=silences)


@router.get("/history", response_model=list[Alert])
async def alert_history(
    reader: AlertReaderDep,
    target: Annotated[str | None, Query(max_length=64)] = None,
    from_: Annotated[float | None, Query(alias="from", description="epoch seconds")] = None,
    to: Annotated[float | None, Query(description="epoch seconds")] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 200,
) -> list[Alert]:
    """Alerts that fired (firing or resolved), newest first; with from/to, those firing at some
    moment of that range (the target page draws them as bands on its charts)."""
    if from_ is not None and to is not None and from_ > to:
        raise HTTPException(status_code=422, detail="from must not be after to")
    return await reader.repo.history(target=target, since=from_, until=to, limit=limit)


@router.get("/rules", response_model=RulesOut)
async def alert_rules(reader: AlertReaderDep, settings: SettingsDep) -> RulesOut:
    """Every rule with its severity and for-duration, the thresholds, overrides and webhook receivers."""
    a = settings.alerts
    return RulesOut(
        rules=[
            RuleOut(name=r.name, severity=r.severity, help=r.help, for_s=r.for_s(a.thresholds))
            for r in reader.rules
        ],
        thresholds=a.thresholds.model_dump(),
        overrides=a.overrides,
        resolve_after_s=a.resolve_after_s,
        flap_window_s=a.flap_window_s,
        flap_max_fires=a.flap_max_fires,
        flap_resolve_after_s=a.flap_resolve_after_s,
        # Never the URL's token or the headers' values.
        receivers=[
            {"name": w.name, "url": w.safe_url(), "send_resolved": w.send_resolved} for w in a.webhooks
        ],
    )


@router.get("/deliveries", response_model=list[Delivery])
async def deliveries(
    reader: AlertReaderDep,
    receiver: Annotated[str | None, Query(max_length=64)] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 200,
) -> list[Delivery]:
    """The webhook delivery log: every attempt, newest first."""
    return await reader.repo.deliveries(receiver=receiver, limit=limit)


@router.post("/{alert_id}/ack", response_model=Alert)
async def acknowledge(
    alert_id: RowId, services: ServicesDep, reader: AlertReaderDep, user: Operator
) -> Alert:
    """Acknowledge a firing alert: someone is on it (it keeps firing until its condition clears)."""
    if services.alerts is not None:
        alert = await services.alerts.acknowledge(alert_id, user.name)
    else:
        alert = await _acknowledge_stored(reader.repo, services, alert_id, user.name)
    if alert is None:
        raise HTTPException(status_code=404, detail=f"no firing alert {alert_id}")
    return alert


async def _acknowledge_stored(
    repo: AlertRepository, services: Services, alert_id: int, user: str
) -> Alert | None:
    """An API process: the stored alert is marked, and the change logged for every live channel."""
    alert = await repo.get(alert_id)
    if alert is None or alert.status != "firing":
        return None
    now = time.time()
    alert.acked_by, alert.acked_at = user, now
    await repo.save(alert)
    change = AlertEvent(target=alert.target, ts=now, transition="acknowledged", alert=alert)
    await services.store.latest_rows.write_alert_event(alert.target, now, change.model_dump_json())
    return alert


@router.post("/silences", response_model=Silence, status_code=201)
async def add_silence(
    body: SilenceIn, services: ServicesDep, reader: AlertReaderDep, settings: SettingsDep, user: Operator
) -> Silence:
    """Mute notifications for alerts matching target / rule / group (empty = any) for a while."""
    if body.target is not None and body.target not in {t.name for t in settings.targets}:
        raise HTTPException(status_code=404, detail="unknown target: not one of this configuration's")
    if body.rule is not None and body.rule not in {r.name for r in reader.rules}:
        raise HTTPException(status_code=422, detail="unknown rule: GET /api/alerts/rules lists them")
    if body.target is None and body.rule is None and body.group is None:
        raise HTTPException(status_code=422, detail="a silence needs at least one of target, rule, group")
    silence = await reader.repo.add_silence(
        body.target, body.rule, body.group, time.time() + body.duration_s, user.name, body.comment
    )
    # In an API process the pollers' engines read it from the store within seconds.
    if services.alerts is not None:
        await services.alerts.add_silence(silence)
    return silence


@router.delete("/silences/{silence_id}", response_model=Silence)
async def expire_silence(
    silence_id: RowId, services: ServicesDep, reader: AlertReaderDep, _user: Operator
) -> Silence:
    """End a silence now."""
    if services.alerts is not None:
        silence = await services.alerts.expire_silence(silence_id)
    else:
        silence = await reader.repo.expire_silence(silence_id, time.time())
    if silence is None:
        raise HTTPException(status_code=404, detail=f"no silence {silence_id}")
    return silence
