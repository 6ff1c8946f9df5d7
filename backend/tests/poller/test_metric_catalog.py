"""One metric catalog: every series a poll stores is declared beside its producer, and the store,
/metrics and the UI's generated names all follow the catalog with no other edit."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from poolscope.api.prometheus import FAMILIES, Exposition, _target_metrics
from poolscope.metrics import Metric
from poolscope.metrics.catalog import CATALOG, STORED, _gather, prometheus_families
from poolscope.poller.collectors.base import Collector, CollectorOutput, ParseContext, Row
from poolscope.schemas import Sample
from tests import FIXTURES_ROOT
from tests.poller.helpers import poller_for

REPO = Path(__file__).resolve().parents[3]
FIXTURES = sorted(
    str(path.parent.relative_to(FIXTURES_ROOT)) for path in FIXTURES_ROOT.glob("*/*/discovery_variables.json")
)


def _recording(collector: Collector[Any], seen: dict[str, list[Sample]]) -> None:
    """Wrap the collector's parse so the test sees which samples each collector emits."""
    parse = collector.parse

    def recorded(rows: list[Row], ctx: ParseContext) -> CollectorOutput[Any]:
        output = parse(rows, ctx)
        seen.setdefault(collector.name, []).extend(output.samples)
        return output

    collector.parse = recorded  # type: ignore[method-assign]


async def _poll_fixture(fixture: str) -> tuple[dict[str, list[Sample]], list[Sample], Any]:
    poller = poller_for(f"fixture://{fixture}")
    seen: dict[str, list[Sample]] = {}
    for collector in poller.collectors:
        _recording(collector, seen)
    try:
        results = [await poller.poll_once() for _ in range(3)]
    finally:
        await poller.close()
    return seen, [s for r in results for s in r.samples], poller


@pytest.mark.parametrize("fixture", FIXTURES)
def test_every_sample_a_poll_emits_is_declared_by_its_producer(fixture):
    assert len(FIXTURES) >= 10, FIXTURES
    seen, all_samples, poller = asyncio.run(_poll_fixture(fixture))
    by_collector = {c.name: c for c in poller.collectors}
    for name, samples in seen.items():
        declared = {m.name: m for m in by_collector[name].metrics}
        for item in samples:
            assert item.metric in declared, f"{name} emits {item.metric!r} without declaring it"
            assert tuple(item.labels) == declared[item.metric].labels, (name, item)
    # Derived and runner samples (tp_group_stalled, ratios, target_up) are in the catalog too.
    for item in all_samples:
        assert item.metric in STORED, item.metric
        assert tuple(item.labels) == CATALOG[item.metric].labels, item


def test_a_name_declared_twice_differently_is_refused():
    queue = Metric("tp_queue_x", "one help")
    assert _gather([queue, queue]) == {"tp_queue_x": queue}  # one declaration listed by two sources
    with pytest.raises(ValueError, match="declared twice"):
        _gather([queue, Metric("tp_queue_x", "another help")])


def test_prometheus_families_are_exactly_the_catalog_ones():
    assert list(FAMILIES) == [m.prometheus for m in prometheus_families()]
    names = [m.prometheus for m in CATALOG.values() if m.prometheus]
    assert len(names) == len(set(names)) and all(n.startswith("poolscope_") for n in names)


def test_metrics_exposes_every_sample_backed_family_from_a_real_poll():
    _, samples, poller = asyncio.run(_poll_fixture("mariadb/10.11"))
    last = poller.info
    out = Exposition()
    polled = [s for s in samples[-len(samples) // 3 :]]  # the third poll's samples, rates included
    _target_metrics(out, last, None, polled)
    text = out.render()
    for metric in prometheus_families():
        emitted = [s for s in polled if s.metric == metric.name and s.value is not None]
        if metric.stored and emitted:
            assert f"# TYPE {metric.prometheus} {metric.kind}" in text, metric
            labels = ",".join(
                [f'target="{last.name}"', *(f'{k}="{v}"' for k, v in emitted[0].labels.items())]
            )
            assert f"{metric.prometheus}{{{labels}}} " in text, metric
    # A new catalog metric with a Prometheus name is exposed from its samples, no renderer needed.
    extra = Metric("tp_new_gauge", "a new gauge", labels=("group",), prometheus="poolscope_tp_new_gauge")
    import poolscope.api.prometheus as prometheus

    try:
        prometheus.FAMILIES[extra.prometheus] = (extra.kind, extra.help)  # type: ignore[index]
        prometheus.FROM_SAMPLES[extra.name] = extra
        out = Exposition()
        _target_metrics(out, last, None, [Sample(metric="tp_new_gauge", labels={"group": "3"}, value=2.5)])
        assert 'poolscope_tp_new_gauge{target="t",group="3"} 2.5' in out.render()
    finally:
        del prometheus.FAMILIES["poolscope_tp_new_gauge"]
        del prometheus.FROM_SAMPLES["tp_new_gauge"]


def test_the_generated_ui_names_are_in_sync_with_the_catalog():
    script = REPO / "scripts" / "gen-metrics.py"
    check = subprocess.run(
        [sys.executable, str(script), "--check"], capture_output=True, text=True, timeout=60
    )
    assert check.returncode == 0, check.stderr
    text = (REPO / "frontend" / "src" / "api" / "metrics.gen.ts").read_text()
    for name in STORED:
        assert f"  {name}: '{name}'," in text
    assert "poolscope_alerts" not in text  # /metrics-only families are not series the UI can ask for
