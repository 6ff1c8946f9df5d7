"""The worked examples of docs/development/ run as written: the alert rule, the recommendation
rule and the collector (its SQL against the live sandbox, inside a real poll)."""

from __future__ import annotations

import re
import sys
import types
from collections.abc import Iterator
from pathlib import Path

import pytest

from poolscope.alerts.model import AlertContext, AlertRule
from poolscope.alerts.rules import declared_thresholds
from poolscope.config import Settings, TargetConfig
from poolscope.metrics.catalog import CATALOG
from poolscope.poller.collectors import all_collectors
from poolscope.poller.collectors.base import Collector
from poolscope.poller.target_poller import TargetPoller
from poolscope.recommend.base import Clear, RecommendRule
from poolscope.rules.base import thresholds_model
from tests.alerts import test_rules
from tests.alerts.states import info, state, threads
from tests.recommend.builders import ctx

DOCS = Path(__file__).resolve().parents[2] / "docs" / "development"


@pytest.fixture(autouse=True)
def _forget_examples() -> Iterator[None]:
    """The examples are importable during their test only."""
    before = set(sys.modules)
    yield
    for name in set(sys.modules) - before:
        if (
            name.startswith(("poolscope.", "tests."))
            and not (DOCS.parent.parent / "backend").joinpath(*name.split(".")).with_suffix(".py").exists()
        ):
            del sys.modules[name]


def _example(page: str, path: str) -> types.ModuleType:
    """The code block of docs/development/<page> that starts with `# <path>`, loaded as a module
    (importable by the name the page gives it, for the page's test block)."""
    blocks = re.findall(r"```python\n(.*?)```", (DOCS / page).read_text(), re.S)
    (code,) = [b for b in blocks if b.startswith(f"# {path}\n")]
    name = path.removeprefix("backend/").removesuffix(".py").replace("/", ".")
    module = types.ModuleType(name)
    sys.modules[name] = module
    exec(compile(code, path, "exec"), module.__dict__)
    return module


def test_the_alert_rule_example_is_a_working_rule_named_after_its_file(monkeypatch):
    module = _example("adding-an-alert-rule.md", "backend/poolscope/alerts/rules/threads_running_high.py")
    rule = module.RULE
    assert isinstance(rule, AlertRule) and rule.name == module.__name__.rsplit(".", 1)[1]
    values = thresholds_model("T", "the example's", rule.thresholds)()

    def run(running: int):  # noqa: ANN202
        s = state(1, threads=threads(running=running))
        return rule.evaluate(
            AlertContext(target="db1", now=1, info=info(1), state=s, history=(), thresholds=values)
        )

    assert run(65)[0].level == "breach" and run(60)[0].level == "hold" and run(10) == []
    assert rule.for_s(values) == 30.0
    # As if the file were in alerts/rules/: the rule and its thresholds are known by name.
    monkeypatch.setitem(test_rules.RULES, rule.name, rule)
    shipped = [*declared_thresholds(), *(t for t in rule.thresholds if t not in declared_thresholds())]
    monkeypatch.setattr(test_rules, "Thresholds", thresholds_model("Thresholds", "shipped", shipped))
    test = _example("adding-an-alert-rule.md", "backend/tests/alerts/test_threads_running_high.py")
    test.test_threads_running_high_fires_above_its_threshold_and_holds_down_to_80_percent()


def test_the_recommendation_rule_example_is_a_working_rule_named_after_its_file():
    page = "adding-a-recommendation-rule.md"
    module = _example(page, "backend/poolscope/recommend/rules/thread_pool_idle_timeout.py")
    rule = module.RULE
    assert isinstance(rule, RecommendRule) and rule.name == module.__name__.rsplit(".", 1)[1]
    busy = ctx({"thread_pool_idle_timeout": "60"}, {"tp_group_thread_creations_per_s": [3.0] * 60})
    assert rule.evaluate(busy).proposed == "120"
    calm = ctx({"thread_pool_idle_timeout": "60"}, {"tp_group_thread_creations_per_s": [0.0] * 60})
    assert isinstance(rule.evaluate(calm), Clear)
    test = _example(page, "backend/tests/recommend/test_thread_pool_idle_timeout.py")
    test.test_thread_pool_idle_timeout_doubles_when_workers_keep_being_created()


async def test_the_collector_example_reads_the_live_server_inside_a_real_poll(monitor_dsn):
    page = "adding-a-collector.md"
    module = _example(page, "backend/poolscope/poller/collectors/innodb_metrics.py")
    collector = module.InnodbMetrics()
    assert isinstance(collector, Collector)
    assert not {m.name for m in collector.metrics} & set(CATALOG), (
        "the example names a real metric: pick another"
    )
    test = _example(page, "backend/tests/poller/test_innodb_metrics.py")
    test.test_the_purge_backlog_and_row_lock_waits_become_samples()

    settings = Settings(targets=[TargetConfig(name="db", dsn=monitor_dsn)])
    poller = TargetPoller(settings.targets[0], settings, collectors=[*all_collectors(), collector])
    try:
        result = await poller.poll_once()
    finally:
        await poller.close()
    (status,) = [c for c in result.info.collectors if c.name == "innodb_metrics"]
    assert status.ok, status.error
    read = {s.metric: s.value for s in result.samples if s.metric in module.SERIES.values()}
    assert set(read) == set(module.SERIES.values()) and all(v is not None and v >= 0 for v in read.values())
