"""`python -m poolscope_dev stack`: one process brings sandbox, files and processes up and down."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from poolscope_dev.sandbox import free_port
from poolscope_dev.stack import StackError, render
from poolscope_dev.supervisor import pid_alive
from tests.waiting import wait_for

pytestmark = pytest.mark.live  # a stack with its own MariaDB sandbox (tests/conftest.py lanes)


def test_render_fills_nested_values_and_refuses_unknown_names() -> None:
    values = {"db": {"port": 3306, "dsns": {"m": "mysql://m@h/"}}, "python": "/py"}
    assert render("${python} ${db.port} ${db.dsns.m}", values) == "/py 3306 mysql://m@h/"
    with pytest.raises(StackError, match=r"\$\{db.nope\}"):
        render("${db.nope}", values)


def _stack(tmp_path: Path, spec: dict[str, object]) -> tuple[subprocess.Popen[bytes], Path]:
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    ready = tmp_path / "ready.json"
    args = ["-m", "poolscope_dev", "stack", "--spec", str(tmp_path / "spec.json"), "--ready-file", str(ready)]
    log = (tmp_path / "stack.log").open("ab")
    proc = subprocess.Popen(
        [sys.executable, *args], stdout=subprocess.DEVNULL, stderr=log, start_new_session=True
    )
    log.close()
    return proc, ready


def _wait(proc: subprocess.Popen[bytes], ready: Path, log: Path, timeout_s: float = 180) -> dict:
    def up() -> bool:
        assert proc.poll() is None, log.read_text()
        return ready.exists()

    wait_for(up, timeout_s, lambda _: log.read_text())
    return json.loads(ready.read_text())


def test_stack_up_then_sigterm_leaves_nothing(tmp_path: Path) -> None:
    port = free_port()
    spec = {
        "dir": str(tmp_path / "run"),
        "hours": 1,
        "sandboxes": {"db": {"thread_pool_size": 2}},
        "files": {str(tmp_path / "conf.txt"): "dsn = ${db.dsns.poolscope_monitor}\n"},
        "processes": [
            {
                "name": "web",
                "argv": ["${python}", "-m", "http.server", "--bind", "127.0.0.1", str(port)],
                "log": str(tmp_path / "web.log"),
                "cwd": str(tmp_path),
                "ready_url": f"http://127.0.0.1:{port}/",
            }
        ],
    }
    proc, ready = _stack(tmp_path, spec)
    try:
        info = _wait(proc, ready, tmp_path / "stack.log")
        server_pid = info["sandboxes"]["db"]["pid"]
        web_pid = info["processes"]["web"]
        assert ready.stat().st_mode & 0o777 == 0o600
        conf = tmp_path / "conf.txt"
        assert conf.read_text() == f"dsn = {info['sandboxes']['db']['dsns']['poolscope_monitor']}\n"
        assert conf.stat().st_mode & 0o777 == 0o600
        assert httpx.get(f"http://127.0.0.1:{port}/conf.txt", timeout=5).status_code == 200
        assert pid_alive(server_pid) and pid_alive(web_pid)
    finally:
        proc.send_signal(signal.SIGTERM)
        rc = proc.wait(timeout=90)
    assert rc == 0, (tmp_path / "stack.log").read_text()
    assert not pid_alive(server_pid) and not pid_alive(web_pid)
    assert not ready.exists()
    assert "everything stopped" in (tmp_path / "stack.log").read_text()


def test_a_part_that_ends_ends_the_stack(tmp_path: Path) -> None:
    spec = {
        "dir": str(tmp_path / "run"),
        "processes": [
            {"name": "sleeper", "argv": ["sleep", "300"], "log": str(tmp_path / "a.log")},
            {"name": "quitter", "argv": ["sh", "-c", "sleep 1; exit 4"], "log": str(tmp_path / "b.log")},
        ],
    }
    proc, ready = _stack(tmp_path, spec)
    info = _wait(proc, ready, tmp_path / "stack.log", 60)
    assert proc.wait(timeout=60) == 1
    assert not pid_alive(info["processes"]["sleeper"])
    assert "quitter ended (exit 4)" in (tmp_path / "stack.log").read_text()


def test_a_bad_spec_is_refused_and_starts_nothing(tmp_path: Path) -> None:
    spec = {"dir": str(tmp_path / "run"), "sandboxes": {"db": {"port_of_call": 1}}}
    proc, ready = _stack(tmp_path, spec)
    assert proc.wait(timeout=60) == 1
    assert "unknown options ['port_of_call']" in (tmp_path / "stack.log").read_text()
    assert not (tmp_path / "run").exists() and not ready.exists()
