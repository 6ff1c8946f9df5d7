"""A private PostgreSQL server for testing the store on PostgreSQL (Debian's postgresql package).

    with PostgresSandbox() as pg:
        url = pg.create_database("poolscope_store")   # postgresql+asyncpg://... on 127.0.0.1

Its own data directory and socket directory, 127.0.0.1 only, a free port, trust authentication
for loopback (nothing else can connect). PostgreSQL refuses to run as root, so under root the
server runs as the `postgres` system user the Debian package creates, and the directory is
handed to it. The kernel stops the server if the process that started it dies (the uid switch
happens before the parent-death signal is set, which a credential change would clear).
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from types import TracebackType

from poolscope_dev.sandbox import HOST, free_port
from poolscope_dev.supervisor import die_with_parent


class PostgresSandboxError(RuntimeError):
    pass


def _bindir() -> Path:
    """Debian keeps initdb/postgres under /usr/lib/postgresql/<major>/bin, not on PATH."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/postgres"), key=lambda p: int(p.split("/")[4]))
    if found:
        return Path(found[-1]).parent
    on_path = shutil.which("postgres")
    if on_path:
        return Path(on_path).parent
    raise PostgresSandboxError(
        "PostgreSQL not found; install the Debian package postgresql (scripts/install-system.sh)"
    )


class PostgresSandbox:
    host = HOST

    def __init__(self, base_dir: Path | None = None) -> None:
        # Default: a fresh directory right under the system temp dir, because every parent must
        # be searchable by the postgres user (pytest's root-owned 0700 tmp dirs are not).
        self.base_dir = Path(base_dir) if base_dir else Path(tempfile.mkdtemp(prefix="poolscope-pg-"))
        self.datadir = self.base_dir / "data"
        self.sockdir = self.base_dir / "run"
        self.port = free_port()
        self.bindir = _bindir()
        self.proc: subprocess.Popen[bytes] | None = None
        # As root, run as the postgres user (the server refuses root); otherwise as ourselves.
        self._as: dict[str, object] = (
            {"user": "postgres", "group": "postgres", "extra_groups": []} if os.geteuid() == 0 else {}
        )

    def start(self, timeout_s: float = 60) -> None:
        self.base_dir.mkdir(parents=True, exist_ok=True)
        self.sockdir.mkdir(exist_ok=True)
        if os.geteuid() == 0:
            entry = pwd.getpwnam("postgres")
            for path in (self.base_dir, self.sockdir):
                os.chown(path, entry.pw_uid, entry.pw_gid)
        if not (self.datadir / "PG_VERSION").is_file():
            subprocess.run(
                [
                    str(self.bindir / "initdb"),
                    "-D",
                    str(self.datadir),
                    "-U",
                    "postgres",
                    "--auth=trust",
                    "-E",
                    "UTF8",
                ],
                check=True,
                capture_output=True,
                timeout=timeout_s,
                **self._as,  # type: ignore[call-overload]
            )
        log = open(self.base_dir / "postgres.log", "ab")  # noqa: SIM115 - owned by the process
        self.proc = subprocess.Popen(  # type: ignore[call-overload]
            [
                str(self.bindir / "postgres"),
                *("-D", str(self.datadir), "-h", HOST, "-p", str(self.port), "-k", str(self.sockdir)),
                *("-c", "fsync=off"),  # a test server: durability is not what is measured
                *("-c", "max_connections=50"),
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            preexec_fn=die_with_parent,  # noqa: PLW1509 - runs after the uid switch; sets the death signal
            **self._as,
        )
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise PostgresSandboxError(f"postgres exited: {self._tail()}")
            ready = subprocess.run(
                [str(self.bindir / "pg_isready"), "-h", HOST, "-p", str(self.port), "-U", "postgres"],
                capture_output=True,
            )
            if ready.returncode == 0:
                return
            time.sleep(0.2)
        self.stop()
        raise PostgresSandboxError(f"postgres did not accept connections in {timeout_s:g} s: {self._tail()}")

    def _tail(self) -> str:
        with contextlib.suppress(OSError):
            return (self.base_dir / "postgres.log").read_text(errors="replace")[-2000:]
        return ""

    def psql(self, sql: str) -> None:
        subprocess.run(
            [
                str(self.bindir / "psql"),
                "-h",
                HOST,
                "-p",
                str(self.port),
                "-U",
                "postgres",
                "-v",
                "ON_ERROR_STOP=1",
                "-c",
                sql,
            ],
            check=True,
            capture_output=True,
            timeout=30,
        )

    def create_database(self, name: str) -> str:
        """A fresh empty database; returns its SQLAlchemy async URL (no password: trust on loopback)."""
        self.psql(f'DROP DATABASE IF EXISTS "{name}"')
        self.psql(f'CREATE DATABASE "{name}"')
        return f"postgresql+asyncpg://postgres@{HOST}:{self.port}/{name}"

    def stop(self, timeout_s: float = 30) -> None:
        if self.proc is None:
            return
        if self.proc.poll() is None:
            # SIGINT, PostgreSQL's fast shutdown: open sessions are ended (a test's engine may still
            # hold some), where SIGTERM's smart shutdown waited for them until the timeout (30 s).
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=timeout_s)
        self.proc = None

    def destroy(self) -> None:
        """Stop the server and remove its directory."""
        self.stop()
        shutil.rmtree(self.base_dir, ignore_errors=True)

    def __enter__(self) -> PostgresSandbox:
        self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.destroy()
