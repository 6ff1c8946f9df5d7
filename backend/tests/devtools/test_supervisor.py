"""The harness's one process supervisor: groups stopped whole, SIGKILL after the grace, bounded waits."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from poolscope_dev import supervisor
from poolscope_dev.supervisor import ProcessExited, Supervisor, group_members, pid_alive
from tests.waiting import wait_for


def test_stop_takes_the_whole_group_grandchildren_too(tmp_path: Path) -> None:
    child = supervisor.start("sh", ["sh", "-c", "sleep 300 & sleep 300 & wait"], log=tmp_path / "log")
    members = wait_for(
        lambda: group_members(child.pid),
        10,
        "the grandchildren never started",
        every_s=0.05,
        until=lambda m: len(m) >= 3,
    )
    assert len(members) == 3 and child.pid in members
    assert child.stop(grace_s=5) == []
    assert not any(pid_alive(p) for p in members)


def test_a_process_ignoring_sigterm_is_killed_after_the_grace(tmp_path: Path) -> None:
    code = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print('up', flush=True); time.sleep(300)"
    child = supervisor.start("stubborn", [sys.executable, "-c", code], log=tmp_path / "log")
    child.wait_ready("its first line", lambda: "up" in (tmp_path / "log").read_text() or None, 30)
    started = time.monotonic()
    assert child.stop(grace_s=1) == []
    assert 1 <= time.monotonic() - started < 10
    assert child.proc.returncode == -9


def test_wait_ready_fails_at_once_when_the_process_ends(tmp_path: Path) -> None:
    child = supervisor.start("quitter", ["sh", "-c", "echo bye from the log; exit 3"], log=tmp_path / "log")
    started = time.monotonic()
    with pytest.raises(ProcessExited, match="(?s)exited with 3.*bye from the log"):
        child.wait_ready("never", lambda: None, 60)
    assert time.monotonic() - started < 10


def test_wait_ready_is_bounded(tmp_path: Path) -> None:
    with Supervisor() as group:
        child = group.start("sleeper", ["sleep", "300"], log=tmp_path / "log")
        with pytest.raises(TimeoutError, match="no readiness within 1 s"):
            child.wait_ready("readiness", lambda: None, 1)
    assert not pid_alive(child.pid)
