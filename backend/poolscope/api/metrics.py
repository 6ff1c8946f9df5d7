"""Metric history, downsampled to the chart's width."""

from __future__ import annotations

import re
import time
from typing import Annotated

from fastapi import APIRouter, HTTPException, Query

from poolscope.api.deps import SettingsDep, StoreDep, TargetName
from poolscope.metrics import Aggregation
from poolscope.metrics.catalog import STORED
from poolscope.schemas import MetricsOut

router = APIRouter(prefix="/api/targets", tags=["metrics"])

MAX_RANGE_S = 400 * 86400
METRIC_NAME = re.compile(r"[a-z][a-z0-9_]{0,127}")


@router.get("/{name}/metrics", response_model=MetricsOut, response_model_by_alias=True)
async def get_metrics(
    name: TargetName,
    store: StoreDep,
    settings: SettingsDep,
    metric: Annotated[list[str], Query(min_length=1, max_length=50)],
    from_: Annotated[float | None, Query(alias="from", description="epoch seconds")] = None,
    to: Annotated[float | None, Query(description="epoch seconds")] = None,
    points: Annotated[int, Query(ge=10, le=5000, description="chart width in points")] = 600,
    agg: Annotated[Aggregation, Query(description="how a bucket combines")] = "avg",
) -> MetricsOut:
    """Series of the named metrics for [from, to] (default: the last 5 minutes)."""
    for item in metric:
        if not _valid_metric(item):
            raise HTTPException(status_code=422, detail=f"invalid metric name {item!r}")
        if item not in STORED:  # the catalog (poolscope/metrics/catalog.py) names every stored series
            raise HTTPException(status_code=422, detail=f"unknown metric {item!r}")
    end = time.time() if to is None else to
    start = end - 300 if from_ is None else from_
    if start >= end:
        raise HTTPException(status_code=422, detail="'from' must be before 'to'")
    if end - start > MAX_RANGE_S:
        raise HTTPException(status_code=422, detail="range longer than 400 days")
    return await store.query(name, metric, start, end, points, agg, min_step_s=settings.poll_interval_s)


def _valid_metric(name: str) -> bool:
    return METRIC_NAME.fullmatch(name) is not None
