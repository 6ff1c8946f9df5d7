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
