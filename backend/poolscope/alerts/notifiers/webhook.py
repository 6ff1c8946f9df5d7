"""Webhook receivers in Alertmanager's webhook format (version 4).

Each receiver has its own bounded queue and its own task: a receiver that is down or slow only
delays its own deliveries (retried with exponential backoff), never another receiver, the alert
engine or polling. Every attempt is written to the delivery log.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import httpx

from poolscope.alerts.repository import AlertRepository
from poolscope.alerts.settings import WebhookReceiver, safe_url
from poolscope.schemas import Alert
from poolscope.store.health import FailureLog

log = logging.getLogger(__name__)


class _HideUrlPaths(logging.Filter):
    """httpx logs every request's full URL at INFO: keep a webhook's path and query (its token) out."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple):
            record.args = tuple(safe_url(str(a)) if isinstance(a, httpx.URL) else a for a in record.args)
        return True


logging.getLogger("httpx").addFilter(_HideUrlPaths())

# Alertmanager's "not ended yet" timestamp.
ZERO_TIME = "0001-01-01T00:00:00Z"


def _rfc3339(ts: float | None) -> str:
    if ts is None:
        return ZERO_TIME
    return datetime.fromtimestamp(ts, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def alert_labels(alert: Alert) -> dict[str, str]:
    labels = {"alertname": alert.rule, "target": alert.target, "severity": alert.severity, **alert.labels}
    if alert.group is not None:
        labels["group"] = alert.group
    return labels


def alert_annotations(alert: Alert) -> dict[str, str]:
    return {**alert.annotations, "summary": alert.summary, "description": alert.description}


def alertmanager_payload(alert: Alert, receiver: str, external_url: str) -> dict[str, Any]:
    """One alert as an Alertmanager v4 webhook body (one group per target + rule)."""
    labels = alert_labels(alert)
    annotations = alert_annotations(alert)
    status = "resolved" if alert.status == "resolved" else "firing"
    group_labels = {"alertname": alert.rule, "target": alert.target}
    return {
        "version": "4",
        "groupKey": "{}:{" + ", ".join(f'{k}="{v}"' for k, v in sorted(group_labels.items())) + "}",
        "truncatedAlerts": 0,
        "status": status,
        "receiver": receiver,
        "groupLabels": group_labels,
        "commonLabels": labels,
        "commonAnnotations": annotations,
        "externalURL": external_url,
        "alerts": [
            {
                "status": status,
                "labels": labels,
                "annotations": annotations,
                "startsAt": _rfc3339(alert.fired_at or alert.started_at),
                "endsAt": _rfc3339(alert.resolved_at) if status == "resolved" else ZERO_TIME,
                "generatorURL": f"{external_url}/alerts",
                "fingerprint": alert.fingerprint,
            }
        ],
    }


@dataclass
class _Job:
    alert: Alert
    payload: dict[str, Any]


class ReceiverWorker:
    """One receiver: its queue, its task, its retries."""

    def __init__(self, receiver: WebhookReceiver, repo: AlertRepository, external_url: str) -> None:
        self._delivery_log = FailureLog(log, f"webhook {receiver.name}: writing the delivery log")
        self.receiver = receiver
        self.repo = repo
        self.external_url = external_url
        self.queue: asyncio.Queue[_Job] = asyncio.Queue(maxsize=receiver.queue_size)
        self._task: asyncio.Task[None] | None = None
        self.delivered = 0
        self.failed = 0

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name=f"webhook:{self.receiver.name}")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
            self._task = None

    def enqueue(self, alert: Alert) -> None:
        job = _Job(alert, alertmanager_payload(alert, self.receiver.name, self.external_url))
        if self.queue.full():
            # A receiver down for hours must not grow memory without bound: the oldest goes.
            with contextlib.suppress(asyncio.QueueEmpty):
                dropped = self.queue.get_nowait()
                asyncio.create_task(self._log(dropped, "dropped", 0, None, "receiver queue full", None))
        self.queue.put_nowait(job)

    async def _run(self) -> None:
        headers = {"Content-Type": "application/json", "User-Agent": "poolscope"}
        headers.update({k: v.get_secret_value() for k, v in self.receiver.headers.items()})
        async with httpx.AsyncClient(timeout=self.receiver.timeout_s, headers=headers) as client:
            while True:
                job = await self.queue.get()
                try:
                    await self._deliver(client, job)
                except asyncio.CancelledError:
                    raise
                except Exception:
                    log.exception("webhook %s: delivery crashed", self.receiver.name)

    async def _deliver(self, client: httpx.AsyncClient, job: _Job) -> None:
        r = self.receiver
        url = r.url.get_secret_value()
        for attempt in range(1, r.max_attempts + 1):
            started = time.perf_counter()
            status: int | None = None
            error: str | None = None
            try:
                # httpx's timeout bounds each read, not the whole: a receiver that trickles its
                # answer would hold this receiver's queue for good.
                async with asyncio.timeout(r.timeout_s):
                    response = await client.post(url, json=job.payload)
                status = response.status_code
                if 200 <= status < 300:
                    self.delivered += 1
                    await self._log(job, "delivered", attempt, status, None, started)
                    return
                error = f"HTTP {status}"
            except TimeoutError:
                error = f"no complete answer within {r.timeout_s:g} s"
            except Exception as exc:
                # httpx messages can include the URL (and its token): say what kind of failure only.
                error = type(exc).__name__
            last = attempt == r.max_attempts
            await self._log(job, "failed" if last else "retrying", attempt, status, error, started)
            if last:
                self.failed += 1
                log.warning(
                    "webhook %s (%s): gave up after %d attempts: %s", r.name, r.safe_url(), attempt, error
                )
                return
            await asyncio.sleep(min(r.backoff_initial_s * 2 ** (attempt - 1), r.backoff_max_s))

    async def _log(
        self,
        job: _Job,
        outcome: str,
        attempt: int,
        status: int | None,
        error: str | None,
        started: float | None,
    ) -> None:
        try:
            await self.repo.log_delivery(
                receiver=self.receiver.name,
                alert_id=job.alert.id,
                fingerprint=job.alert.fingerprint,
                alert_status=job.alert.status,
                outcome=outcome,
                attempt=attempt,
                http_status=status,
                error=error,
                at=time.time(),
                duration_ms=None if started is None else round((time.perf_counter() - started) * 1000, 3),
            )
        except Exception as error:
            self._delivery_log.failed(error)  # delivered all the same: only its log line is lost
        else:
            self._delivery_log.ok()


class WebhookDispatcher:
    def __init__(self, receivers: list[WebhookReceiver], repo: AlertRepository, external_url: str) -> None:
        self.workers = [ReceiverWorker(r, repo, external_url) for r in receivers]

    def start(self) -> None:
        for worker in self.workers:
            worker.start()

    async def stop(self) -> None:
        for worker in self.workers:
            await worker.stop()

    def notify(self, alert: Alert) -> None:
        """Queue the alert for every receiver; returns at once (never awaits a receiver)."""
        for worker in self.workers:
            if alert.status == "resolved" and not worker.receiver.send_resolved:
                continue
            worker.enqueue(alert)
