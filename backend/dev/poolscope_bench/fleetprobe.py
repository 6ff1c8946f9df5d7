"""What the fleet bench reads from a running `poolscope serve`: its API, its store and its log."""

from __future__ import annotations

import re
import sqlite3
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx

from poolscope.store.head import readable_samples_sql
from poolscope_bench.stats import summarize

OVERVIEW_PATHS = ("/api/overview",)  # measured too when the API answers one of these
API_EVERY_S = 1.0
API_TIMEOUT_S = 5.0  # a slower answer counts as a failed request (keeps the window bounded)


def count_polls(store: Path, t0: float, t1: float) -> tuple[int, int, int]:
    """(polls that reached the server, polls of a target found down, distinct targets reached)
    with a poll time in [t0, t1), from the target_up samples (1 up, 0 down): one per target-poll.
    A poll that timed out is no poll done: counting it hid that nothing was up at 1,000 targets."""
    with sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=30) as db:
        row = db.execute(
            "SELECT count(*) FILTER (WHERE s.value > 0), count(*) FILTER (WHERE s.value <= 0),"
            " count(DISTINCT r.target) FILTER (WHERE s.value > 0)"
            f" FROM {readable_samples_sql('sqlite')} s JOIN series r ON r.id = s.series_id"
            " WHERE r.metric = 'target_up' AND s.ts >= ? AND s.ts < ?",
            (t0, t1),
        ).fetchone()
    return int(row[0]), int(row[1]), int(row[2])


_STARTED = re.compile(r"started (\w+(?: \d+)?) \(pid (\d+)\)")


def child_roles(path: Path) -> dict[int, str]:
    """pid -> "api" / "poller" from the supervisor's "started api (pid N)" lines in a serve log."""
    roles: dict[int, str] = {}
    try:
        with open(path, errors="replace") as f:
            for line in f:
                if (match := _STARTED.search(line)) is not None:
                    roles[int(match[2])] = match[1].split()[0]
    except OSError:
        pass
    return roles


_EXCEPTION_LINE = re.compile(r"^([A-Za-z_][\w.]*(?:Error|Exception)): (?:\([\w.]+\) )?(.*)")


def log_problems(path: Path, top: int = 3) -> dict[str, Any]:
    """ERROR lines and the commonest exception messages in a serve log (why a size fell behind)."""
    errors, kinds = 0, Counter[str]()
    try:
        with open(path, errors="replace") as f:
            for line in f:
                errors += line.startswith("ERROR") or " ERROR " in line[:40]
                match = _EXCEPTION_LINE.match(line)
                if match:
                    kinds[f"{match[1].rsplit('.', 1)[-1]}: {match[2].split(' (Background')[0][:90]}"] += 1
    except OSError:
        return {"error_lines": None, "exceptions": []}
    return {"error_lines": errors, "exceptions": kinds.most_common(top)}


class ApiProbe:
    """Sequential GETs against one `poolscope serve`: latency, and staleness from /api/targets."""

    def __init__(self, base: str, started_at: float, store: Path, n: int) -> None:
        self.store = store
        self.n = n
        self.client = httpx.Client(base_url=base, timeout=API_TIMEOUT_S)
        self.started_at = started_at
        self.overview: str | None = None

    def close(self) -> None:
        self.client.close()

    def targets(self) -> tuple[list[dict[str, Any]], float]:
        t = time.perf_counter()
        res = self.client.get("/api/targets")
        ms = (time.perf_counter() - t) * 1000
        res.raise_for_status()
        return res.json(), ms

    def find_overview(self) -> None:
        for path in OVERVIEW_PATHS:
            try:
                if self.client.get(path).status_code == 200:
                    self.overview = path
                    return
            except httpx.HTTPError:
                pass

    def store_sample(self, now: float) -> tuple[list[float], int] | None:
        """now - last_success_at of every target (the age of what the UI shows: a poll that timed
        out brings nothing new; a target never reached counts from the server's start), and how
        many are not up, from the store's latest rows: the rows /api/targets answers from, read
        outside the measured processes. None when the store could not be read."""
        try:
            with sqlite3.connect(f"file:{self.store}?mode=ro", uri=True, timeout=2) as db:
                rows = db.execute(
                    "SELECT status, json_extract(info, '$.last_success_at') FROM target_latest"
                ).fetchall()
        except sqlite3.Error:
            return None
        stale = [now - (ts if ts is not None else self.started_at) for _, ts in rows]
        missing = max(self.n - len(rows), 0)
        return stale + [now - self.started_at] * missing, missing + sum(1 for s, _ in rows if s != "up")

    def sample(self, until: float) -> dict[str, Any]:
        """Every second: staleness from the store; one API request, /api/targets and the overview
        taking turns (each every 2 s, as an open UI asks). The API process is measured with the
        pollers, so the bench asks no more than one UI would (it asked twice a second before)."""
        targets_ms: list[float] = []
        overview_ms: list[float] = []
        stale: list[float] = []
        not_up: list[int] = []
        errors = store_misses = 0
        tick = 0
        next_at = time.monotonic()
        while time.monotonic() < until:
            read = self.store_sample(time.time())
            if read is None:
                store_misses += 1
            else:
                stale += read[0]
                not_up.append(read[1])
            try:
                if tick % 2 == 1 and self.overview:
                    t = time.perf_counter()
                    self.client.get(self.overview).raise_for_status()
                    overview_ms.append((time.perf_counter() - t) * 1000)
                else:
                    targets_ms.append(self.targets()[1])
            except httpx.HTTPError:
                errors += 1
            tick += 1
            next_at += API_EVERY_S
            time.sleep(max(0.0, min(next_at, until) - time.monotonic()))
        return {
            "targets_ms": summarize(targets_ms, 1),
            "overview_path": self.overview,
            "overview_ms": summarize(overview_ms, 1) if self.overview else None,
            "errors": errors,
            "timeout_s": API_TIMEOUT_S,
            "staleness_s": summarize(stale, 2),
            "store_misses": store_misses,
            "not_up_max": max(not_up, default=None),
            "not_up_last": not_up[-1] if not_up else None,
        }
