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


def test_fraction_above_is_the_fraction_of_totals_above_the_threshold():
    """What the rules ask as fraction_above(m, 0.0) is fraction(m, lambda v: v > 0.0) exactly: zeros
    of either sign, negatives, repeated values, a threshold between values and one on them."""
    totals = [0.0, -0.0, 2.0, -1.5, 0.0, 3.0, 2.0, 1e-9, -1e-9, 0.0]
    w = Window.of_totals(0.0, 10.0, {"q": totals, "empty": []})
    for threshold in (0.0, -0.0, 2.0, 1.0, -2.0, 3.0, 5.0, 1e-9):
        want = sum(1 for v in totals if v > threshold) / len(totals)
        assert w.fraction_above("q", threshold) == w.fraction("q", lambda v, t=threshold: v > t) == want
    assert w.fraction_above("q", 0.0) == 0.4
    assert w.fraction_above("empty", 0.0) is None and w.fraction_above("missing", 0.0) is None
    # The sorted copy it keeps is not what totals() or quantile() hand out.
    assert w.quantile("q", 1.0) == 3.0 and w.totals("q") == totals
