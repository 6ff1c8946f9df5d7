"""Helpers for the deploy tests: the repository's paths, Debian tools they need, and processes
started in the background that are always stopped (and whose log is shown when they fail)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from poolscope_dev.sandbox import free_port
from tests.waiting import wait_for

ROOT = Path(__file__).resolve().parents[3]
DEPLOY = ROOT / "deploy"


def require_tool(name: str) -> str:
    """The path of a Debian tool the test needs; scripts/install-system.sh installs it."""
    path = shutil.which(name) or shutil.which(name, path="/usr/sbin:/sbin")
    if path is None:
        pytest.fail(f"{name} is not installed: run scripts/install-system.sh (Debian packages)")
    return path


class Background:
    """A process started with its output in a log file; stop() ends it (SIGTERM, then SIGKILL)."""

    def __init__(self, args: Sequence[str], log: Path, **popen: Any) -> None:
        self.args = list(args)
        self.log = log
        self._out = log.open("wb")
        self.proc = subprocess.Popen(
            self.args, stdout=self._out, stderr=subprocess.STDOUT, start_new_session=True, **popen
        )

    def tail(self, lines: int = 40) -> str:
        self._out.flush()
        text = self.log.read_text(errors="replace").splitlines()
        return "\n".join(text[-lines:])

    def stop(self) -> None:
        if self.proc.poll() is None:
            # Its own session (start_new_session): the group is this process and its children only.
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=15)
        self._out.close()


@contextmanager
def background(args: Sequence[str], log: Path, **popen: Any) -> Iterator[Background]:
    process = Background(args, log, **popen)
    try:
        yield process
    finally:
        process.stop()


@contextmanager
def prometheus_server(tool: str, home: Path, *flags: str) -> Iterator[str]:
    """Debian's `prometheus` or `prometheus-alertmanager` on a free loopback port, its config in
    home/<tool>.yml; yields its base URL once /-/ready answers, stops it on exit."""
    port = free_port()
    args = [
        require_tool(tool),
        f"--config.file={home / (tool + '.yml')}",
        f"--web.listen-address=127.0.0.1:{port}",
        *flags,
    ]
    base = f"http://127.0.0.1:{port}"
    with background(args, home / f"{tool}.log") as process:

        def answers() -> bool:
            assert process.proc.poll() is None, f"{tool} exited:\n{process.tail()}"
            return status_of(f"{base}/-/ready") == 200

        wait_for(answers, 60, lambda _: f"{tool} never got ready:\n{process.tail()}")
        yield base


def get_json(url: str, **params: Any) -> Any:
    """GET a JSON document, or None while the server does not answer (yet)."""
    try:
        response = httpx.get(url, params=params, timeout=5)
    except httpx.TransportError:
        return None
    return response.json() if response.is_success else None


def status_of(url: str) -> int | None:
    """The HTTP status of a GET, or None while nothing answers (yet)."""
    try:
        return httpx.get(url, timeout=5).status_code
    except httpx.TransportError:
        return None
