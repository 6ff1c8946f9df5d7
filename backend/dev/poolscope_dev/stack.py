"""The dev stack: sandbox servers, config files and processes from one spec, up and down together.

    python -m poolscope_dev stack --spec SPEC.json [--ready-file READY.json]

`make demo` (scripts/demo.sh) and the e2e suite (e2e/global-setup.ts) describe what they need in
a spec and run this one process; stopping it (SIGTERM, SIGINT) stops everything it started.

Spec (JSON):
    dir          where each sandbox's directory goes (<dir>/<name>)
    hours        the stack stops by itself after this long (at most 24)
    sandboxes    {name: {thread_handling, thread_pool_size, stall_limit_ms, exact_stats,
                 extra_port}} private MariaDB servers (poolscope_dev/sandbox.py), started here
    files        {path: text} written (mode 0600) once the sandboxes are up
    processes    [{name, argv, log, cwd?, ready_url?}] started in order, each in its own process
                 group (poolscope_dev/supervisor.py); with ready_url the next one starts once that
                 URL answers 2xx
Text in `files` and `argv` may name ${<sandbox>.<key>...} from the sandbox's info() (e.g.
${pool-on.dsns.poolscope_monitor}, ${pool-on.port}) and ${python} (this interpreter).

When all is up, one JSON line {"sandboxes": {name: info}, "processes": {name: pid}} goes to
--ready-file (mode 0600: it holds the sandbox-only passwords), or else to stdout.
Whichever part ends first ends the stack (exit 1); a signal or the time limit ends it with 0.
"""

from __future__ import annotations

import json
import logging
import os
import re
import signal
import sys
import time
from pathlib import Path
from typing import Any

import httpx

from poolscope_dev.mariadb_lines import DEBIAN_LINE
from poolscope_dev.sandbox import MariaDBSandbox, SandboxError
from poolscope_dev.supervisor import ProcessExited, Supervisor

log = logging.getLogger("poolscope_dev.stack")

MAX_HOURS = 24.0
SANDBOX_START_S = 120.0
READY_S = 120.0
STOP_GRACE_S = 30.0
SANDBOX_OPTIONS = (
    "thread_handling",
    "thread_pool_size",
    "stall_limit_ms",
    "exact_stats",
    "extra_port",
    "line",
)
PLACEHOLDER = re.compile(r"\$\{([A-Za-z0-9_.-]+)\}")


def sandbox_dir(name: str, line: str | None) -> str:
    """A sandbox's directory under the stack's: one per MariaDB line, so a datadir made by one
    line is never started by another (10.11 cannot read what 11.4 wrote)."""
    return name if line in (None, DEBIAN_LINE) else f"{name}-{line}"


class StackError(RuntimeError):
    """The spec is wrong or a part of the stack did not come up."""


class _Stop(Exception):
    pass


def render(text: str, values: dict[str, Any]) -> str:
    """Fill ${a.b.c} from nested `values`; an unknown name is an error, never left in place."""

    def one(match: re.Match[str]) -> str:
        value: Any = values
        for key in match.group(1).split("."):
            if not isinstance(value, dict) or key not in value:
                raise StackError(f"unknown placeholder ${{{match.group(1)}}}")
            value = value[key]
        return str(value)

    return PLACEHOLDER.sub(one, text)


def _write_private(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(text)
    tmp.replace(path)


def _answers(url: str) -> bool | None:
    return True if httpx.get(url, timeout=5).is_success else None


class Stack:
    def __init__(self, spec: dict[str, Any]) -> None:
        self.dir = Path(spec["dir"])
        self.hours = float(spec.get("hours", 4))
        if not 0 < self.hours <= MAX_HOURS:
            raise StackError(f"hours must be in (0, {MAX_HOURS:g}]")
        self.sandbox_specs: dict[str, dict[str, Any]] = spec.get("sandboxes", {})
        for name, options in self.sandbox_specs.items():
            unknown = set(options) - set(SANDBOX_OPTIONS)
            if unknown:
                raise StackError(f"sandbox {name}: unknown options {sorted(unknown)}")
        self.files: dict[str, str] = spec.get("files", {})
        self.processes: list[dict[str, Any]] = spec.get("processes", [])
        self.sandboxes: dict[str, MariaDBSandbox] = {}
        self.supervisor = Supervisor()
        self.stopping = False

    def _check_stop(self) -> None:
        if self.stopping:
            raise _Stop()

    def up(self) -> dict[str, Any]:
        """Start everything in order; returns what the ready line says."""
        for name, options in self.sandbox_specs.items():
            self._check_stop()
            sandbox = MariaDBSandbox(self.dir / sandbox_dir(name, options.get("line")), **options)
            self.sandboxes[name] = sandbox
            log.info("starting sandbox %s", name)
            sandbox.start(timeout_s=SANDBOX_START_S)
        values: dict[str, Any] = {name: sb.info() for name, sb in self.sandboxes.items()}
        values["python"] = sys.executable
        for path, text in self.files.items():
            _write_private(Path(path), render(text, values))
        for proc in self.processes:
            self._check_stop()
            argv = [render(arg, values) for arg in proc["argv"]]
            log.info("starting %s", proc["name"])
            child = self.supervisor.start(
                proc["name"], argv, log=Path(proc["log"]), cwd=Path(proc["cwd"]) if "cwd" in proc else None
            )
            if "ready_url" in proc:
                url = render(proc["ready_url"], values)
                child.wait_ready(f"an answer from {url}", lambda: _answers(url), READY_S)  # noqa: B023
        return {
            "sandboxes": {name: sb.info() for name, sb in self.sandboxes.items()},
            "processes": {c.name: c.pid for c in self.supervisor.children},
        }

    def wait(self) -> int:
        """Until a signal (0), the time limit (0) or a part ending (1)."""
        deadline = time.monotonic() + self.hours * 3600
        while not self.stopping and time.monotonic() < deadline:
            ended = self.supervisor.first_exited()
            if ended is not None:
                log.error("%s ended (exit %s): stopping the stack", ended.name, ended.proc.returncode)
                return 1
            dead = next((n for n, sb in self.sandboxes.items() if not sb.running), None)
            if dead is not None:
                log.error("sandbox %s's mariadbd ended: stopping the stack", dead)
                return 1
            time.sleep(0.5)
        return 0

    def down(self) -> list[str]:
        """Processes newest first, then the servers; returns what could not be stopped."""
        problems = self.supervisor.stop_all(STOP_GRACE_S)
        for name, sandbox in reversed(self.sandboxes.items()):
            try:
                sandbox.stop()
            except SandboxError as exc:
                problems.append(f"sandbox {name}: {exc}")
        return problems


def run(spec_file: Path, ready_file: Path | None) -> int:
    spec = json.loads(spec_file.read_text())
    stack = Stack(spec)

    def on_signal(_signum: int, _frame: object) -> None:
        stack.stopping = True

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    rc = 0
    try:
        ready = stack.up()
        line = json.dumps(ready)
        if ready_file is not None:
            _write_private(ready_file, line + "\n")
        else:
            print(line, flush=True)
        log.info("stack ready")
        rc = stack.wait()
    except _Stop:
        log.info("stopped while starting")
    except (StackError, SandboxError, ProcessExited, TimeoutError, OSError, KeyError) as exc:
        log.error("%s", exc)
        rc = 1
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        log.info("stopping the stack")
        problems = stack.down()
        if ready_file is not None:
            ready_file.unlink(missing_ok=True)
        for problem in problems:
            log.error("still running: %s", problem)
        if problems:
            rc = 1
        else:
            log.info("everything stopped")
    return rc
