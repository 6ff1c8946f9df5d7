"""Debian's prometheus-mysqld-exporter on a loopback port, for a side-by-side overhead comparison."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import httpx

from poolscope_bench.stats import process_cpu_s
from poolscope_dev import supervisor
from poolscope_dev.sandbox import free_port

EXPORTER_CANDIDATES = ("/usr/bin/prometheus-mysqld-exporter", "prometheus-mysqld-exporter", "mysqld_exporter")
HOST = "127.0.0.1"


class ExporterError(RuntimeError):
    """The exporter is missing or did not come up."""


def find_exporter() -> str | None:
    for cand in EXPORTER_CANDIDATES:
        path = cand if os.path.isabs(cand) else shutil.which(cand)
        if path and os.access(path, os.X_OK):
            return path
    return None


def exporter_version(binary: str) -> str:
    try:
        res = subprocess.run(
            [binary, "--version"], capture_output=True, text=True, timeout=10, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    first = (res.stdout + res.stderr).strip().splitlines()
    return first[0] if first else "unknown"


class Exporter:
    """One exporter process reading the server through a monitoring .my.cnf in `workdir`."""

    def __init__(self, binary: str, workdir: Path, *, host: str, port: int, user: str, password: str):
        self.binary = binary
        self.workdir = workdir
        self.mysql_host = host
        self.mysql_port = port
        self.user = user
        self.password = password
        self.listen_port = 0
        self.proc: subprocess.Popen[bytes] | None = None
        self.log_file = workdir / "exporter.log"

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.listen_port}/metrics"

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc is not None else None

    def cpu_s(self) -> float | None:
        return process_cpu_s(self.proc.pid) if self.proc is not None else None

    def _write_my_cnf(self) -> Path:
        path = self.workdir / "exporter.my.cnf"
        # Created 0600 before the password goes in.
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(
                "[client]\n"
                f"user={self.user}\n"
                f"password={self.password}\n"
                f"host={self.mysql_host}\n"
                f"port={self.mysql_port}\n"
            )
        return path

    def start(self, timeout_s: float = 20.0) -> None:
        my_cnf = self._write_my_cnf()
        self.listen_port = free_port(HOST)
        cmd = [
            self.binary,
            f"--config.my-cnf={my_cnf}",
            f"--web.listen-address={HOST}:{self.listen_port}",
        ]
        self.log_file.unlink(missing_ok=True)
        self.proc = supervisor.start("mysqld_exporter", cmd, log=self.log_file).proc
        deadline = time.monotonic() + timeout_s
        last = "no answer"
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise ExporterError(f"exporter exited with code {self.proc.returncode}; {self._tail()}")
            try:
                res = httpx.get(self.url, timeout=2.0)
                if res.status_code == 200 and "\nmysql_up 1" in res.text:
                    return
                last = f"HTTP {res.status_code}, mysql_up not 1"
            except httpx.HTTPError as exc:
                last = f"{type(exc).__name__}"
            time.sleep(0.2)
        self.stop()
        raise ExporterError(f"exporter not ready within {timeout_s:.0f} s ({last}); {self._tail()}")

    def _tail(self) -> str:
        try:
            lines = self.log_file.read_text(errors="replace").strip().splitlines()
        except OSError:
            return f"no log at {self.log_file}"
        return "log: " + " | ".join(lines[-5:])

    def stop(self, timeout_s: float = 10.0) -> None:
        proc, self.proc = self.proc, None
        if proc is not None:
            supervisor.Child("mysqld_exporter", proc, self.log_file).stop(timeout_s)
            proc.wait(timeout=5)
