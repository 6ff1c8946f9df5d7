"""`poolscope serve`: a small supervisor with no event loop and no threads that forks one API
process (uvicorn, role "api") and `workers` poller processes (role "poller"), and keeps them up.

Fork, not exec: whatever the parent registered in-process (the fixture:// DSN scheme of the
replay harness, for one) reaches every child. A child that dies is forked again after a pause
that doubles while it keeps dying young (bounded by MAX_BACKOFF_S). SIGTERM or SIGINT is passed
to every child; the supervisor waits for them (SIGKILL after STOP_TIMEOUT_S) and leaves none.
Each child asks the kernel for SIGTERM when the supervisor dies, so a killed supervisor leaves
nothing either.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass

log = logging.getLogger(__name__)

PR_SET_PDEATHSIG = 1
MIN_BACKOFF_S = 0.5
MAX_BACKOFF_S = 30.0
# A child that lived this long is healthy again: its next restart waits MIN_BACKOFF_S.
HEALTHY_AFTER_S = 30.0
STOP_TIMEOUT_S = 15.0
TICK_S = 0.2


@dataclass
class Slot:
    """One child the supervisor keeps running: what it runs and how it has been dying."""

    name: str
    run: Callable[[], None]
    pid: int | None = None
    started_at: float = 0.0
    failures: int = 0
    restart_at: float = 0.0


def _die_with(parent: int) -> None:
    """In a child: SIGTERM when the supervisor dies (and exit now if it already has)."""
    with contextlib.suppress(Exception):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    if os.getppid() != parent:
        os._exit(0)


def _fork(slot: Slot) -> None:
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:  # the child: run the slot, never return into the supervisor's code
        code = 0
        try:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            _die_with(parent)
            slot.run()
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
        except BaseException:
            log.exception("%s failed", slot.name)
            code = 1
        finally:
            logging.shutdown()
            os._exit(code)
    slot.pid, slot.started_at = pid, time.monotonic()
    log.info("started %s (pid %d)", slot.name, pid)


class Supervisor:
    def __init__(self, slots: list[Slot]) -> None:
        self.slots = slots
        self._stopping = False

    def _on_signal(self, signum: int, _frame: object) -> None:
        self._stopping = True

    def run(self) -> int:
        """Fork every slot, keep them running until SIGTERM/SIGINT, then stop them all."""
        previous = {s: signal.signal(s, self._on_signal) for s in (signal.SIGTERM, signal.SIGINT)}
        try:
            for slot in self.slots:
                _fork(slot)
            while not self._stopping:
                self._reap()
                now = time.monotonic()
                for slot in self.slots:
                    if slot.pid is None and now >= slot.restart_at and not self._stopping:
                        _fork(slot)
                time.sleep(TICK_S)
        finally:
            self._stop_all()
            for signum, handler in previous.items():
                signal.signal(signum, handler)
        return 0

    def _reap(self) -> None:
        for slot in self.slots:
            if slot.pid is None:
                continue
            pid, status = os.waitpid(slot.pid, os.WNOHANG)
            if pid == 0:
                continue
            lived = time.monotonic() - slot.started_at
            slot.failures = 0 if lived >= HEALTHY_AFTER_S else slot.failures + 1
            delay = min(MIN_BACKOFF_S * 2 ** max(slot.failures - 1, 0), MAX_BACKOFF_S)
            slot.pid, slot.restart_at = None, time.monotonic() + delay
            log.warning(
                "%s (pid %d) exited (%s) after %.1f s; restarting in %.1f s",
                slot.name,
                pid,
                _describe(status),
                lived,
                delay,
            )

    def _stop_all(self) -> None:
        running = [s for s in self.slots if s.pid is not None]
        for slot in running:
            with contextlib.suppress(ProcessLookupError):
                os.kill(slot.pid, signal.SIGTERM)  # type: ignore[arg-type]
        deadline = time.monotonic() + STOP_TIMEOUT_S
        while running and time.monotonic() < deadline:
            running = [s for s in running if os.waitpid(s.pid, os.WNOHANG)[0] == 0]  # type: ignore[arg-type]
            if running:
                time.sleep(0.05)
        for slot in running:
            log.warning("%s (pid %s) did not stop in %g s: killing it", slot.name, slot.pid, STOP_TIMEOUT_S)
            with contextlib.suppress(ProcessLookupError):
                os.kill(slot.pid, signal.SIGKILL)  # type: ignore[arg-type]
            with contextlib.suppress(ChildProcessError):
                os.waitpid(slot.pid, 0)  # type: ignore[arg-type]
        for slot in self.slots:
            slot.pid = None


def _describe(status: int) -> str:
    if os.WIFSIGNALED(status):
        return f"signal {os.WTERMSIG(status)}"
    return f"code {os.waitstatus_to_exitcode(status)}"
