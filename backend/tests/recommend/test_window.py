"""The rules' history window: per-poll totals across label sets, summed once per metric and never
changed by what a caller does with the list it was given."""

from __future__ import annotations

import math

from poolscope.recommend.window import Window
from poolscope.schemas import SeriesOut


def _window() -> Window:
    return Window(
        0.0,
        10.0,
        [
            SeriesOut(metric="q", labels={"group": "0"}, points=[(1.0, 1.0), (2.0, 3.0), (3.0, None)]),
            SeriesOut(metric="q", labels={"group": "1"}, points=[(1.0, 2.0), (2.0, math.nan), (3.0, 4.0)]),
            SeriesOut(metric="other", labels={}, points=[(1.0, 9.0)]),
        ],
    )


def test_totals_sum_the_label_sets_per_poll_and_every_statistic_reads_them():
    w = _window()
    assert w.totals("q") == [3.0, 3.0, 4.0]
    assert (w.count("q"), w.mean("q"), w.peak("q"), w.quantile("q", 0.5)) == (3, 10 / 3, 4.0, 3.0)
    assert w.fraction("q", lambda v: v > 3) == 1 / 3
    assert w.totals("missing") == [] and w.mean("missing") is None


def test_a_caller_changing_its_list_does_not_change_the_window():
    w = _window()
    values = w.totals("q")
    values.append(100.0)
    values[0] = -1.0
    assert w.totals("q") == [3.0, 3.0, 4.0]
    assert (w.count("q"), w.peak("q")) == (3, 4.0)
