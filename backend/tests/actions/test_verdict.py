"""A change's verdict on series recorded around real changes on a sandbox (tests/fixtures/verdict/,
each file names the command that recorded it): pure, no server."""

from __future__ import annotations

import json
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest

from poolscope.actions.models import Judgement, OverlappingChange
from poolscope.actions.verdict import Rules, Second, headline, judge
from poolscope.config import Settings

FIXTURES = Path(__file__).parent.parent / "fixtures" / "verdict"
WINDOW_S = 60.0


def recording(name: str) -> dict[str, Any]:
    return json.loads((FIXTURES / f"{name}.json").read_text())


def windows(rec: dict[str, Any], at: float, window_s: float = WINDOW_S) -> tuple[list[Second], list[Second]]:
    """The polls of the windows before and after `at`, the poll of the change's second in neither."""
    polls = [(ts, row) for ts, row in rec["seconds"]]
    before = [p for p in polls if at - window_s <= p[0] <= at - 1.0]
    after = [p for p in polls if at + 1.0 <= p[0] <= at + window_s]
    return before, after


def verdict_of(name: str, **kwargs: Any) -> Judgement:
    """The verdict of the recording's first change, the others overlapping it."""
    rec = recording(name)
    first, *others = rec["changes"]
    overlaps = [
        OverlappingChange(
            id=i,
            ts=c["ts"],
            variable=c["set"].split("=")[0],
            old_value=None,
            new_value=c["set"].split("=")[1],
        )
        for i, c in enumerate(others, start=2)
        if "set" in c
    ]
    variable = first["set"].split("=")[0] if "set" in first else "none"
    return judge(*windows(rec, first["ts"]), variable=variable, overlaps=overlaps, **kwargs)


def effect(j: Judgement, metric: str):
    return next(e for e in j.effects if e.metric == metric)


def test_recordings_name_the_command_that_made_them():
    for path in FIXTURES.glob("*.json"):
        rec = json.loads(path.read_text())
        assert rec["command"].startswith("python -m poolscope_dev.record_change"), path.name
        assert len(rec["seconds"]) >= 2 * WINDOW_S - 2 and rec["changes"], path.name


def test_a_load_shift_with_no_change_is_not_credited():
    j = verdict_of("load-shift")
    assert j.verdict == "inconclusive"
    qps = next(s for s in j.load if s.metric == "qps")
    assert qps.shifted and qps.change is not None and qps.change > Rules().max_load_change
    assert headline(j).startswith(f"inconclusive: load changed by +{qps.change:.0%}")


def test_a_change_applied_while_the_load_shifts_is_inconclusive():
    j = verdict_of("change-during-load-shift")
    assert j.verdict == "inconclusive"
    assert j.reasons[0].startswith("load changed by +")


def test_a_real_improvement_under_a_steady_load_is_better_with_an_interval():
    j = verdict_of("improvement")
    assert not any(s.shifted for s in j.load), j.load
    wait = effect(j, "tp_queue_wait_avg_ms")
    assert wait.low is not None and wait.high is not None and wait.difference is not None
    assert wait.low <= wait.difference <= wait.high < -1.0
    assert j.verdict == "better", j.reasons
    assert "interval" in j.reasons[0]


def test_a_real_regression_under_a_steady_load_is_worse():
    j = verdict_of("regression")
    assert j.verdict == "worse", j.reasons
    assert any(e.verdict == "worse" for e in j.effects) or j.reasons[0].startswith("throughput fell")


def test_a_regression_with_another_change_in_its_window_is_not_blamed_on_it():
    rec = recording("regression")
    other = OverlappingChange(
        id=9,
        ts=rec["changes"][0]["ts"] + 20,
        variable="thread_pool_oversubscribe",
        old_value="3",
        new_value="5",
    )
    j = judge(*windows(rec, rec["changes"][0]["ts"]), variable="thread_pool_size", overlaps=[other])
    assert j.verdict == "inconclusive" and j.reasons[0].startswith("another change overlaps: #9")


def test_an_overlapping_change_is_named_and_makes_it_inconclusive():
    j = verdict_of("overlap")
    assert j.verdict == "inconclusive"
    assert [o.variable for o in j.overlaps] == ["thread_pool_oversubscribe"]
    assert "another change overlaps: #2 thread_pool_oversubscribe" in j.reasons[0]
    # Without the other change, the overlap is not among the reasons.
    rec = recording("overlap")
    alone = judge(*windows(rec, rec["changes"][0]["ts"]), variable="thread_pool_size")
    assert not [r for r in alone.reasons if "overlaps" in r]


def test_the_same_recording_judged_twice_gives_the_same_interval():
    a, b = verdict_of("improvement"), verdict_of("improvement")
    assert effect(a, "tp_queue_wait_avg_ms") == effect(b, "tp_queue_wait_avg_ms")


def test_too_few_polls_at_matched_load_is_inconclusive():
    j = verdict_of("improvement", rules=Rules(min_matched_polls=500))
    assert j.verdict == "inconclusive" and "too few" in j.reasons[0]


def test_the_stall_rate_is_not_judged_for_a_change_of_the_stall_limit():
    rec = recording("improvement")
    j = judge(*windows(rec, rec["changes"][0]["ts"]), variable="thread_pool_stall_limit")
    stalls = effect(j, "tp_group_stalls_per_s")
    assert stalls.verdict == "inconclusive" and "defines it" in (stalls.note or "")


@pytest.mark.parametrize("threshold", [0.05, 10.0])
def test_the_load_threshold_is_the_setting(threshold):
    j = verdict_of("improvement", rules=Rules(max_load_change=threshold))
    qps = next(s for s in j.load if s.metric == "qps")
    assert qps.shifted == (
        abs(qps.change or 0) > threshold and abs((qps.after or 0) - (qps.before or 0)) >= 5
    )


def test_the_thresholds_are_the_settings_verdict_names():
    names = {n.removeprefix("verdict_") for n in Settings.model_fields if n.startswith("verdict_")}
    assert names == {f.name for f in fields(Rules)}
    custom = Settings(verdict_max_load_change=0.5, verdict_min_matched_polls=7)
    assert Rules.of(custom) == Rules(max_load_change=0.5, min_matched_polls=7)
    assert Rules.of(Settings()) == Rules()
