"""/metrics carries numbers about the pool, never the SQL text that the state holds."""

from __future__ import annotations

from typing import Any

import httpx

from tests.perimeter.helpers import settings_for
from tests.served import ready_app
from tests.waiting import wait_for

TEXT_KEYS = {"info", "last_sql", "query", "sql"}


def texts(node: Any) -> set[str]:
    """Every SQL text in a state document."""
    found: set[str] = set()
    if isinstance(node, dict):
        for key, value in node.items():
            if key in TEXT_KEYS and isinstance(value, str) and len(value) >= 4:
                found.add(value)
            else:
                found |= texts(value)
    elif isinstance(node, list):
        for item in node:
            found |= texts(item)
    return found


def test_metrics_hold_no_sql_text(tmp_path):
    # A replayed MariaDB whose queue and processlist are full of statements (tests/fixtures).
    settings = settings_for(
        tmp_path, users=[], poll_interval_s=0.5, targets=[{"name": "db1", "dsn": "fixture://mariadb/10.11"}]
    )
    with ready_app(settings) as base, httpx.Client(base_url=base, timeout=10) as client:
        state = wait_for(
            lambda: client.get("/api/targets/db1/state"),
            30,
            lambda answer: answer.text,
            until=lambda answer: answer.is_success,
        )
        secrets = texts(state.json())
        assert any(s.upper().startswith("SELECT") for s in secrets), secrets
        exposition = client.get("/metrics").text
    assert 'poolscope_tp_group_queue_length{target="db1",group="0"}' in exposition
    leaked = [s for s in secrets if s in exposition]
    assert leaked == []
    assert "SELECT" not in exposition.upper()


def test_target_info_carries_tags_as_prometheus_labels(tmp_path):
    # Tag names may hold . and - (config.py); label names may not. A target never polled (its
    # server unreachable) still has its info series: tags come from the config.
    settings = settings_for(
        tmp_path,
        users=[],
        poll_interval_s=0.5,
        targets=[
            {
                "name": "db1",
                "dsn": "fixture://mariadb/10.11",
                "tags": {"cluster": "orders", "a.b": "first", "a_b": "second", "dc-zone": "eu west/1"},
            },
            {"name": "db2", "dsn": "mysql://monitor@127.0.0.1:1/none"},
        ],
    )
    with ready_app(settings) as base, httpx.Client(base_url=base, timeout=10) as client:
        exposition = client.get("/metrics").text
    info = sorted(line for line in exposition.splitlines() if line.startswith("poolscope_target_info{"))
    assert info == [
        'poolscope_target_info{target="db1",tag_a_b="first",tag_cluster="orders",tag_dc_zone="eu west/1"} 1',
        'poolscope_target_info{target="db2"} 1',
    ]
    assert "# TYPE poolscope_target_info gauge" in exposition
