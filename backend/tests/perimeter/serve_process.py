"""`poolscope serve` as a real process (its uvicorn options included), on a free 127.0.0.1 port."""

from __future__ import annotations

import contextlib
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx

from poolscope_dev.sandbox import free_port
from tests.waiting import wait_for


def toml_string(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


@contextlib.contextmanager
def poolscope_serve(tmp: Path, config: str) -> Iterator[str]:
    """Write `config` (plus store and port), serve it, yield the base URL; SIGTERM (then kill) on exit."""
    port = free_port()
    path = tmp / "poolscope.toml"
    store = f"sqlite+aiosqlite:///{tmp / 'store.db'}"
    path.write_text(
        f'store_url = {toml_string(store)}\nlisten_host = "127.0.0.1"\nlisten_port = {port}\n{config}'
    )
    log = (tmp / "serve.log").open("ab")
    proc = subprocess.Popen(
        [sys.executable, "-m", "poolscope.cli", "serve", "--config", str(path)], stdout=log, stderr=log
    )
    base = f"http://127.0.0.1:{port}"
    try:

        def answers() -> bool:
            if proc.poll() is not None:
                raise RuntimeError(f"poolscope serve exited: {(tmp / 'serve.log').read_text()[-2000:]}")
            with contextlib.suppress(httpx.TransportError):
                return httpx.get(f"{base}/api/health", timeout=2).is_success
            return False

        wait_for(answers, 60, "poolscope serve did not answer")
        yield base
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
        log.close()
