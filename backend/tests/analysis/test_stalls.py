"""Stall verdicts: from the STALLS counter, and from a queue that stopped dequeuing."""

from poolscope.analysis.stalls import StallDetector


def judge(detector, now, queue, dequeues, stalls, flag=False, limit=500):
    return detector.judge(0, now, queue, dequeues, stalls, flag, limit)


def test_rising_stall_counter_is_a_stall():
    detector = StallDetector()
    assert judge(detector, 0.0, 0, 10, 0) is None
    assert judge(detector, 1.0, 3, 20, 4) == "stalls_counter"
    assert judge(detector, 2.0, 0, 30, 4) is None


def test_queue_without_dequeues_longer_than_stall_limit_is_a_stall():
    detector = StallDetector()
    judge(detector, 0.0, 0, 100, 0)
    assert judge(detector, 1.0, 5, 150, 0) is None  # progressing
    # No dequeue since t=1.0: at t=1.4 that is under the 500 ms limit, at t=2.0 over it.
    assert judge(detector, 1.4, 5, 150, 0) is None
    assert judge(detector, 2.0, 5, 150, 0) == "no_dequeue"
    assert judge(detector, 3.0, 5, 151, 0) is None  # one dequeue: moving again


def test_large_stall_limit_defers_the_verdict():
    detector = StallDetector()
    judge(detector, 0.0, 0, 100, 0, limit=5000)
    for t in range(1, 6):
        assert judge(detector, float(t), 4, 100, 0, limit=5000) is None
    assert judge(detector, 6.0, 4, 100, 0, limit=5000) == "no_dequeue"


def test_empty_queue_is_never_stalled_by_the_poller_check():
    detector = StallDetector()
    judge(detector, 0.0, 0, 100, 0)
    for t in range(1, 5):
        assert judge(detector, float(t), 0, 100, 0) is None


def test_server_flag_alone_counts_but_counter_reset_does_not():
    detector = StallDetector()
    judge(detector, 0.0, 0, 100, 50)
    assert judge(detector, 1.0, 0, 110, 50, flag=True) == "server_flag"
    # FLUSH THREAD_POOL_STATS: counters drop; that must not read as a stall.
    assert judge(detector, 2.0, 0, 0, 0) is None


def test_without_stats_only_the_flag_is_left():
    detector = StallDetector()
    assert detector.judge(0, 0.0, 5, None, None, False, 500) is None
    assert detector.judge(0, 1.0, 5, None, None, True, 500) == "server_flag"
