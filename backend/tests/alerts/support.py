"""Test helpers for incidents: webhook receivers on loopback, an SSE reader, a served app, an incident load."""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx

from poolscope_dev.sandbox import SBTEST_USER, MariaDBSandbox
from tests.poller.helpers import calibrate_benchmark


class Receiver:
    """A webhook receiver on 127.0.0.1 that records every POSTed JSON body.

    `hold` (when given) blocks each request until set: a receiver that hangs.
    """

    def __init__(self, hold: threading.Event | None = None) -> None:
        self.bodies: list[dict[str, Any]] = []
        self.hold = hold
        self.in_flight = 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                outer.in_flight += 1
                try:
                    length = int(self.headers.get("Content-Length") or 0)
                    body = json.loads(self.rfile.read(length))
                    if outer.hold is not None:
                        # Longer than any test waits: only the test (or close()) releases it.
                        outer.hold.wait(timeout=900)
                    outer.bodies.append(body)
                    self.send_response(200)
                    self.end_headers()
                    self.wfile.write(b"ok")
                finally:
                    outer.in_flight -= 1

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        if self.hold is not None:
            self.hold.set()
        self.server.shutdown()
        self.server.server_close()


class SseReader:
    """Reads /api/live in a thread and keeps (arrival time, event name, parsed data)."""

    def __init__(self, base_url: str, query: str = "", headers: dict[str, str] | None = None) -> None:
        self.headers = headers or {}  # a session: with users configured the channel needs a login
        self.events: list[tuple[float, str, dict[str, Any]]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(base_url, query), daemon=True)
        self._thread.start()

    def _run(self, base_url: str, query: str) -> None:
        with contextlib.suppress(httpx.HTTPError):  # the server goes away at the end of the test
            self._read(base_url, query)

    def _read(self, base_url: str, query: str) -> None:
        with (
            httpx.Client(
                base_url=base_url, timeout=httpx.Timeout(10, read=30), headers=self.headers
            ) as client,
            client.stream("GET", f"/api/live{query}") as response,
        ):
            name = None
            for line in response.iter_lines():
                if self._stop.is_set():
                    return
                if line.startswith("event: "):
                    name = line[7:]
                elif line.startswith("data: ") and name:
                    self.events.append((time.time(), name, json.loads(line[6:])))
                    name = None

    def of(self, name: str) -> list[dict[str, Any]]:
        return [data for _, kind, data in self.events if kind == name]

    def close(self) -> None:
        self._stop.set()


MARKER = "poolscope-incident"


@contextmanager
def incident_load(
    sandbox: MariaDBSandbox, connections: int = 8, seconds: float = 2.5, rounds: int = 3
) -> Iterator[None]:
    """The stall recipe (more CPU-bound statements than a small pool has threads) with named SQL.

    Each connection first runs a visible `SELECT SLEEP(1.2) /* poolscope-incident warmup N */`, so
    Poolscope has seen what it ran before it queues (a queued request has no SQL yet: the server reads it only when a worker dequeues it);
    then CPU-bound statements of ~`seconds`. The caller shrinks the pool to make them stall. The
    stall ends with the block: the statements still running or queued are killed, not waited for.
    """
    loops = calibrate_benchmark(sandbox, seconds)
    conns = [sandbox.connect(SBTEST_USER) for _ in range(connections)]
    warmed = threading.Barrier(connections + 1, timeout=60)
    go = threading.Event()

    def run(index: int) -> None:
        try:
            with conns[index].cursor() as cur:
                cur.execute(f"SELECT SLEEP(1.2) /* {MARKER} warmup {index} */")
                warmed.wait()
                go.wait(timeout=60)
                for _ in range(rounds):
                    cur.execute(f"SELECT BENCHMARK({loops}, MD5('x')) /* {MARKER} {index} */")
        except Exception:
            pass  # best effort: a broken barrier or a killed connection ends this worker

    threads = [threading.Thread(target=run, args=(i,), daemon=True) for i in range(connections)]
    for thread in threads:
        thread.start()
    try:
        warmed.wait()
        go.set()
        yield
    finally:
        go.set()
        killer = sandbox.admin_connect()
        try:
            with killer.cursor() as cur:
                for conn in conns:
                    with contextlib.suppress(Exception):
                        cur.execute(f"KILL CONNECTION {conn.thread_id()}")
        finally:
            killer.close()
        for thread in threads:
            thread.join(timeout=seconds * rounds * connections + 30)
        for conn in conns:
            with contextlib.suppress(Exception):
                conn.close()
