"""The fleet part's printed table: every size beside the same run's smallest size and mysqld_exporter."""

from __future__ import annotations

from typing import Any


def _num(value: float | None, digits: int) -> str:
    return "n/a" if value is None else f"{value:,.{digits}f}"


def _vs(value: float | None, base: float | None, digits: int) -> str:
    """`value (x ratio to base)`; the ratio is left out where either side is missing or zero."""
    text = _num(value, digits)
    if value is None or not base:
        return text
    return f"{text} ({value / base:.1f}x)"


def render(results: dict[str, Any]) -> str:
    meta = results["meta"]
    runs = results["runs"]
    exporter = results["exporter"]
    base = runs[0] if runs else {}
    exp_ms = exporter.get("helper_cpu_ms_per_op")
    load_before = ", ".join(f"{x:.1f}" for x in meta["load_average_before"])
    load_after = ", ".join(f"{x:.1f}" for x in meta["load_average_after"])
    out = [
        "=" * 100,
        f"Poolscope fleet bench  {meta['started_at']}: one `poolscope serve` (default settings), targets polled every"
        " 1 s, spread over MariaDB sandboxes",
        f"window {meta['config']['seconds']:g} s per size after a {meta['config']['warmup_s']:g} s warm-up;"
        f" host CPUs {meta['host_cpus']}; Python {meta.get('python', '?')}; load average (1/5/15 min) {load_before} before, {load_after} after;"
        f" total time {meta['elapsed_s']:.0f} s",
        f"(x) = ratio to the {base.get('targets', '?')}-target run of this same bench run",
        "=" * 100,
    ]
    head = (
        f"{'targets':>7} {'procs':>5} {'CPU cores':>12} {'ms/target-poll':>15} {'polls done':>14}"
        f" {'staleness p50/p95/max s':>24} {'not up':>6} {'/api/targets p95':>17} {'RSS MB':>14} {'MariaDB cores':>13}"
    )
    out += [head, "-" * len(head)]
    for run in runs:
        api = run["api"]
        st = api["staleness_s"]
        stale = f"{_num(st.get('p50'), 2)} / {_num(st.get('p95'), 2)} / {_num(st.get('max'), 2)}"
        polls = f"{run['polls']}/{run['polls_expected']}"
        out.append(
            f"{run['targets']:>7} {run['processes']:>5} {_vs(run['cpu_cores'], base.get('cpu_cores'), 2):>12}"
            f" {_vs(run['cpu_ms_per_poll'], base.get('cpu_ms_per_poll'), 2):>15} {polls:>14} {stale:>24}"
            f" {_num(api['not_up_max'], 0):>6}"
            f" {_vs(api['targets_ms'].get('p95'), base['api']['targets_ms'].get('p95'), 1) + ' ms':>17}"
            f" {_vs(run['rss_mb'], base.get('rss_mb'), 0):>14} {_num(run['mariadb_cpu_cores'], 2):>13}"
        )
    out.append("")
    if "skipped" in exporter:
        out.append(f"mysqld_exporter: skipped ({exporter['skipped']})")
    else:
        out.append(
            f"mysqld_exporter ({exporter.get('version')}): {_num(exp_ms, 2)} ms of its own CPU per scrape of one"
            f" idle sandbox (+ {_num(exporter.get('server_cpu_ms_per_op'), 2)} ms in the server), over"
            f" {exporter.get('ops')} scrapes; one exporter process per server"
        )
        for run in runs:
            ms = run["cpu_ms_per_poll"]
            if ms is not None and exp_ms:
                out.append(
                    f"   {run['targets']:>5} targets: Poolscope {ms:.2f} ms per target-poll = {ms / exp_ms:.1f}x"
                    " mysqld_exporter's CPU per scrape"
                )
    out.append("")
    for run in runs:
        api = run["api"]
        notes = [f"every target first polled after {_num(run['first_poll_s'], 1)} s"]
        notes.append(f"{run['targets_polled']}/{run['targets']} targets reached in the window")
        if run.get("down_polls"):
            notes.append(f"{run['down_polls']} polls found their target down (not counted as done)")
        if roles := run.get("cpu_cores_by_role"):
            split = ", ".join(f"{role} {cores:.2f}" for role, cores in sorted(roles.items()))
            notes.append(
                f"cores by process: {split}; pollers {_num(run.get('poller_cpu_ms_per_poll'), 2)} ms/target-poll"
            )
        if api["overview_path"]:
            notes.append(f"{api['overview_path']} p95 {_num(api['overview_ms'].get('p95'), 1)} ms")
        if api["errors"]:
            notes.append(f"{api['errors']} API requests failed")
        if api["errors"]:
            notes[-1] += f" (or over {api['timeout_s']:g} s)"
        if api.get("store_misses"):
            notes.append(f"the store could not be read for staleness in {api['store_misses']} seconds")
        notes.append(
            f"/api/targets p50 {_num(api['targets_ms'].get('p50'), 1)} ms over {api['targets_ms'].get('n', 0)}"
        )
        out.append(f"{run['targets']:>7} targets: " + "; ".join(notes))
        problems = run["serve_log"]
        if problems["error_lines"] or problems["exceptions"]:
            kinds = "; ".join(f"{count} lines {text}" for text, count in problems["exceptions"])
            out.append(f"{'':>7}   serve log: {problems['error_lines']} ERROR lines; {kinds}")
    out.append(
        "CPU = utime+stime of the whole poolscope process tree (supervisor and every child) in the window;"
        " MariaDB cores = the sandboxes' CPU, separate; polls done = polls that reached their server, counted in the store (target_up = 1);"
        " staleness = age of each target's last successful poll, read from the store every 1 s;"
        " the API is asked once a second (/api/targets and the overview taking turns)."
    )
    out.append("=" * 100)
    return "\n".join(out)
