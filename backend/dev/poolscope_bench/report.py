"""The printed report: one block per part, every comparison from the same run."""

from __future__ import annotations

from typing import Any


def _server_figures(part: dict[str, Any]) -> str:
    """PostgreSQL's side of an ingest figure (ingestbench.py); nothing on SQLite."""
    server = part.get("server_us_per_sample")
    if server is None:
        return ""
    flight = part.get("batches_in_flight")
    busiest = part.get("server_busiest_cores") or []
    return (
        f"; server {_f(server, 2)} µs per sample, WAL {_f(part.get('wal_bytes_per_sample'), 0)} B"
        + (f"; {flight} batch(es) in flight" if flight else "")
        + (
            f", busiest server processes {' / '.join(f'{c:.2f}' for c in busiest[:2])} cores"
            if busiest
            else ""
        )
    )


def _f(value: Any, digits: int = 1, unit: str = "") -> str:
    if value is None:
        return "n/a"
    if isinstance(value, float | int):
        return f"{value:,.{digits}f}{unit}"
    return str(value)


def _verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def _ratio_block(title: str, part: dict[str, Any], monitor_line: str) -> list[str]:
    lines = [title]
    if "skipped" in part:
        return [*lines, f"   skipped: {part['skipped']}"]
    lines.append(
        f"   sysbench {part['test']}, {part['threads']} threads, {part['run_s']} s per run; "
        "A = no monitor, B = monitor every 1 s"
    )
    for i, pair in enumerate(part["pairs"], start=1):
        lines.append(
            f"   pair {i} ({' then '.join(pair['order'])}): A {_f(pair['a_tps'])} tps, "
            f"B {_f(pair['b_tps'])} tps  ->  B/A {pair['ratio']:.4f}"
        )
    lines.append(
        f"   median of ratios {_f(part['median_ratio'], 4)}  (min {_f(part['min_ratio'], 4)}, "
        f"max {_f(part['max_ratio'], 4)})"
    )
    lines.append(monitor_line)
    if part.get("a_tps_cv_pct") is not None:
        lines.append(
            f"   noise: the A runs alone ranged {_f(part['a_tps_min'])}-{_f(part['a_tps_max'])} tps"
            f" (CV {part['a_tps_cv_pct']} %); host 1-min load average {part['host_load_min']}-"
            f"{part['host_load_max']} as runs started"
        )
    lines.append(
        f"   TPS ratio >= {part['target']}: {_verdict(part['pass'])}  (informational; run-to-run noise here is"
        " several %: trust the median, not a single pair)"
    )
    return lines


