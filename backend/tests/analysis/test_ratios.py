"""Cache ratios say which regime they come from; the pool regime gives no thread-cache ratio."""

from poolscope.analysis.ratios import CacheRatios


def feed(ratios, thread_handling, readings):
    result = None
    for now, created, connections, reads, requests in readings:
        status = {
            "Threads_created": created,
            "Connections": connections,
            "Innodb_buffer_pool_reads": reads,
            "Innodb_buffer_pool_read_requests": requests,
        }
        result = ratios.update(now, status, thread_handling)
    return result


def test_one_thread_per_connection_gives_a_windowed_thread_cache_miss_ratio():
    thread, buffer = feed(
        CacheRatios(60), "one-thread-per-connection", [(0, 10, 100, 0, 1000), (10, 15, 120, 10, 2000)]
    )
    assert thread.regime == "one-thread-per-connection"
    assert thread.value == 5 / 20
    assert buffer.value == 10 / 1000


def test_pool_regime_refuses_a_thread_cache_ratio_and_says_why():
    thread, _ = feed(CacheRatios(60), "pool-of-threads", [(0, 10, 100, 0, 0), (10, 15, 120, 0, 0)])
    assert thread.value is None
    assert thread.regime == "pool-of-threads"
    assert "Threads_created counts the pool's own" in thread.note


def test_no_reads_is_none_with_a_note():
    _, buffer = feed(CacheRatios(60), "pool-of-threads", [(0, 0, 0, 5, 100), (1, 0, 0, 5, 100)])
    assert buffer.value is None
    assert buffer.note == "no buffer pool reads in the window"
