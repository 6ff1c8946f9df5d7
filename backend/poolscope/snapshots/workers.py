"""Worker processes for the CPU-heavy snapshot work (jobs.py): import checks, reports, archives.

The backend's one event loop polls every target and feeds the live channel; a large snapshot is
seconds of CPU, which on the loop stalls both (docs/decisions/0005-snapshot-work-in-worker-processes.md). A thread would not do: a JSON
parse or a pydantic validation holds the GIL for its whole length. So the work runs in processes.

At most `work_concurrency` jobs run at once; a request waits up to `work_wait_s` for a free worker
and is then answered 503 with Retry-After. Workers exit after IDLE_EXIT_S without work, giving back
the memory a large import took; the next job starts a fresh one (about a second).
"""

from __future__ import annotations

import asyncio
import math
import multiprocessing
import multiprocessing.connection
import os
import signal
import threading
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from multiprocessing.process import BaseProcess
from typing import Any, TypeVar

from poolscope.errors import Unavailable

T = TypeVar("T")
IDLE_EXIT_S = 60.0
RETRY_AFTER_BROKEN_S = 2


def _worker_started() -> None:
    # Ctrl-C in a terminal reaches the whole process group; the backend stops its workers itself.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    parent = multiprocessing.parent_process()
    if parent is not None:
        # A backend killed outright cannot stop its workers: each ends when its parent is gone.
        threading.Thread(target=_exit_with_parent, args=(parent.sentinel,), daemon=True).start()


def _exit_with_parent(sentinel: int) -> None:
    multiprocessing.connection.wait([sentinel])
    os._exit(0)


class SnapshotWorkers:
    def __init__(self, concurrency: int, wait_s: float, idle_exit_s: float = IDLE_EXIT_S) -> None:
        self.concurrency = concurrency
        self.wait_s = wait_s
        self.idle_exit_s = idle_exit_s
        self._slots = asyncio.Semaphore(concurrency)
        self._pool: ProcessPoolExecutor | None = None
        self._running = 0
        self._idle_timer: asyncio.TimerHandle | None = None
        self.jobs_started = 0

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        """fn(*args) in a worker process; a DocumentRefused it raises comes back as it is."""
        await self._acquire()
        self._running += 1
        if self._idle_timer is not None:
            self._idle_timer.cancel()
            self._idle_timer = None
        pool = self._pool or self._start()
        self.jobs_started += 1
        try:
            return await asyncio.get_running_loop().run_in_executor(pool, fn, *args)
        except BrokenProcessPool:
            # The worker died (killed, out of memory): the pool is unusable, the next job starts anew.
            if self._pool is pool:
                self._pool = None
                pool.shutdown(wait=False, cancel_futures=True)
            raise Unavailable(
                "the snapshot worker process stopped unexpectedly (out of memory?); try again",
                retry_after_s=RETRY_AFTER_BROKEN_S,
            ) from None
        finally:
            self._running -= 1
            self._slots.release()
            if self._running == 0 and self._pool is not None:
                self._idle_timer = asyncio.get_running_loop().call_later(self.idle_exit_s, self._idle_exit)

    async def _acquire(self) -> None:
        if not self._slots.locked():
            await self._slots.acquire()
            return
        try:
            await asyncio.wait_for(self._slots.acquire(), timeout=self.wait_s)
        except TimeoutError:
            raise Unavailable(
                f"busy: {self.concurrency} snapshot import/report/archive job(s) are running and none "
                f"finished within {self.wait_s:g} s; try again shortly",
                retry_after_s=max(1, math.ceil(self.wait_s)),
            ) from None

    def _start(self) -> ProcessPoolExecutor:
        # spawn, not fork: the backend runs threads (the store's drivers, executors), and a forked
        # child could inherit one of their locks taken, for ever.
        self._pool = ProcessPoolExecutor(
            max_workers=self.concurrency,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_worker_started,
        )
        return self._pool

    def _idle_exit(self) -> None:
        self._idle_timer = None
        if self._running == 0 and self._pool is not None:
            pool, self._pool = self._pool, None
            pool.shutdown(wait=False)

    async def stop(self) -> None:
        """End the workers now: a job still running serves a request that is being cut off anyway."""
        if self._idle_timer is not None:
            self._idle_timer.cancel()
            self._idle_timer = None
        pool, self._pool = self._pool, None
        if pool is None:
            return
        processes: list[BaseProcess] = list((getattr(pool, "_processes", None) or {}).values())
        pool.shutdown(wait=False, cancel_futures=True)
        for process in processes:
            if process.is_alive():
                process.terminate()
        await asyncio.to_thread(_join, processes)


def _join(processes: list[BaseProcess]) -> None:
    for process in processes:
        process.join(timeout=10)