def render(results: dict[str, Any]) -> str:
    meta = results["meta"]
    server = meta.get("server") or {}
    sandbox = meta.get("sandbox") or {}
    cfg = meta["config"]
    out = [
        "=" * 78,
        f"Poolscope bench  {meta['started_at']}{'  (QUICK: smoke-test sizes, not a measurement)' if meta['quick'] else ''}",
        f"server: MariaDB {server.get('version', '?')} sandbox on 127.0.0.1:{sandbox.get('port')}, "
        f"extra_port {sandbox.get('extra_port')}, thread_pool_size={sandbox.get('thread_pool_size')}, "
        f"exact_stats={'ON' if sandbox.get('exact_stats') else 'OFF'}; host CPUs {meta['host_cpus']}",
        f"total time {_f(meta.get('elapsed_s'))} s",
        "=" * 78,
    ]

    part = results.get("overhead_poolscope", {})
    mon = part.get("monitor", {})
    out += _ratio_block(
        "1. Sysbench TPS with Poolscope polling every 1 s ÷ without (B = Scheduler + TargetPoller + SQLite store)",
        part,
        f"   Poolscope in B: {mon.get('polls', 0)} polls on {mon.get('port_kind')}, {mon.get('failed_polls', 0)} failed;"
        f" poll wall p50 per run {mon.get('poll_ms_p50_per_run')} ms, max {_f(mon.get('poll_ms_max'))} ms;"
        f" bench process CPU {_f(mon.get('client_cpu_ms_per_poll'), 2)} ms per poll (poll + parse + store write)",
    )
    out.append("")
    part = results.get("overhead_exporter", {})
    mon = part.get("monitor", {})
    out += _ratio_block(
        f"2. Same ratio for prometheus-mysqld-exporter scraped every 1 s ({part.get('exporter_version', 'n/a')}, normal port)",
        part,
        f"   exporter in B: {mon.get('scrapes', 0)} scrapes, {mon.get('failed_scrapes', 0)} failed; scrape p50 per run"
        f" {mon.get('scrape_ms_p50_per_run')} ms, max {_f(mon.get('scrape_ms_max'))} ms; {_f(mon.get('bytes_per_scrape'), 0)} bytes;"
        f" exporter CPU {_f(mon.get('exporter_cpu_ms_per_scrape'), 2)} ms + scraper CPU"
        f" {_f(mon.get('client_cpu_ms_per_scrape'), 2)} ms per scrape",
    )
    a = results.get("overhead_poolscope", {}).get("median_ratio")
    b = results.get("overhead_exporter", {}).get("median_ratio")
    if a is not None and b is not None:
        out.append(
            f"   side by side: Poolscope {a:.4f} vs mysqld_exporter {b:.4f} (median TPS ratio; 1.0 = free)"
        )
    control = results.get("overhead_control", {})
    if "pairs" not in control and "pairs" in results.get("overhead_poolscope", {}):
        out.append("   (--control adds an A/A run of the same pairs: the noise floor these ratios sit in)")
    if "pairs" in control:
        out.append(
            f"   A/A control (no monitor in A or B, same pairs): median {_f(control['median_ratio'], 4)}"
            f" (min {_f(control['min_ratio'], 4)}, max {_f(control['max_ratio'], 4)}): the noise floor of these ratios"
        )
    out.append("")

    idle = results.get("idle_cost", {})
    out.append(
        "2b. CPU per operation on the idle server (CPU seconds: far less blurred by the machine's noise than TPS)"
    )
    if "skipped" in idle:
        out.append(f"   skipped: {idle['skipped']}")
    else:
        rows = (
            ("Poolscope poll + store write", idle.get("poolscope"), "client_cpu_ms_per_op", None),
            ("mysqld_exporter scrape", idle.get("exporter"), "helper_cpu_ms_per_op", "client_cpu_ms_per_op"),
        )
        for label, part, own, scraper in rows:
            if not part:
                out.append(f"   {label:<30} not run")
                continue
            text = (
                f"   {label:<30} server {_f(part['server_cpu_ms_per_op'], 2)} ms"
                f" + monitor {_f(part[own], 2)} ms"
            )
            if scraper:
                text += f" + scraper {_f(part[scraper], 2)} ms (HTTP GET only, no parsing)"
            text += (
                f"; wall p50 {_f(part['wall_ms'].get('p50'), 1)} ms over {part['ops']} ({part['port_kind']})"
            )
            out.append(text)
    out.append("")

    part = results.get("poll_time", {})
    out.append("3. Poll wall time (TargetPoller.poll_once), extra_port vs normal port, interleaved")
    if "skipped" in part:
        out.append(f"   skipped: {part['skipped']}")
    else:
        out.append(f"   {'':<30}{'n':>4}{'p50 ms':>9}{'p95 ms':>9}{'max ms':>9}{'cpu p50':>9}   connection")
        for phase, label in (("idle", "idle"), ("loaded", f"{part['load_threads']} thr")):
            for key, name in (("extra", "extra_port"), ("port", "normal port")):
                s = part[phase][key]
                extra = ""
                if phase == "loaded" and "queue_length_mean" in s:
                    extra = f"; mean queue {s['queue_length_mean']}, Threads_running {s.get('threads_running_mean')}"
                out.append(
                    f"   {'poll, ' + label + ', ' + name:<30}{s.get('n', 0):>4}{_f(s.get('p50'), 2):>9}"
                    f"{_f(s.get('p95'), 2):>9}{_f(s.get('max'), 2):>9}{_f(s['client_cpu_ms'].get('p50'), 2):>9}"
                    f"   {s.get('port_kind')}:{s.get('port')}, failed {s.get('failed_polls')}{extra}"
                )
            pings = part.get(f"select1_{phase}", {})
            for key, name in (("extra", "extra_port"), ("port", "normal port")):
                s = pings.get(key, {})
                out.append(
                    f"   {'SELECT 1, ' + label + ', ' + name:<30}{s.get('n', 0):>4}{_f(s.get('p50'), 2):>9}"
                    f"{_f(s.get('p95'), 2):>9}{_f(s.get('max'), 2):>9}{'':>9}   round-trip floor"
                )
        out.append(
            "   (cpu = the poller's own CPU per poll in the bench process; wall - cpu ≈ server + scheduling)"
        )
        out.append("   where an extra_port poll's time goes, p50 / p95 ms:")
        for phase, label in (("idle", "idle"), ("loaded", f"{part['load_threads']} thr")):
            lane = part[phase]["extra"]
            clock = part.get(f"server_clock_{phase}") or {}
            out.append(
                f"     {label + ':':<9}server elapsed for the {clock.get('statements', '?')} every-second statements"
                f" {_f(clock.get('p50'), 1)} / {_f(clock.get('p95'), 1)}"
                f"; poller CPU {_f(lane['client_cpu_ms'].get('p50'), 1)} / {_f(lane['client_cpu_ms'].get('p95'), 1)}"
                f"; poller runnable, waiting for a CPU {_f(lane.get('run_delay_ms', {}).get('p50'), 1)}"
                f" / {_f(lane.get('run_delay_ms', {}).get('p95'), 1)}"
            )
        out.append(
            f"     (server elapsed: SELECT NOW(6) before and after the same statements on a connection of their own;"
            f" host 1-min load average {_f(part.get('host_load_average'))} on {meta['host_cpus']} CPUs)"
        )
        for key, name in (("extra", "extra_port"), ("port", "normal port")):
            slow = part["loaded"][key].get("collector_p50_ms", {})
            top = ", ".join(f"{n} {ms:.1f}" for n, ms in list(slow.items())[:4])
            out.append(f"   slowest statements under load, {name} (p50 ms): {top}")
        loaded = part["loaded"]
        e, n = loaded["extra"].get("p95"), loaded["port"].get("p95")
        if e and n:
            out.append(
                f"   normal-port p95 is {n / e:.1f}x the extra_port p95 under load (load window {part['load_window_s']} s)"
            )
        note = (
            ""
            if part["enough_polls"]
            else f"  (only {loaded['extra'].get('n', 0)} polls: below 60, indicative)"
        )
        out.append(
            f"   p95 <= {part['target_p95_ms']:g} ms on extra_port under load: {_verdict(part['pass'])}{note}"
        )
    out.append("")

    parts = results.get("store_ingest", {})
    out.append("4. Store ingest: SqlStore.write_poll one poll at a time, then the scheduler's batch writer")
    for dialect in ("sqlite", "postgresql"):
        part = parts.get(dialect, {})
        if not part or "skipped" in part:
            out.append(f"   {dialect}: skipped: {part.get('skipped', 'not run')}")
            continue
        w, bt = part["write_ms"], part["batched"]
        out.append(
            f"   {dialect}: {part['polls']} polls x {part['samples_per_poll']} samples ({part['groups']} groups; captured"
            f" {'under load' if parts.get('captured_under_load') else 'idle'}, state JSON {part['state_json_bytes']:,} B)"
        )
        out.append(
            f"     write_poll: {_f(part['samples_per_s'], 0)} samples/s = {_f(part['polls_per_s'], 0)} polls/s;"
            f" p50 {_f(w.get('p50'), 2)} ms, p95 {_f(w.get('p95'), 2)} ms (first {_f(part['first_write_ms'], 1)} ms:"
            f" new series); CPU {_f(part['cpu_ms_per_write'], 2)} ms per write"
        )
        out.append(
            f"     batched ({bt['targets']} targets, {bt['polls']} polls in {bt['batches']} batches):"
            f" {_f(bt['samples_per_s'], 0)} samples/s; {_f(bt['samples_per_cpu_s'], 0)} samples per CPU-second"
            " of this process" + _server_figures(bt)
        )
        so = part.get("samples_only")
        if so:  # store/ingest.py alone: series ids + the bulk insert, no latest rows
            out.append(
                f"     samples alone ({so['polls_per_batch']} polls per transaction): {_f(so['samples_per_s'], 0)}"
                f" samples/s; {_f(so['samples_per_cpu_s'], 0)} per CPU-second of this process"
                + _server_figures(so)
                + f" (load {so['load_average'][0]})"
            )
        for par in part.get("writer_processes", []):  # pollers' writers at once: what the store takes in
            out.append(
                f"     {par['writers']} writer process(es) at once ({par['targets']} targets, tuned as pollers):"
                f" {_f(par['samples_per_s'], 0)} samples/s; {_f(par['samples_per_cpu_s'], 0)} per CPU-second of"
                " the writers" + _server_figures(par) + f" (load {par['load_average'][0]})"
            )
        size = f"; db {part['db_bytes'] / 1e6:.1f} MB" if part.get("db_bytes") else ""
        out.append(
            f"     maintain() after it: {_f(part['maintain_ms'])} ms ({part['rolled_up_rows']:,} rollup rows){size}"
        )
    out.append("")

    charts = results.get("chart", {})
    out.append(
        f"5. Serving charts through SqlStore.query (points={cfg['chart_points']}); p50 wall / CPU of this process;"
        " answer: with the endpoint's JSON"
    )
    chart_lines: dict[str, list[str]] = {}
    for dialect in ("sqlite", "postgresql"):
        part = charts.get(dialect, {})
        if not part or "skipped" in part:
            out.append(f"   {dialect}: skipped: {part.get('skipped', 'not run')}")
            continue
        size = f", {part['db_bytes'] / 1e6:.0f} MB" if part.get("db_bytes") else ""
        out.append(
            f"   {dialect}: {part['series_in_store']} series, {part['rollup_rows']:,} rollup rows ({part['hours']:g} h),"
            f" {part['raw_rows']:,} raw rows ({part['raw_hours']:g} h){size}; filled in {part['fill_s']} s;"
            f" maintain() {_f(part['maintain_ms'])} ms"
        )
        for key, label in (
            ("chart_24h", f"{part['hours']:g} h chart"),
            ("chart_5min", "5 min chart"),
            ("page_24h", f"{part['hours']:g} h, whole page"),
        ):
            q = part[key]
            chart_lines.setdefault(
                key,
                [
                    f"   {label:<18} {q['metrics']:>2} metrics -> {q['series']:>3} series x <= {q['points_per_series_max']:>3} pts"
                    f" ({q['resolution']}, step {q['step_s']:g} s):"
                ],
            )
            chart_lines[key].append(
                f" {dialect} {_f(q.get('p50_ms'), 1)} / {_f(q.get('cpu_p50_ms'), 1)} ms"
                f" (answer {_f(q.get('answer_p50_ms'), 1)} / {_f(q.get('answer_cpu_p50_ms'), 1)})"
            )
    for line in chart_lines.values():
        out.append(line[0] + ";".join(line[1:]))
    out += _holders_block(results.get("holders_cost"))
    out.append("=" * 78)
    return "\n".join(out)


