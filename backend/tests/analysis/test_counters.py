"""Rates and windowed ratios: resets are resets, never negative rates."""

from poolscope.analysis.counters import CounterMemory, WindowedRatio


def test_rate_needs_two_readings_then_divides_by_elapsed_time():
    memory = CounterMemory()
    assert memory.rate("q", 100.0, 1000) is None
    assert memory.rate("q", 102.0, 1100) == 50.0


def test_counter_going_down_is_a_reset_not_a_negative_rate():
    memory = CounterMemory()
    memory.rate("q", 0.0, 500)
    assert memory.rate("q", 1.0, 20) is None  # FLUSH THREAD_POOL_STATS
    assert memory.rate("q", 2.0, 30) == 10.0  # and counting resumes from the new base


def test_forget_starts_over():
    memory = CounterMemory()
    memory.rate("q", 0.0, 5)
    memory.forget()
    assert memory.rate("q", 1.0, 10) is None


def test_windowed_ratio_uses_only_the_window():
    ratio = WindowedRatio(window_s=10)
    # A long history with 50% misses, then a recent window with 10% misses.
    ratio.add(0, 0, 0)
    ratio.add(100, 50, 100)
    for i in range(1, 11):
        ratio.add(100 + i, 50 + i, 100 + 10 * i)
    value, covered = ratio.value()
    assert covered == 10
    assert abs(value - 0.1) < 1e-9


def test_windowed_ratio_without_traffic_is_none_not_zero():
    ratio = WindowedRatio(window_s=10)
    ratio.add(0, 5, 10)
    ratio.add(1, 5, 10)
    assert ratio.value()[0] is None


def test_windowed_ratio_reset_clears_history():
    ratio = WindowedRatio(window_s=60)
    ratio.add(0, 100, 1000)
    ratio.add(1, 110, 1100)
    ratio.add(2, 1, 10)  # server restarted
    assert ratio.value() == (None, 0.0)


def test_rates_of_a_row_are_what_rate_gives_each_counter_under_its_own_key():
    together, apart = CounterMemory(), CounterMemory()
    # Readings 1 s apart, then one at the same instant (no rate), a reset of the second
    # counter only, and big values; then after forget() everything starts over.
    readings = [
        (10.0, (5, 100, 0)),
        (11.0, (7, 160, 0)),
        (11.0, (8, 170, 0)),
        (12.5, (9, 3, 0)),
        (13.5, (2**62, 4, 1)),
        (14.0, (2**62 + 5, 10, 1)),
    ]
    for round_no in range(2):
        for now, values in readings:
            got = together.rates(("row", 1), now, values)
            want = [apart.rate(("c", i), now, v) for i, v in enumerate(values)]
            assert got == want and [type(x) for x in got] == [type(x) for x in want]
        if round_no == 0:
            together.forget()
            apart.forget()
    assert together.rates(("row", 2), 1.0, (1, 2)) == [None, None]
