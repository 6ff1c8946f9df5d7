"""The fleet bench at a tiny size: `python -m poolscope_bench fleet` with 3 targets for 5 s.

It starts its own sandbox and a real `poolscope serve`; the numbers are checked for being sane
(polls counted, CPU charged, staleness finite), never for speed, and every process it started
must be gone when it returns.
"""

from __future__ import annotations

import json
import math

import pytest

from poolscope_bench.fleet import main
from poolscope_dev.supervisor import pid_alive

pytestmark = pytest.mark.live  # the bench starts its own sandbox (tests/conftest.py lanes)


def test_tiny_fleet_run_measures_and_leaves_nothing(tmp_path, capsys):
    out_file = tmp_path / "fleet.json"
    # A kept workdir with an earlier run's log: the new run starts from a clean store and log.
    workdir = tmp_path / "work"
    (workdir / "run-3").mkdir(parents=True)
    (workdir / "run-3" / "serve.log").write_text("ValueError: stale-marker from an earlier run\n")
    argv = ["--sizes", "3", "--seconds", "5", "--warmup", "1", "--sandboxes", "1", "--exporter-scrapes", "3"]
    assert main([*argv, "--json", str(out_file), "--workdir", str(workdir)]) == 0
    printed = capsys.readouterr().out
    assert "ms/target-poll" in printed

    results = json.loads(out_file.read_text())
    (run,) = results["runs"]
    assert run["targets"] == 3
    assert run["targets_polled"] == 3
    # One poll per target per second: never more than the window allows (+1 each for its edges).
    assert 0 < run["polls"] <= run["polls_expected"] + 3
    assert run["cpu_s"] > 0 and run["cpu_ms_per_poll"] > 0
    assert run["down_polls"] == 0  # polls done count only polls that reached the server
    assert run["rss_mb"] > 0 and run["processes"] >= 1
    # CPU split by process: the pollers' share is what a target-poll costs without the API.
    roles = run["cpu_cores_by_role"]
    assert {"api", "poller"} <= set(roles) and all(cores >= 0 for cores in roles.values())
    assert 0 < run["poller_cpu_ms_per_poll"] <= run["cpu_ms_per_poll"]
    assert not any("stale-marker" in text for text, _ in run["serve_log"]["exceptions"])
    api = run["api"]
    assert api["targets_ms"]["n"] >= 2  # /api/targets and the overview take turns, once a second
    stale = api["staleness_s"]
    assert stale["n"] >= 3 * 2
    assert all(math.isfinite(stale[k]) and stale[k] >= 0 for k in ("p50", "p95", "max"))
    assert api["not_up_max"] == 0

    exporter = results["exporter"]
    if "skipped" not in exporter:
        assert exporter["ops"] == 3 and exporter["helper_cpu_ms_per_op"] >= 0

    assert run["left_running"] == []
    assert run["pids_seen"] and not any(pid_alive(pid) for pid in run["pids_seen"])
    assert not any(pid_alive(pid) for pid in results["meta"]["sandbox_pids"])


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--sizes", "10,x"], "comma-separated list of integers"),
        (["--sizes", "0"], "target counts in 1..5000"),
        (["--seconds", "0"], "--seconds must be in 1..600"),
        (["--sandboxes", "0"], "--sandboxes must be in 1..16"),
    ],
)
def test_bad_arguments_are_refused_before_anything_starts(argv, message):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert message in str(exc.value)
