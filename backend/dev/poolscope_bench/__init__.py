"""Poolscope's own benchmark: what monitoring costs the server, and how fast the store answers.

``python -m poolscope_bench`` (``make bench``) starts a private MariaDB sandbox (thread pool on,
thread_pool_size = CPU count, extra_port, exact stats) in a temp dir and prints one report whose
comparisons are all measured side by side in the same run (this machine is small and noisy):

1. sysbench TPS with Poolscope polling every 1 s and writing to a SQLite store, ÷ TPS without,
   in ABBA-ordered pairs; the median of the pair ratios against the 0.99 target;
2. the same ratio for Debian's prometheus-mysqld-exporter scraped every 1 s; then (2b) the CPU
   per poll and per scrape on the idle server, which the machine's noise blurs far less, and
   with ``--control`` an A/A pair set that shows how far the TPS ratios move on their own;
3. poll wall time under a 100-thread sysbench load on extra_port vs the normal port;
4. store ingest rate through SqlStore.write_poll with realistic polls;
5. time to serve a 24 h chart (and a 5 min one) through SqlStore.query.

``python -m poolscope_bench fleet`` (fleet.py, ``make bench-fleet``; also run by ``make bench``) is
one `poolscope serve` polling 10 / 100 / 300 / 1,000 targets over several sandboxes: CPU per
target-poll of its whole process tree, staleness, API latency and RSS.

See ``python -m poolscope_bench --help`` for the knobs; ``--quick`` is a smoke-test size.
"""
