"""`/metrics` in the Prometheus text exposition format (0.0.4): per-group thread pool metrics and
Poolscope's own health, so an existing Prometheus can scrape and alert too.

Values come from the last poll held in memory (no database read per scrape). Group metrics are
left out while a target is down: Prometheus should see them go stale, not freeze.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from fastapi import APIRouter
from fastapi.responses import PlainTextResponse

from poolscope import __version__
from poolscope.alerts.rules.group_stalled import ALERTING_REASONS
from poolscope.api.deps import ServicesDep, SettingsDep, StoreDep
from poolscope.schemas import TargetInfo, TargetState
from poolscope.services import Services

router = APIRouter(tags=["prometheus"])

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

# name -> (type, help); every family is declared once, in this order.
FAMILIES: dict[str, tuple[str, str]] = {
    "poolscope_build_info": ("gauge", "always 1; the version label says which Poolscope answers"),
    "poolscope_target_up": ("gauge", "1 when the last poll of the target succeeded"),
    "poolscope_poll_duration_seconds": ("gauge", "wall time of the last poll"),
    "poolscope_last_success_timestamp_seconds": ("gauge", "time of the last successful poll"),
    "poolscope_collector_success": ("gauge", "1 when the collector ran and parsed in the last poll"),
    "poolscope_collector_duration_seconds": ("gauge", "collector time in the last poll"),
    "poolscope_tp_group_connections": ("gauge", "THREAD_POOL_GROUPS.CONNECTIONS"),
    "poolscope_tp_group_threads": ("gauge", "THREAD_POOL_GROUPS.THREADS"),
    "poolscope_tp_group_active_threads": ("gauge", "THREAD_POOL_GROUPS.ACTIVE_THREADS"),
    "poolscope_tp_group_standby_threads": ("gauge", "THREAD_POOL_GROUPS.STANDBY_THREADS"),
    "poolscope_tp_group_queue_length": ("gauge", "THREAD_POOL_GROUPS.QUEUE_LENGTH"),
    "poolscope_tp_group_stalled": (
        "gauge",
        "1 when Poolscope judged the group stalled (STALLS rose or no dequeue), as the group_stalled alert does",
    ),
    "poolscope_tp_group_oldest_queued_seconds": ("gauge", "wait of the group's oldest queued connection"),
    "poolscope_tp_group_stalls_per_second": ("gauge", "THREAD_POOL_STATS.STALLS rate"),
    "poolscope_tp_group_dequeues_per_second": ("gauge", "THREAD_POOL_STATS dequeues rate"),
    "poolscope_tp_group_thread_creations_per_second": ("gauge", "THREAD_POOL_STATS.THREAD_CREATIONS rate"),
    "poolscope_tp_queued_connections": (
        "gauge",
        "connections waiting in the pool's queues (THREAD_POOL_QUEUES rows; Percona 8.4.10+ Threadpool_requests_waiting_in_*)",
    ),
    "poolscope_threads_connected": ("gauge", "Threads_connected"),
    "poolscope_threads_running": ("gauge", "Threads_running"),
    "poolscope_pool_threads": ("gauge", "Threadpool_threads"),
    "poolscope_queries_per_second": ("gauge", "Questions rate, less Poolscope's own"),
    "poolscope_transactions_per_second": ("gauge", "commits + rollbacks rate"),
    "poolscope_trx_active": ("gauge", "open InnoDB transactions"),
    "poolscope_trx_lock_waits": ("gauge", "InnoDB transactions in LOCK WAIT"),
    "poolscope_alerts": ("gauge", "alerts by state (firing, pending) per target, rule and severity"),
    "poolscope_alert_evaluations_total": ("counter", "polls evaluated by the alert engine"),
    "poolscope_webhook_deliveries_total": (
        "counter",
        "webhook notifications delivered or given up, per receiver",
    ),
    "poolscope_webhook_queue_length": ("gauge", "notifications waiting for a receiver"),
    "poolscope_alertmanager_posts_total": (
        "counter",
        "POSTs of alerts to an Alertmanager's v2 API, delivered (2xx) or failed",
    ),
}


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _fmt(value: float) -> str:
    if value != value:  # NaN
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "+Inf" if value > 0 else "-Inf"
    return repr(float(value)) if not float(value).is_integer() else str(int(value))


class Exposition:
    def __init__(self) -> None:
        self._samples: dict[str, list[str]] = defaultdict(list)

    def add(self, name: str, value: float | int | bool | None, **labels: str) -> None:
        if value is None:
            return
        assert name in FAMILIES, name
        label_text = ",".join(f'{k}="{_escape(str(v))}"' for k, v in labels.items())
        self._samples[name].append(
            f"{name}{{{label_text}}} {_fmt(float(value))}" if labels else f"{name} {_fmt(float(value))}"
        )

    def render(self) -> str:
        lines = []
        for name, (kind, help_text) in FAMILIES.items():
            if name not in self._samples:
                continue
            lines.append(f"# HELP {name} {help_text}")
            lines.append(f"# TYPE {name} {kind}")
            lines.extend(self._samples[name])
        return "\n".join(lines) + "\n"


def _target_metrics(out: Exposition, info: TargetInfo, state: TargetState | None) -> None:
    t = info.name
    up = info.status == "up"
    out.add("poolscope_target_up", 1 if up else 0, target=t)
    if info.poll_duration_ms is not None:
        out.add("poolscope_poll_duration_seconds", info.poll_duration_ms / 1000, target=t)
    out.add("poolscope_last_success_timestamp_seconds", info.last_success_at, target=t)
    for c in info.collectors:
        if c.skipped is None:
            out.add("poolscope_collector_success", 1 if c.ok else 0, target=t, collector=c.name)
            if c.duration_ms is not None:
                out.add(
                    "poolscope_collector_duration_seconds", c.duration_ms / 1000, target=t, collector=c.name
                )
    if not up or state is None:
        return
    for g in state.groups:
        labels = {"target": t, "group": str(g.group_id)}
        out.add("poolscope_tp_group_connections", g.connections, **labels)
        out.add("poolscope_tp_group_threads", g.threads, **labels)
        out.add("poolscope_tp_group_active_threads", g.active_threads, **labels)
        out.add("poolscope_tp_group_standby_threads", g.standby_threads, **labels)
        out.add("poolscope_tp_group_queue_length", g.queue_length, **labels)
        # The server's instantaneous IS_STALLED flag alone is not a stall (group_stalled.py).
        out.add("poolscope_tp_group_stalled", 1 if g.stall_reason in ALERTING_REASONS else 0, **labels)
        out.add(
            "poolscope_tp_group_oldest_queued_seconds",
            0.0 if g.oldest_queued_ms is None else g.oldest_queued_ms / 1000,
            **labels,
        )
        out.add("poolscope_tp_group_stalls_per_second", g.stalls_per_s, **labels)
        out.add("poolscope_tp_group_dequeues_per_second", g.dequeues_per_s, **labels)
        out.add("poolscope_tp_group_thread_creations_per_second", g.thread_creations_per_s, **labels)
    out.add("poolscope_tp_queued_connections", state.queued_connections, target=t)
    out.add("poolscope_threads_connected", state.threads.connected, target=t)
    out.add("poolscope_threads_running", state.threads.running, target=t)
    out.add("poolscope_pool_threads", state.threads.pool_threads, target=t)
    out.add("poolscope_queries_per_second", state.throughput.qps, target=t)
    out.add("poolscope_transactions_per_second", state.throughput.tps, target=t)
    if state.transactions is not None:
        out.add("poolscope_trx_active", state.transactions.count, target=t)
        out.add("poolscope_trx_lock_waits", state.transactions.lock_waits, target=t)


def _alert_metrics(out: Exposition, services: Services, targets: Iterable[str]) -> None:
    engine = services.alerts
    if engine is None:
        return
    counts: dict[tuple[str, str, str, str], int] = defaultdict(int)
    for alert in engine.current():
        counts[(alert.target, alert.rule, alert.severity, alert.status)] += 1
    # Zero series for every target and rule, so `poolscope_alerts > 0` has something to compare.
    for target in targets:
        for rule in engine.rules:
            for status in ("firing", "pending"):
                counts.setdefault((target, rule.name, rule.severity, status), 0)
    for (target, rule_name, severity, status), n in sorted(counts.items()):
        out.add("poolscope_alerts", n, target=target, rule=rule_name, severity=severity, state=status)
    out.add("poolscope_alert_evaluations_total", engine.evaluations)
    if engine.dispatcher is not None:
        for worker in engine.dispatcher.workers:
            name = worker.receiver.name
            out.add(
                "poolscope_webhook_deliveries_total", worker.delivered, receiver=name, outcome="delivered"
            )
            out.add("poolscope_webhook_deliveries_total", worker.failed, receiver=name, outcome="failed")
            out.add("poolscope_webhook_queue_length", worker.queue.qsize(), receiver=name)
    alertmanager = services.alertmanager
    if alertmanager is not None:
        for url, count in alertmanager.delivered.items():
            out.add("poolscope_alertmanager_posts_total", count, alertmanager=url, outcome="delivered")
            out.add(
                "poolscope_alertmanager_posts_total",
                alertmanager.failed[url],
                alertmanager=url,
                outcome="failed",
            )


@router.get("/metrics", response_class=PlainTextResponse)
async def metrics(services: ServicesDep, store: StoreDep, settings: SettingsDep) -> PlainTextResponse:
    """Prometheus exposition of every target's last poll and of Poolscope's own health."""
    out = Exposition()
    out.add("poolscope_build_info", 1, version=__version__)
    names = [t.name for t in settings.targets]
    for name in names:
        latest = await store.latest(name)
        if latest is not None:
            _target_metrics(out, latest[0], latest[1])
    _alert_metrics(out, services, names)
    return PlainTextResponse(out.render(), media_type=CONTENT_TYPE)
