"""A poller raises its open-files soft limit when its targets need more sockets than it allows
(one per target; one poller takes every target when the others die), and says so in its log.
Run in a child process: the limit is the process's own."""

from __future__ import annotations

import resource
import subprocess
import sys

import pytest

CHILD = """
import logging, resource, sys
logging.basicConfig(level=logging.INFO, stream=sys.stdout, format="%(levelname)s %(message)s")
from poolscope.fleet.worker import raise_open_files_limit
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (int(sys.argv[1]), hard))
print("now", raise_open_files_limit(int(sys.argv[2])), resource.getrlimit(resource.RLIMIT_NOFILE)[0])
"""


def run_child(soft: int, targets: int) -> str:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(soft), str(targets)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def hard_limit() -> int:
    return resource.getrlimit(resource.RLIMIT_NOFILE)[1]


@pytest.mark.skipif(not 2000 <= hard_limit() < 10**9, reason="needs a finite hard limit of 2,000+")
def test_a_poller_raises_its_soft_limit_to_the_hard_one_when_its_targets_need_it():
    out = run_child(256, 1000)
    hard = hard_limit()
    assert f"now {hard} {hard}" in out
    assert f"open files limit raised from 256 to {hard} for 1000 target(s)" in out


def test_a_limit_that_suffices_is_left_alone():
    out = run_child(512, 100)
    assert "now 512 512" in out and "raised" not in out


@pytest.mark.skipif(hard_limit() >= 10**9, reason="an unlimited hard limit")
def test_a_hard_limit_too_low_for_the_targets_is_reported():
    out = run_child(256, hard_limit() + 1)
    assert "WARNING open files limit" in out and "raise it (ulimit -n)" in out


def test_a_poller_runs_on_uvloop_when_it_is_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    import uvloop

    from poolscope.fleet.worker import new_event_loop

    loop = new_event_loop()
    assert isinstance(loop, uvloop.Loop)
    loop.close()
    monkeypatch.setitem(sys.modules, "uvloop", None)  # as if not installed: asyncio's own loop
    loop = new_event_loop()
    assert not isinstance(loop, uvloop.Loop)
    loop.close()
