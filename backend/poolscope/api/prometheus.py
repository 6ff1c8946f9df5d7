"""`/metrics` in the Prometheus text exposition format (0.0.4): per-group thread pool metrics and
Poolscope's own health, so an existing Prometheus can scrape and alert too.

Values come from each target's latest row (store/latest.py; a poller process reads its own from memory). Group metrics are
left out while a target is down: Prometheus should see them go stale, not freeze. So is every series
of a target whose last stored poll is older than STALE_INTERVALS poll intervals (the store fails, or
nothing polls it): poolscope_target_up 1 is never said from old numbers; poolscope_target_data_age_seconds
and the poolscope_store_* series say why.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Iterable

from fastapi import APIRouter
from fastapi.responses import PlainTextResponse

from poolscope import __version__
from poolscope.alerts.rules.group_stalled import ALERTING_REASONS
from poolscope.api.deps import ServicesDep, SettingsDep, StoreDep
from poolscope.api.store import store_status
from poolscope.auth.deps import AuthDep
from poolscope.auth.service import LIMITS, AuthService
from poolscope.metrics import Metric
from poolscope.metrics.catalog import prometheus_families
from poolscope.schemas import Sample, StoreOut, TargetInfo, TargetState
from poolscope.services import Services

router = APIRouter(tags=["prometheus"])

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
# A target's series are said only from a poll younger than this many of its poll intervals.
STALE_INTERVALS = 2

# name -> (type, help), in catalog order: every family is declared once, beside its producer.
FAMILIES: dict[str, tuple[str, str]] = {
    m.prometheus: (m.kind, m.help) for m in prometheus_families() if m.prometheus is not None
}
# Stored series name -> its family: these are rendered from the last poll's samples.
FROM_SAMPLES: dict[str, Metric] = {m.name: m for m in prometheus_families() if m.stored}


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


def tag_labels(tags: dict[str, str]) -> dict[str, str]:
    """A target's tags as Prometheus label names: `tag_` + the name with . and - as _ (config.py
    allows them in tag names, Prometheus does not in label names). Two names that meet (`a.b`,
    `a_b`): the first in sorted order keeps the label, so the series' labels stay stable."""
    labels: dict[str, str] = {}
    for name in sorted(tags):
        labels.setdefault("tag_" + name.replace(".", "_").replace("-", "_"), tags[name])
    return labels


def _target_metrics(
    out: Exposition, info: TargetInfo, state: TargetState | None, samples: list[Sample]
) -> None:
    t = info.name
    # Catalog metrics with a Prometheus name, from the last poll's samples: a down poll has only
    # target_up, so group metrics go stale in Prometheus instead of freezing.
    for item in samples:
        metric = FROM_SAMPLES.get(item.metric)
        if metric is not None and metric.prometheus is not None and item.value is not None:
            out.add(metric.prometheus, item.value * metric.prometheus_scale, target=t, **item.labels)
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
    if info.status != "up" or state is None:
        return
    for g in state.groups:
        labels = {"target": t, "group": str(g.group_id)}
        # The server's instantaneous IS_STALLED flag alone is not a stall (group_stalled.py).
        out.add("poolscope_tp_group_stalled", 1 if g.stall_reason in ALERTING_REASONS else 0, **labels)
        out.add(
            "poolscope_tp_group_oldest_queued_seconds",
            0.0 if g.oldest_queued_ms is None else g.oldest_queued_ms / 1000,
            **labels,
        )


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


def _store_metrics(out: Exposition, status: StoreOut) -> None:
    out.add("poolscope_store_up", 1 if status.status == "ok" else 0)
    out.add("poolscope_store_failing_since_timestamp_seconds", status.since)
    for writer in status.writers:
        out.add("poolscope_store_buffered_samples", writer.buffered_samples, node=writer.node)
        out.add("poolscope_store_buffered_bytes", writer.buffered_bytes, node=writer.node)
        out.add("poolscope_store_dropped_samples_total", writer.dropped_samples, node=writer.node)


@router.get("/metrics", response_class=PlainTextResponse)
async def metrics(
    services: ServicesDep, store: StoreDep, settings: SettingsDep, auth: AuthDep
) -> PlainTextResponse:
    """Prometheus exposition of every target's last poll and of Poolscope's own health."""
    out = Exposition()
    out.add("poolscope_build_info", 1, version=__version__)
    names = [t.name for t in settings.targets]
    # Tags live in the config, so every configured target has its info series, polled yet or not.
    for target in settings.targets:
        out.add("poolscope_target_info", 1, target=target.name, **tag_labels(target.tags))
    status = await store_status(services)
    _store_metrics(out, status)
    if status.reads == "ok":
        latest = await store.latest_rows.many(names)
        now = time.time()
        for name in names:
            if name not in latest:
                continue
            info = latest[name].info
            age = now - info.last_poll_at if info.last_poll_at is not None else None
            out.add("poolscope_target_data_age_seconds", age, target=name)
            # A target that is down is polled again after retry_in_s, not every interval.
            interval = max(info.poll_interval_s, info.retry_in_s or 0.0)
            if age is not None and age > STALE_INTERVALS * interval:
                continue  # old numbers: nothing said from them (target_up 1 least of all)
            _target_metrics(out, info, latest[name].state, latest[name].samples)
    _alert_metrics(out, services, names)
    _limit_metrics(out, auth)
    return PlainTextResponse(out.render(), media_type=CONTENT_TYPE)


def _limit_metrics(out: Exposition, auth: AuthService) -> None:
    limits = auth.login_limits
    for outcome in ("ok", "wrong"):
        out.add("poolscope_login_attempts_total", limits.outcomes[outcome], outcome=outcome)
    refusals = auth.limit_refusals()
    for limit in LIMITS:
        out.add("poolscope_limit_refusals_total", refusals.get(limit, 0), limit=limit)
    out.add("poolscope_login_slowed_total", limits.slowed)
    out.add("poolscope_login_backoff_pairs", limits.backoff_pairs())
    out.add("poolscope_login_names_slowed", limits.names_under_attack())
