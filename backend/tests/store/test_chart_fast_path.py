"""The chart read (store/query.py) on SQLite and a real PostgreSQL: values rounded without round(),
and exactly the buckets the raw samples give, for every aggregate."""

import math
import random

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from poolscope.schemas import Sample, TargetInfo
from poolscope.store.ingest import Poll
from poolscope.store.query import round6
from poolscope.store.sql import SqlStore

T0 = 1_800_000_000.0  # a multiple of every tier step below
STEP = 10  # rollup step: tiers of 10, 30 and 100 s
SECONDS = 1200
GROUPS = ("0", "1", "2")


def value(i: int, group: str) -> float:
    return float((i * 7 + int(group) * 5) % 13) + i / 100


@pytest.fixture
async def store(store_url):
    """20 minutes at 1 s of qps and three tp_group_queue_length series, partly rolled up."""
    store = SqlStore(store_url, raw_retention_s=10 * SECONDS, rollup_retention_s=86400, rollup_step_s=STEP)
    info = TargetInfo(name="db1", status="up", poll_interval_s=1.0)
    polls = [
        Poll(
            info,
            None,
            [Sample(metric="qps", value=value(i, "0"))]
            + [
                Sample(metric="tp_group_queue_length", labels={"group": g}, value=value(i, g)) for g in GROUPS
            ],
            T0 + i,
        )
        for i in range(SECONDS)
    ]
    await store.write_polls(polls[:910])
    # Rollups to 15:10 (30 s and 100 s tiers to 15:00): buckets at the seams take rows of two tiers.
    await store.maintain(now=T0 + 910)
    await store.write_polls(polls[910:])
    yield store
    await store.close()


def expected(metric: str, group: str, start: float, step: float, agg) -> list[tuple[float, float]]:
    """The chart's points computed from the written values in Python: round(, 6) of each bucket.
    Coarser than a rollup step, buckets are aligned to the step and hold whole rollup rows."""
    origin = math.floor(start / step) * step if step >= STEP else start
    buckets: dict[int, list[float]] = {}
    for i in range(SECONDS):
        if T0 + i >= origin:
            buckets.setdefault(math.floor((T0 + i - origin) / step), []).append(value(i, group))
    return [(origin + b * step, round(agg(vs), 6)) for b, vs in sorted(buckets.items())]


@pytest.mark.parametrize(("points", "step"), [(598, 2.0), (60, 20.0), (40, 30.0), (12, 100.0)])
@pytest.mark.parametrize("agg", ["avg", "max", "min"])
async def test_every_series_and_point_matches_the_raw_samples(store, points, step, agg):
    fold = {"avg": lambda vs: sum(vs) / len(vs), "max": max, "min": min}[agg]
    start, end = T0 + 3, T0 + SECONDS - 1
    out = await store.query(
        "db1", ["tp_group_queue_length", "qps", "qps"], start, end, points=points, agg=agg
    )
    assert out.step_s == step
    got = {(s.metric, s.labels.get("group", "0")): s.points for s in out.series}
    assert list(got) == [("qps", "0"), *(("tp_group_queue_length", g) for g in GROUPS)]
    for (metric, group), pts in got.items():
        assert pts == expected(metric, group, start, step, fold), (metric, group)
    # The answer serialises as the validated model would (the API sends it without validating).
    assert type(out).model_validate(out.model_dump()).model_dump_json() == out.model_dump_json()


TIES = [0.0000005, -0.0000005, 1.0000005, 2.5e-7, 0.0078125, -0.0078125, 1e-300, -1e-9, 0.0, -0.0]


@given(st.floats(allow_nan=False, allow_infinity=False))
@example(4e9 + 0.0000005)
@example(1e300)
def test_round6_is_round_to_six_places(x):
    assert math.copysign(1, round6(x)) == math.copysign(1, round(x, 6))
    assert round6(x) == round(x, 6)


def test_round6_on_chart_like_values_and_ties():
    rng = random.Random(12)
    values = TIES + [
        rng.randint(-(10**9), 10**9) / rng.choice([3, 7, 60, 128, 180, 1e6, 1e7]) for _ in range(50_000)
    ]
    values += [k / 1e6 + d for k in range(-2000, 2000) for d in (5e-7, -5e-7)]
    for x in values:
        assert repr(round6(x)) == repr(round(x, 6)), x
