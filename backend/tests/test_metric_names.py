"""Every metric name a rule, the apply guard or the snapshot report reads is one the catalog declares.

Those modules name the series they read as literals; a collector that renames or drops a metric
would otherwise leave them reading an empty series in silence (the store answers no points).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from poolscope.metrics.catalog import STORED

PACKAGE = Path(__file__).resolve().parents[1] / "poolscope"
READERS = sorted(
    [
        *PACKAGE.glob("alerts/rules/*.py"),
        *PACKAGE.glob("recommend/rules/*.py"),
        PACKAGE / "recommend" / "base.py",
        PACKAGE / "actions" / "guard.py",
        PACKAGE / "actions" / "compare.py",
        PACKAGE / "snapshots" / "report.py",
    ]
)
# What a stored series name looks like in this code base (variables and SQL columns do not).
SERIES = re.compile(
    r"^(tp_[a-z_]+|threads_[a-z_]+|pool_threads|pool_idle_threads|qps|tps|trx_active|trx_lock_waits"
    r"|poll_duration_ms|thread_cache_miss_ratio|buffer_pool_miss_ratio|[a-z_]+_per_s)$"
)


def _series_literals(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    # A threshold's own name (Threshold(name="throttles_per_s", ...)) is not a series.
    names = {id(k.value) for k in ast.walk(tree) if isinstance(k, ast.keyword) and k.arg == "name"}
    return {
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in names
        and SERIES.match(node.value)
    }


@pytest.mark.parametrize("path", READERS, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_series_read_by_name_are_in_the_catalog(path: Path) -> None:
    assert path.is_file()
    assert not _series_literals(path) - STORED, f"{path.name} reads series the catalog does not declare"


def test_the_check_sees_the_names_it_guards() -> None:
    # Not vacuous: the readers do name series, and a made-up one is caught.
    seen = set().union(*(_series_literals(p) for p in READERS))
    assert {"tp_group_queue_length", "qps", "tp_group_stalls_per_s"} <= seen
    assert SERIES.match("tp_group_queue_lenght") and "tp_group_queue_lenght" not in STORED
