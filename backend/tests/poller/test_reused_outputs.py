"""What a poll makes again unchanged every second is reused: samples of unchanged series, standing statuses."""

from __future__ import annotations

import math

from poolscope.poller.collectors.base import sample
from poolscope.schemas import CollectorStatus, Sample

from .helpers import poller_for


def _value(made: Sample) -> float:
    assert made.value is not None
    return made.value


def test_an_unchanged_series_reuses_its_sample_and_a_changed_one_gets_a_new_one() -> None:
    first = sample("tp_group_stalls_per_s", 0.5, group="1")
    assert sample("tp_group_stalls_per_s", 0.5, group="1") is first
    assert first == Sample(metric="tp_group_stalls_per_s", labels={"group": "1"}, value=0.5)
    changed = sample("tp_group_stalls_per_s", 0.75, group="1")
    assert changed.value == 0.75 and first.value == 0.5, "a made sample never changes"
    assert sample("tp_group_stalls_per_s", 0.5, group="2").labels == {"group": "2"}
    assert sample("qps", None) is sample("qps", None)
    # What a fresh Sample would hold, exactly: the sign of a zero, NaN, an int made a float.
    assert math.copysign(1.0, _value(sample("qps", 0.0))) == 1.0
    assert math.copysign(1.0, _value(sample("qps", -0.0))) == -1.0
    assert math.isnan(_value(sample("qps", math.nan)))
    whole = sample("qps", 3)  # type: ignore[arg-type]
    assert whole.value == 3.0 and isinstance(whole.value, float)


async def test_standing_statuses_are_reused_while_unchanged(monitor_dsn: str) -> None:
    poller = poller_for(monitor_dsn)
    try:
        first = {c.name: c for c in (await poller.poll_once()).info.collectors}
        second = {c.name: c for c in (await poller.poll_once()).info.collectors}
    finally:
        await poller.close()
    skipped = [name for name, status in second.items() if status.skipped]
    assert skipped, "the sandbox's MariaDB pool skips the other flavors' sources"
    for name in skipped:
        assert second[name] is first[name]
        assert second[name] == CollectorStatus(name=name, ok=False, skipped=second[name].skipped)
    ran = [name for name, status in second.items() if status.duration_ms is not None]
    assert ran and all(second[name] is not first[name] for name in ran), "timed per poll"