def _holders_block(part: dict[str, Any] | None) -> list[str]:
    """Part 6 (holderscost.py): a poll's cost without and with the holders' sources, per state."""
    out = [
        "",
        "6. Who holds the pool: poll cost without its sources (the poll before them) and with, alternated",
    ]
    if not part:
        return out + ["   not run"]
    for state, label in (("idle", "idle"), ("queue", "queueing"), ("stall", "stall")):
        lanes = part.get(state) or {}
        cells = []
        for lane in ("without", "with"):
            r = lanes.get(lane)
            if r:
                cells.append(
                    f"{lane}: CPU p50 {_f(r['cpu_ms'].get('p50'), 2)} ms (mean {_f(r['cpu_ms'].get('mean'), 2)}),"
                    f" wall p50 {_f(r['wall_ms'].get('p50'), 1)} ms, {r['polls_with_holders']} polls with holders"
                    f" ({r['polls_stalled']} stalled)"
                )
        out.append(f"   {label:<9} " + "; ".join(cells))
    out.append(
        f"   held-time counters + flight recorder on a stalled poll: {_f(part.get('bookkeeping_us_per_poll'), 1)} µs per poll"
    )
    after, worst = part.get("recorder_after_run") or {}, part.get("recorder_worst_case") or {}
    out.append(
        f"   flight recorder after the run: {after.get('seconds_kept')} s kept, {after.get('payload_bytes')} B;"
        f" worst case (8 groups x 10 holders + 20 queued a second, 120 s): {worst.get('seconds_kept')} s kept,"
        f" {worst.get('payload_bytes')} B payload (bound {worst.get('max_bytes')} B), {worst.get('python_bytes')} B allocated"
    )
    return out
