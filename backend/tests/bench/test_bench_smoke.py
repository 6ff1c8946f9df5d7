"""Smoke test of `python -m poolscope_bench`: the store-ingest and 24 h chart parts in --quick mode.

No sysbench and no exporter; the bench starts its own sandbox (to capture a real poll). Only the
report's shape and that its numbers are positive are checked: timings on a shared 2-core machine
are never asserted.
"""

from __future__ import annotations

import json

import pytest

from poolscope_bench import ingestbench
from poolscope_bench.cli import main

pytestmark = pytest.mark.live  # the bench starts its own sandbox and PostgreSQL (tests/conftest.py lanes)


def _positive(value: object) -> bool:
    return isinstance(value, int | float) and value > 0


def test_quick_store_and_chart_parts(tmp_path, capsys):
    out_file = tmp_path / "bench.json"
    code = main(["--quick", "--skip-sysbench", "--skip-exporter", "--json", str(out_file)])
    assert code == 0

    printed = capsys.readouterr().out
    assert "4. Store ingest" in printed
    assert "5. Serving charts" in printed

    results = json.loads(out_file.read_text())
    assert set(results) >= {
        "meta",
        "overhead_poolscope",
        "overhead_exporter",
        "overhead_control",
        "idle_cost",
        "poll_time",
        "store_ingest",
        "chart",
    }
    for skipped in ("overhead_poolscope", "overhead_exporter", "overhead_control", "idle_cost", "poll_time"):
        assert results[skipped] == {"skipped": "--skip-sysbench"}
    assert results["meta"]["server"]["flavor"] == "mariadb"
    assert results["meta"]["sandbox"]["extra_port"] > 0

    for dialect in ("sqlite", "postgresql"):
        ingest = results["store_ingest"][dialect]
        assert ingest["polls"] == 200
        assert 80 <= ingest["samples_per_poll"] <= 150  # a realistic poll of an 8-group server
        for key in ("samples_per_s", "polls_per_s", "total_s", "cpu_ms_per_write"):
            assert _positive(ingest[key]), key
        assert ingest["write_ms"]["n"] == 200
        assert _positive(ingest["write_ms"]["p50"])
        batched = ingest["batched"]
        assert batched["polls"] == 1000 and 1 <= batched["batches"] < 1000  # polls shared commits
        assert _positive(batched["samples_per_s"])
        # PostgreSQL: two batches in flight (store/writer.py), the server's CPU measured beside.
        assert batched["batches_in_flight"] == (2 if dialect == "postgresql" else 1)
        assert (batched["server_us_per_sample"] is None) == (dialect == "sqlite")
        alone = ingest["samples_only"]  # the samples without latest rows (ingestbench.py)
        assert alone["samples"] == 1000 * ingest["samples_per_poll"]
        assert _positive(alone["samples_per_cpu_s"])
        # The PostgreSQL server's CPU is measured beside this process's; SQLite has no server.
        assert (alone["server_us_per_sample"] is None) == (dialect == "sqlite")
        # One writer process, then one per core (two at least) as `serve`'s pollers, into the same
        # store at once: every sample they were answered for is stored.
        processes = ingest["writer_processes"]
        assert [p["writers"] for p in processes] == [1, ingestbench.default_writers()]
        for figure in processes:
            assert figure["polls"] >= 100 * figure["writers"] and _positive(figure["samples_per_s"])
            assert figure["stored_samples"] == figure["submitted_samples"] > figure["samples"]
            assert (figure["server_us_per_sample"] is None) == (dialect == "sqlite")
            assert figure["batches_in_flight"] == batched["batches_in_flight"]

        chart = results["chart"][dialect]
        assert chart["hours"] == 24
        assert chart["rollup_rows"] >= 24 * 60 * chart["series_in_store"] * 0.95
        assert _positive(chart["raw_rows"])
        day = chart["chart_24h"]
        assert day["resolution"] == "rollup"
        assert day["series"] >= 8 + 5  # queue length per group + qps + four thread gauges
        assert 0 < day["points_per_series_max"] <= 601
        five = chart["chart_5min"]
        assert five["resolution"] == "raw"
        assert five["points_per_series_max"] > 100
        for query in (day, five, chart["page_24h"]):
            assert query["queries"] >= 2
            for key in ("p50_ms", "max_ms", "first_ms"):
                assert _positive(query[key]), key
    assert _positive(results["store_ingest"]["sqlite"]["db_bytes"])
