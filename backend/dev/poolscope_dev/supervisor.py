"""The one process supervisor of the harness: start a process group, wait for it, stop it for good.

Every child is started as the leader of its own session (so of its own process group), with the
kernel told to SIGTERM it when the process that started it dies: a killed test, demo or bench
never leaves it behind. Stopping signals the whole group, SIGTERM then SIGKILL, and waits
(bounded) until no member is left. Used by the sandbox (mariadbd), the demo load (sysbench),
the benchmarks (mysqld_exporter) and the dev stack (poolscope_dev/stack.py).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TypeVar

_PR_SET_PDEATHSIG = 1
T = TypeVar("T")


class ProcessExited(RuntimeError):
    """A process waited on ended before it was ready."""


def die_with_parent() -> None:
    """preexec_fn: have the kernel SIGTERM this child if the process that started it dies."""
    with contextlib.suppress(Exception):  # best effort; stop() is the normal path
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)


def pid_alive(pid: int) -> bool:
    """True while `pid` runs; a zombie counts as gone."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(") ", 1)[1][:1] != "Z"
    except (OSError, IndexError):
        return True


def pid_cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def group_members(pgid: int) -> list[int]:
    """Live (non-zombie) processes of process group `pgid`, grandchildren included."""
    out: list[int] = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(") ", 1)[1].split()
        except (OSError, IndexError):
            continue  # exited while scanning
        if fields[0] != "Z" and int(fields[2]) == pgid:
            out.append(int(entry))
    return out


def stop_group(pgid: int, grace_s: float = 20.0, kill_s: float = 5.0) -> list[int]:
    """SIGTERM the group, wait up to `grace_s`, then SIGKILL; returns what is still alive (empty: clean)."""
    for sig, wait_s in ((signal.SIGTERM, grace_s), (signal.SIGKILL, kill_s)):
        if not group_members(pgid):
            return []
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, sig)
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline and group_members(pgid):
            time.sleep(0.1)
    return group_members(pgid)


def stop_pid(pid: int, grace_s: float = 30.0, kill_s: float = 10.0) -> bool:
    """SIGTERM one process, then SIGKILL after `grace_s`; True once it is gone."""
    for sig, wait_s in ((signal.SIGTERM, grace_s), (signal.SIGKILL, kill_s)):
        if not pid_alive(pid):
            return True
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, sig)
        deadline = time.monotonic() + wait_s
        while pid_alive(pid) and time.monotonic() < deadline:
            time.sleep(0.1)
    return not pid_alive(pid)


def tail(path: Path, lines: int = 15) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return f"(no log at {path})"
    return "\n".join(text.strip().splitlines()[-lines:])


@dataclass
class Child:
    """A started process group; `pid` is also its process-group id."""

    name: str
    proc: subprocess.Popen[bytes]
    log: Path | None

    @property
    def pid(self) -> int:
        return self.proc.pid

    def running(self) -> bool:
        return self.proc.poll() is None

    def stop(self, grace_s: float = 20.0) -> list[int]:
        """Stop the whole group (see stop_group); reaps the leader. Returns what is left."""
        left = stop_group(self.pid, grace_s)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=5)
        return left

    def wait_ready(
        self, what: str, check: Callable[[], T | None], timeout_s: float, every_s: float = 0.2
    ) -> T:
        """Poll `check` until it returns a value; fail at once if the process ends, or at `timeout_s`."""
        deadline = time.monotonic() + timeout_s
        last: Exception | None = None
        while time.monotonic() < deadline:
            if not self.running():
                log = f"\n{tail(self.log)}" if self.log else ""
                raise ProcessExited(f"{self.name} exited with {self.proc.returncode} before {what}{log}")
            try:
                value = check()
            except Exception as exc:  # noqa: BLE001 - a check failing is "not yet"; the last one is shown
                last, value = exc, None
            if value is not None:
                return value
            time.sleep(every_s)
        detail = f" (last error: {last})" if last else ""
        log = f"\n{tail(self.log)}" if self.log else ""
        raise TimeoutError(f"{self.name}: no {what} within {timeout_s:.0f} s{detail}{log}")


def start(
    name: str,
    argv: Sequence[str],
    *,
    log: Path | None = None,
    stdout: int | IO[bytes] | None = subprocess.DEVNULL,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    die_with_starter: bool = True,
) -> Child:
    """Start `argv` as its own process group; output appended to `log` (else to `stdout`)."""
    handle = open(log, "ab") if log is not None else None  # noqa: SIM115 - the child keeps its copy
    try:
        proc = subprocess.Popen(
            list(argv),
            stdin=subprocess.DEVNULL,
            stdout=handle if handle is not None else stdout,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=cwd,
            # Own session: a terminal's Ctrl-C reaches the starter, which stops children in order.
            start_new_session=True,
            preexec_fn=die_with_parent if die_with_starter else None,  # noqa: PLW1509
        )
    finally:
        if handle is not None:
            handle.close()
    return Child(name, proc, log)


class Supervisor:
    """Children started in order and stopped newest first; a context manager that never leaks them."""

    def __init__(self) -> None:
        self.children: list[Child] = []

    def start(self, name: str, argv: Sequence[str], **options: object) -> Child:
        child = start(name, argv, **options)  # type: ignore[arg-type]
        self.children.append(child)
        return child

    def first_exited(self) -> Child | None:
        return next((c for c in self.children if not c.running()), None)

    def stop_all(self, grace_s: float = 30.0) -> list[str]:
        """Stop every child, newest first; returns a line per child that left something running."""
        problems = []
        for child in reversed(self.children):
            left = child.stop(grace_s)
            if left:
                problems.append(f"{child.name} (pgid {child.pid}) left {left} running")
        self.children.clear()
        return problems

    def __enter__(self) -> Supervisor:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.stop_all()
