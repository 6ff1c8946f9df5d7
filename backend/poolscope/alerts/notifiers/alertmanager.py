"""Alertmanager as a receiver: Poolscope posts its alerts to Alertmanager's v2 API, as Prometheus does.

Teams keep their routing, grouping, silences and on-call integrations. As in Prometheus:
  * a firing alert is posted at once and again every resend_interval_s, with endsAt a few resend
    intervals ahead, so Alertmanager resolves it by itself if Poolscope goes away;
  * a resolved alert is posted with endsAt = when it resolved, and re-posted for a while
    (RESOLVED_RESEND_S) in case an Alertmanager missed it.
Labels and annotations are the webhook's (alert_labels): one alert, one identity, both ways.
An alert muted by a Poolscope silence is not posted (like webhooks); one silenced while firing
is posted as ended.

Transitions come from the live hub, like the engine's own input: the notifier never slows the
engine. Every resend it also reconciles with the engine's current alerts, so an event it missed
cannot leave an alert firing in Alertmanager. One task posts the batches in order (a resolution
never overtakes its firing); each Alertmanager is posted to concurrently with a timeout.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import httpx

from poolscope.alerts.notifiers.webhook import _rfc3339, alert_annotations, alert_labels
from poolscope.alerts.settings import AlertmanagerSettings
from poolscope.schemas import Alert, AlertEvent
from poolscope.store.live import LiveHub

log = logging.getLogger(__name__)

# Prometheus keeps sending a resolved alert for 15 minutes.
RESOLVED_RESEND_S = 15 * 60
# A firing alert is valid for this many resend intervals (Prometheus: 4).
VALID_FOR_RESENDS = 4


def shown_url(url: str) -> str:
    """scheme://host:port: what logs and /metrics may show of an Alertmanager URL."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    return f"{parts.scheme}://{host}:{parts.port}" if parts.port else f"{parts.scheme}://{host}"


def wanted_firing(alert: Alert) -> bool:
    return alert.status == "firing" and alert.fired_at is not None and alert.silenced_by is None


def postable_alert(alert: Alert, ends_at: float, external_url: str) -> dict[str, Any]:
    """One alert in Alertmanager's v2 `postableAlert` shape."""
    return {
        "labels": alert_labels(alert),
        "annotations": alert_annotations(alert),
        "startsAt": _rfc3339(alert.fired_at or alert.started_at),
        "endsAt": _rfc3339(ends_at),
        "generatorURL": f"{external_url}/alerts",
    }


class AlertmanagerNotifier:
    def __init__(
        self,
        settings: AlertmanagerSettings,
        external_url: str,
        hub: LiveHub,
        current: Callable[[], list[Alert]],
    ) -> None:
        self.settings = settings
        self.external_url = external_url
        self.hub = hub
        self.current = current
        self.urls = [u.get_secret_value().rstrip("/") for u in settings.urls]
        # Per Alertmanager (shown URL): posts that got a 2xx, and posts that did not.
        self.delivered = {shown_url(u): 0 for u in self.urls}
        self.failed = {shown_url(u): 0 for u in self.urls}
        self._firing: dict[str, Alert] = {}
        self._ended: dict[str, tuple[Alert, float]] = {}  # fingerprint -> (alert, resend until)
        self._queue: asyncio.Queue[list[dict[str, Any]]] = asyncio.Queue(maxsize=settings.queue_size)
        self._tasks: list[asyncio.Task[None]] = []

    async def start(self) -> None:
        ready = asyncio.Event()
        self._tasks = [
            asyncio.create_task(self._watch(ready), name="alertmanager-watch"),
            asyncio.create_task(self._send(), name="alertmanager-send"),
            asyncio.create_task(self._resend(), name="alertmanager-resend"),
        ]
        await ready.wait()

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._tasks = []

    # --- what Alertmanager should know ------------------------------------------------------

    def observe(self, alert: Alert, now: float) -> None:
        """An alert changed: post it if it starts or stops being one Alertmanager should page on."""
        fp = alert.fingerprint
        if wanted_firing(alert):
            self._firing[fp] = alert
            self._ended.pop(fp, None)
            self._enqueue([postable_alert(alert, self._valid_until(now), self.external_url)])
        elif fp in self._firing:
            del self._firing[fp]
            self._end(alert, alert.resolved_at or now, now)

    def reconcile(self, now: float) -> list[dict[str, Any]]:
        """Bring the firing set in line with the engine, drop old resolutions; the batch to resend."""
        current = {a.fingerprint: a for a in self.current() if wanted_firing(a)}
        for fp, alert in list(self._firing.items()):
            if fp not in current:  # its resolution was missed
                del self._firing[fp]
                ended = alert.model_copy(update={"resolved_at": now})
                self._ended[fp] = (ended, now + RESOLVED_RESEND_S)
        self._firing.update(current)
        self._ended = {fp: v for fp, v in self._ended.items() if v[1] > now and fp not in self._firing}
        until = self._valid_until(now)
        return [postable_alert(a, until, self.external_url) for a in self._firing.values()] + [
            postable_alert(a, a.resolved_at or now, self.external_url) for a, _ in self._ended.values()
        ]

    def _end(self, alert: Alert, ended_at: float, now: float) -> None:
        ended = alert.model_copy(update={"resolved_at": ended_at})
        self._ended[alert.fingerprint] = (ended, now + RESOLVED_RESEND_S)
        self._enqueue([postable_alert(ended, ended_at, self.external_url)])

    def _valid_until(self, now: float) -> float:
        return now + VALID_FOR_RESENDS * self.settings.resend_interval_s

    def _enqueue(self, batch: list[dict[str, Any]]) -> None:
        if not batch or not self.urls:
            return
        if self._queue.full():
            # Alertmanager down for long: the oldest goes; the next resend carries the current state.
            with contextlib.suppress(asyncio.QueueEmpty):
                self._queue.get_nowait()
        self._queue.put_nowait(batch)

    # --- tasks ------------------------------------------------------------------------------

    async def _watch(self, ready: asyncio.Event) -> None:
        async with self.hub.subscribe(frozenset({"alert"})) as queue:
            ready.set()
            while True:
                event = await queue.get()
                if isinstance(event, AlertEvent):
                    self.observe(event.alert, time.time())

    async def _resend(self) -> None:
        while True:
            try:
                self._enqueue(self.reconcile(time.time()))
            except Exception:
                log.exception("alertmanager: reconciling with the alert engine failed")
            await asyncio.sleep(self.settings.resend_interval_s)

    async def _send(self) -> None:
        headers = {"User-Agent": "poolscope"}
        headers.update({k: v.get_secret_value() for k, v in self.settings.headers.items()})
        async with httpx.AsyncClient(timeout=self.settings.timeout_s, headers=headers) as client:
            while True:
                batch = await self._queue.get()
                await asyncio.gather(*(self._post(client, url, batch) for url in self.urls))

    async def _post(self, client: httpx.AsyncClient, url: str, batch: list[dict[str, Any]]) -> None:
        shown = shown_url(url)
        try:
            response = await client.post(f"{url}/api/v2/alerts", json=batch)
            error = None if response.is_success else f"HTTP {response.status_code}"
        except httpx.HTTPError as exc:
            # httpx messages can carry the URL (and credentials in it): the kind of failure only.
            error = type(exc).__name__
        if error is None:
            self.delivered[shown] += 1
            return
        self.failed[shown] += 1
        log.warning("alertmanager %s: posting %d alert(s) failed: %s", shown, len(batch), error)
