"""``python -m poolscope_bench.snapshotbench``: what a snapshot import, report and archive cost, and how
long each holds up the backend's event loop (the one that polls the targets).

A real backend process (``poolscope serve``, SQLite store, no target) gets synthetic snapshots of
the sizes asked for; a probe thread asks ``/api/health`` every 20 ms meanwhile. A health answer
slower than a few ms means the loop was busy with something else: its slowest answer during an
operation is how long that operation blocked the loop. What it decided:
docs/decisions/0005-snapshot-work-in-worker-processes.md.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx

import poolscope
from poolscope.snapshots.report import CHARTS
from poolscope_dev.sandbox import free_port

PASSWORD_ENV = "POOLSCOPE_BENCH_PASSWORD"
PROBE_EVERY_S = 0.02


def synthetic_document(series: int, points: int, now: float | None = None) -> dict[str, Any]:
    """A valid snapshot document (as JSON data) of `series` x `points`, on the metrics the report
    charts, one point a second ending at `now`."""
    now = time.time() if now is None else now
    metrics = [m for _, names in CHARTS for m in names]
    start = now - points
    return {
        "format": "poolscope-snapshot",
        "schema_version": 1,
        "poolscope_version": poolscope.__version__,
        "title": f"synthetic: {series} series x {points} points",
        "target": "db1",
        "trigger": "manual",
        "created_at": now,
        "moment_ts": start + points * 0.75,
        "window": {
            "from": start,
            "to": now,
            "before_s": points * 0.75,
            "after_s": points * 0.25,
            "complete": True,
        },
        "target_info": {"name": "db1", "poll_interval_s": 1.0},
        "state": {"target": "db1", "ts": start + points * 0.75, "status": "up"},
        "series": [
            {
                "metric": metrics[i % len(metrics)],
                "labels": {"group": str(i // len(metrics))},
                "points": [[start + j, float((i * 7 + j) % 13)] for j in range(points)],
            }
            for i in range(series)
        ],
    }


class Probe:
    """Asks /api/health every PROBE_EVERY_S in a thread; keeps (sent at, latency)."""

    def __init__(self, base_url: str) -> None:
        self.samples: list[tuple[float, float]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(base_url,), daemon=True)
        self._thread.start()

    def _run(self, base_url: str) -> None:
        with httpx.Client(base_url=base_url, timeout=120) as client:
            while not self._stop.wait(PROBE_EVERY_S):
                sent = time.monotonic()
                client.get("/api/health").raise_for_status()
                self.samples.append((sent, time.monotonic() - sent))

    def worst_between(self, t0: float, t1: float) -> float:
        """The slowest answer to a probe that was waiting at some time in [t0, t1]."""
        # A probe sent during the operation may be answered only after it: wait for a later one.
        for _ in range(500):
            if any(sent > t1 for sent, _ in self.samples[-5:]):
                break
            time.sleep(PROBE_EVERY_S)
        return max((lat for sent, lat in self.samples if t0 <= sent + lat and sent <= t1), default=0.0)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=130)


@contextlib.contextmanager
def backend(workdir: Path) -> Iterator[str]:
    """`poolscope serve` of the poolscope package this module belongs to, on 127.0.0.1."""
    port = free_port()
    config = workdir / "poolscope.toml"
    config.write_text(
        f'store_url = "sqlite+aiosqlite:///{workdir / "store.db"}"\n'
        "[snapshots]\nimport_max_mb = 64\nmax_count = 1000\nmax_total_mb = 100000\n"
        f'[[users]]\nname = "bench"\nrole = "operator"\npassword_env = "{PASSWORD_ENV}"\n'
    )
    source = Path(poolscope.__file__).resolve().parents[1]
    process = subprocess.Popen(
        [sys.executable, "-m", "poolscope.cli", "--config", str(config), "serve", "--host", "127.0.0.1"]
        + ["--port", str(port)],
        cwd=source,
        env={**os.environ, PASSWORD_ENV: "bench-password"},
        stdout=subprocess.DEVNULL,
        stderr=(workdir / "backend.log").open("w"),
    )
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            with contextlib.suppress(httpx.TransportError):
                if httpx.get(f"{base}/api/health", timeout=2).is_success:
                    break
            if process.poll() is not None:
                raise RuntimeError(f"the backend exited: see {workdir / 'backend.log'}")
            time.sleep(0.1)
        else:
            raise RuntimeError("the backend never answered")
        yield base
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


def _login(client: httpx.Client) -> dict[str, str]:
    answer = client.post("/api/auth/login", json={"username": "bench", "password": "bench-password"})
    answer.raise_for_status()
    return {"Authorization": f"Bearer {answer.json()['token']}"}


def measure(base: str, series: int, points: int) -> dict[str, Any]:
    body = json.dumps(synthetic_document(series, points)).encode()
    out: dict[str, Any] = {"series": series, "points": points, "mb": round(len(body) / 1e6, 1)}
    probe = Probe(base)
    try:
        with httpx.Client(base_url=base, timeout=600) as client:
            headers = _login(client)
            steps = [
                ("import", "POST", "/api/snapshots/import"),
                ("report", "GET", "/api/snapshots/{id}/report.html"),
                ("report_again", "GET", "/api/snapshots/{id}/report.html"),
                ("archive", "GET", "/api/snapshots/{id}/archive"),
            ]
            snapshot_id = None
            for name, method, path in steps:
                time.sleep(0.3)  # a quiet moment between steps, so the probe sees each alone
                t0 = time.monotonic()
                response = client.request(
                    method,
                    path.format(id=snapshot_id),
                    content=body if method == "POST" else None,
                    headers=headers,
                )
                t1 = time.monotonic()
                response.raise_for_status()
                if name == "import":
                    snapshot_id = response.json()["id"]
                out[name] = {
                    "wall_s": round(t1 - t0, 2),
                    "loop_blocked_s": round(probe.worst_between(t0, t1), 2),
                }
    finally:
        probe.close()
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m poolscope_bench.snapshotbench", description=__doc__)
    p.add_argument(
        "--size",
        action="append",
        metavar="SERIESxPOINTS",
        help="a snapshot size to measure (repeatable; default: 150x1200 (~4 MB) and 500x2000, "
        "the default import limit of 1e6 points)",
    )
    p.add_argument("--json", type=Path, metavar="FILE", help="also write the results as JSON to FILE")
    args = p.parse_args(argv)
    sizes = [tuple(int(n) for n in s.lower().split("x")) for s in args.size or ["150x1200", "500x2000"]]
    results = []
    with tempfile.TemporaryDirectory(prefix="poolscope-snapbench-") as tmp, backend(Path(tmp)) as base:
        for series, points in sizes:
            print(f"measuring {series} series x {points} points ...", file=sys.stderr)
            results.append(measure(base, series, points))
    print(f"{'size':>14} {'MB':>5}  {'step':<13} {'wall s':>7} {'loop blocked s':>15}")
    for r in results:
        for step in ("import", "report", "report_again", "archive"):
            size = f"{r['series']}x{r['points']}"
            print(
                f"{size:>14} {r['mb']:>5}  {step:<13} {r[step]['wall_s']:>7} {r[step]['loop_blocked_s']:>15}"
            )
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
