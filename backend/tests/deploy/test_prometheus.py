"""Debian's real Prometheus, with deploy/prometheus/'s config and rules, scrapes a real Poolscope
polling the sandbox MariaDB: per-group series come back through Prometheus' query API, the rules
load and evaluate, and every query of the Grafana dashboard returns data."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import yaml

from poolscope.config import Settings, TargetConfig
from tests.deploy.promql import as_prometheus_query, dashboard_queries
from tests.deploy.support import DEPLOY, prometheus_server, status_of
from tests.served import uvicorn_app
from tests.waiting import wait_for

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def poolscope(monitor_dsn: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    settings = Settings(
        poll_interval_s=0.5,
        store_url=f"sqlite+aiosqlite:///{tmp_path_factory.mktemp('poolscope') / 'store.db'}",
        targets=[TargetConfig(name="db1", dsn=monitor_dsn, tags={"cluster": "orders", "dc-zone": "eu-1"})],
    )
    with uvicorn_app(settings) as base:
        wait_for(lambda: status_of(f"{base}/readyz") == 200, 30, "Poolscope never got ready")
        yield base


@pytest.fixture(scope="module")
def prometheus(poolscope: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Prometheus on loopback with the shipped config, its scrape target pointed at the test app."""
    home = tmp_path_factory.mktemp("prometheus")
    config = yaml.safe_load((DEPLOY / "prometheus" / "prometheus.yml").read_text())
    config["global"]["scrape_interval"] = "1s"
    config["rule_files"] = [str(DEPLOY / "prometheus" / name) for name in config["rule_files"]]
    (job,) = config["scrape_configs"]
    job["scrape_interval"] = job["scrape_timeout"] = "1s"
    job["static_configs"] = [{"targets": [poolscope.removeprefix("http://")]}]
    (home / "prometheus.yml").write_text(yaml.safe_dump(config))
    flags = (f"--storage.tsdb.path={home / 'data'}", "--storage.tsdb.retention.time=1h")
    with prometheus_server("prometheus", home, *flags) as base:
        yield base


def query(base: str, expr: str) -> list[dict[str, Any]]:
    response = httpx.get(f"{base}/api/v1/query", params={"query": expr}, timeout=10)
    body = response.json()
    assert body["status"] == "success", f"{expr}: {body}"
    return body["data"]["result"]  # type: ignore[no-any-return]


def test_prometheus_scrapes_per_group_metrics(prometheus: str, poolscope: str) -> None:
    series = wait_for(
        lambda: query(prometheus, 'poolscope_tp_group_active_threads{target="db1"}'),
        60,
        "Prometheus never stored a per-group series scraped from Poolscope",
    )
    groups = {s["metric"]["group"] for s in series}
    # Poolscope's own view of the same server: the sandbox runs thread_pool_size=2.
    state = httpx.get(f"{poolscope}/api/targets/db1/state", timeout=5).json()
    assert groups == {str(g["group_id"]) for g in state["groups"]} == {"0", "1"}
    assert all(s["metric"]["job"] == "poolscope" for s in series)

    (up,) = query(prometheus, 'up{job="poolscope"}')
    assert up["value"][1] == "1"
    (build,) = query(prometheus, "poolscope_build_info")
    assert build["metric"]["version"] == httpx.get(f"{poolscope}/healthz", timeout=5).json()["version"]
    (threads,) = wait_for(
        lambda: query(prometheus, 'target:poolscope_tp_group_threads:sum{target="db1"}'),
        30,
        "the recording rules never produced a value",
    )
    assert float(threads["value"][1]) >= 2

    # Tags reach Prometheus as labels of poolscope_target_info, joined onto any per-target series.
    joined = query(
        prometheus,
        "poolscope_tp_group_active_threads * on(target) group_left(tag_cluster, tag_dc_zone) poolscope_target_info",
    )
    assert {
        (s["metric"]["group"], s["metric"]["tag_cluster"], s["metric"]["tag_dc_zone"]) for s in joined
    } == {
        ("0", "orders", "eu-1"),
        ("1", "orders", "eu-1"),
    }


def test_rules_load_and_evaluate_healthy(prometheus: str) -> None:
    def groups() -> list[dict[str, Any]]:
        data = httpx.get(f"{prometheus}/api/v1/rules", timeout=10).json()["data"]["groups"]
        evaluated = all(r.get("lastEvaluation", "").startswith("20") for g in data for r in g["rules"])
        return data if data and evaluated else []

    loaded = wait_for(groups, 30, "the rules never evaluated")
    rules = {r["name"]: r for g in loaded for r in g["rules"]}
    for name in ("group_stalled", "queue_length_high", "queue_wait_long", "target_down", "poolscope_down"):
        assert rules[name]["type"] == "alerting"
    for name, rule in rules.items():
        assert rule["health"] == "ok", f"{name}: {rule.get('lastError')}"
    # An idle sandbox: nothing fires.
    assert not [r["name"] for r in rules.values() if r.get("state") == "firing"]


def test_every_grafana_query_returns_data(prometheus: str) -> None:
    # Rates need two scrapes inside their window; transactions need a poll that read INNODB_TRX.
    def empty() -> list[str]:
        return [
            f"{title}: {expr}"
            for title, expr in dashboard_queries()
            if not query(prometheus, as_prometheus_query(expr, "db1"))
        ]

    wait_for(
        empty,
        30,
        lambda left: "dashboard queries with no data from a real scrape:\n" + "\n".join(left),
        every_s=1.0,
        until=lambda left: not left,
    )
