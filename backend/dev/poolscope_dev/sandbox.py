"""A private, throw-away MariaDB server on loopback for tests, the demo, e2e and benchmarks.

    with MariaDBSandbox(Path("/tmp/sb")) as sb:
        conn = sb.admin_connect()          # root over the unix socket
        dsn = sb.dsn(MONITOR_USER)         # mysql://poolscope_monitor:...@127.0.0.1:PORT/

The server is Debian's ``mariadbd`` started with ``--no-defaults`` (so no /etc/mysql config
leaks in), bound to 127.0.0.1 only, with the thread pool settings given to the constructor.
Passwords below are fixed sandbox-only credentials, never used for a real server.

CLI: ``python -m poolscope_dev.sandbox --dir DIR [--port N --extra-port N ...]`` starts
the server, prints the DSNs and waits for Ctrl-C / SIGTERM; ``--stop`` stops a server left
running in DIR.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any
from urllib.parse import quote

import pymysql

from poolscope.dsn import redact_dsn
from poolscope_dev import mariadb_lines
from poolscope_dev.mariadb_lines import DEBIAN_LINE
from poolscope_dev.mariadbd import (
    SandboxError,
    install_datadir,
    server_args,
    setup_accounts,
    stop_stale_server,
)
from poolscope_dev.supervisor import die_with_parent

log = logging.getLogger(__name__)

HOST = "127.0.0.1"

ROOT_USER = "root"  # socket-only, empty password: see admin_connect()

MONITOR_USER = "poolscope_monitor"
MONITOR_PASSWORD = "monitor-sandbox-pw"
NOPROC_USER = "poolscope_noproc"
NOPROC_PASSWORD = "noproc-sandbox-pw"
ADMIN_USER = "poolscope_admin"
ADMIN_PASSWORD = "admin-sandbox-pw"
SBTEST_USER = "sbtest"
SBTEST_PASSWORD = "sbtest-sandbox-pw"
SBTEST_DB = "sbtest"

#: user name -> password for every account the sandbox creates.
PASSWORDS: dict[str, str] = {
    MONITOR_USER: MONITOR_PASSWORD,
    NOPROC_USER: NOPROC_PASSWORD,
    ADMIN_USER: ADMIN_PASSWORD,
    SBTEST_USER: SBTEST_PASSWORD,
}

#: user name -> privileges; each GRANT is given for @'127.0.0.1' and @'localhost'.
GRANTS: dict[str, list[str]] = {
    # PROCESS is the one that matters (INNODB_TRX, other users' PROCESSLIST rows).
    MONITOR_USER: [
        "GRANT PROCESS, REPLICATION CLIENT ON *.*",
        "GRANT SELECT ON performance_schema.*",
    ],
    # Deliberately without PROCESS, for the missing-privilege path.
    NOPROC_USER: ["GRANT SELECT ON performance_schema.*"],
    # For applying variables: a separate credential from the monitoring one.
    ADMIN_USER: ["GRANT SUPER, CONNECTION ADMIN, PROCESS ON *.*"],
    SBTEST_USER: [f"GRANT ALL PRIVILEGES ON `{SBTEST_DB}`.*"],
}

USER_HOSTS = ("127.0.0.1", "localhost")

# sockaddr_un.sun_path is 108 bytes on Linux.
_MAX_SOCKET_PATH = 100


@dataclass(frozen=True)
class ServerTls:
    """The server's TLS files (PEM): --ssl-ca, --ssl-cert, --ssl-key."""

    ca: Path
    cert: Path
    key: Path


def free_port(host: str = HOST) -> int:
    """A TCP port on `host` that was free a moment ago (the kernel's pick)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


class MariaDBSandbox:
    """A private MariaDB server in `base_dir`, listening on 127.0.0.1 only.

    `port` / `extra_port` default to free ports; ``extra_port=0`` runs without an extra
    port (``@@extra_port`` = 0). An existing datadir is reused. Accounts and the `sbtest`
    database are (re)created on every start, so reuse is idempotent. With `tls` the server
    offers TLS with those files (poolscope_dev/tlscerts.py makes a throw-away set); plain TCP still works.
    `line` picks the server: Debian's MariaDB 10.11 (default) or "11.4" from Maven Central
    (poolscope_dev/mariadb_lines.py).

    With `die_with_parent` (default) the kernel sends the server SIGTERM when the *thread*
    that called start() exits, so a killed test run never leaves a server behind; call
    start() from a long-lived thread (the main thread, not a short-lived worker).
    """

    host = HOST

    def __init__(
        self,
        base_dir: Path,
        port: int | None = None,
        extra_port: int | None = None,
        *,
        thread_handling: str = "pool-of-threads",
        thread_pool_size: int = 2,
        stall_limit_ms: int = 500,
        exact_stats: bool = True,
        extra_max_connections: int = 5,
        max_connections: int = 500,
        innodb_buffer_pool_size: str = "64M",
        extra_args: tuple[str, ...] = (),
        tls: ServerTls | None = None,
        die_with_parent: bool = True,
        line: str = DEBIAN_LINE,
    ) -> None:
        if thread_handling not in ("pool-of-threads", "one-thread-per-connection", "no-threads"):
            raise ValueError(f"unknown thread_handling {thread_handling!r}")
        self.base_dir = Path(base_dir).absolute()
        self.datadir = self.base_dir / "data"
        self.log_file = self.base_dir / "mariadb.err"
        # Private tmpdir: a shared /tmp saw another process's cleanup remove a sandbox's
        # temporary tables mid-bootstrap ("Could not remove temporary table", install failed).
        self.tmpdir = self.base_dir / "tmp"
        self.pid_file = self.datadir / "mysqld.pid"
        self.socket = self._socket_path()
        self._auto_port = port is None
        self._auto_extra_port = extra_port is None
        self.port: int = port if port is not None else 0
        self.extra_port: int = extra_port if extra_port is not None else 0
        self.thread_handling = thread_handling
        self.thread_pool_size = thread_pool_size
        self.stall_limit_ms = stall_limit_ms
        self.exact_stats = exact_stats
        self.extra_max_connections = extra_max_connections
        self.max_connections = max_connections
        self.innodb_buffer_pool_size = innodb_buffer_pool_size
        self.extra_args = tuple(extra_args)
        self.tls = tls
        self.die_with_parent = die_with_parent
        # Which MariaDB line runs: Debian's 10.11, or a line from Maven Central (mariadb_lines.py).
        self.line = line
        self.basedir = mariadb_lines.basedir(line)
        self._proc: subprocess.Popen[bytes] | None = None

    # ------------------------------------------------------------------ paths / info

    def _socket_path(self) -> Path:
        sock = self.datadir / "mysqld.sock"
        if len(str(sock)) <= _MAX_SOCKET_PATH:
            return sock
        # Deep tmp dirs overflow sun_path: use a short dir named after the datadir, so the
        # same base_dir always maps to the same socket (the CLI's --stop relies on it).
        digest = hashlib.sha1(str(self.datadir).encode()).hexdigest()[:12]
        return Path(tempfile.gettempdir()) / f"psb-{digest}" / "mysqld.sock"

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    def dsn(self, user: str = MONITOR_USER, *, extra: bool = False, database: str = "") -> str:
        """``mysql://user:pass@127.0.0.1:port/[database]``; `extra` uses the extra port."""
        if user not in PASSWORDS:
            raise ValueError(f"unknown sandbox user {user!r}; known: {', '.join(PASSWORDS)}")
        port = self._port_for(extra)
        pw = quote(PASSWORDS[user], safe="")
        return f"mysql://{quote(user, safe='')}:{pw}@{self.host}:{port}/{database}"

    def safe_dsn(self, user: str = MONITOR_USER, *, extra: bool = False) -> str:
        """The DSN with the password masked, for log lines."""
        return redact_dsn(self.dsn(user, extra=extra))

    def _port_for(self, extra: bool) -> int:
        if extra:
            if not self.extra_port:
                raise SandboxError("this sandbox runs without an extra_port")
            return self.extra_port
        return self.port

    def info(self) -> dict[str, Any]:
        """Everything a script needs to reach the server (contains sandbox passwords)."""
        return {
            "host": self.host,
            "port": self.port,
            "extra_port": self.extra_port,
            "socket": str(self.socket),
            "datadir": str(self.datadir),
            "pid": self.pid,
            "log_file": str(self.log_file),
            "thread_handling": self.thread_handling,
            "thread_pool_size": self.thread_pool_size,
            "dsns": {user: self.dsn(user) for user in PASSWORDS},
            "users": dict(PASSWORDS),
        }

    # ------------------------------------------------------------------ connections

    def admin_connect(self, **kwargs: Any) -> pymysql.connections.Connection[Any]:
        """A sync PyMySQL connection as root over the unix socket (autocommit on).

        The socket goes through the thread pool like the normal port; for a query that must
        not queue behind load use ``connect(ADMIN_USER, extra=True)``.
        """
        params: dict[str, Any] = {
            "unix_socket": str(self.socket),
            "user": ROOT_USER,
            "password": "",
            "autocommit": True,
            "charset": "utf8mb4",
            "connect_timeout": 10,
        }
        params.update(kwargs)
        return pymysql.connect(**params)

    def connect(
        self, user: str = MONITOR_USER, *, extra: bool = False, database: str | None = None, **kwargs: Any
    ) -> pymysql.connections.Connection[Any]:
        """A sync PyMySQL connection as a sandbox user over TCP (autocommit on)."""
        if user not in PASSWORDS:
            raise ValueError(f"unknown sandbox user {user!r}; known: {', '.join(PASSWORDS)}")
        params: dict[str, Any] = {
            "host": self.host,
            "port": self._port_for(extra),
            "user": user,
            "password": PASSWORDS[user],
            "database": database,
            "autocommit": True,
            "charset": "utf8mb4",
            "connect_timeout": 10,
        }
        params.update(kwargs)
        return pymysql.connect(**params)

    # ------------------------------------------------------------------ lifecycle

    def __enter__(self) -> MariaDBSandbox:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def start(self, timeout_s: float = 60) -> None:
        """Install the datadir if needed, start the server, create accounts. Idempotent."""
        if self.running:
            return
        self.base_dir.mkdir(parents=True, exist_ok=True)
        self.tmpdir.mkdir(mode=0o700, exist_ok=True)
        stop_stale_server(self)
        if not (self.datadir / "mysql").is_dir():
            install_datadir(self, timeout_s)
        deadline = time.monotonic() + timeout_s
        attempts = 3 if (self._auto_port or self._auto_extra_port) else 1
        for attempt in range(1, attempts + 1):
            if self._auto_port:
                self.port = free_port()
            if self._auto_extra_port:
                self.extra_port = free_port()
                while self.extra_port == self.port:
                    self.extra_port = free_port()
            try:
                self._launch(deadline)
                break
            except _PortInUse:
                self._kill_proc()
                if attempt == attempts:
                    raise SandboxError(
                        f"port {self.port} or {self.extra_port} already in use on {self.host}; "
                        f"see {self.log_file}"
                    ) from None
                log.info("sandbox ports taken by someone else, retrying with new ones")
        try:
            setup_accounts(self)
        except Exception:
            self.stop()
            raise
        log.info(
            "MariaDB sandbox up: pid %s, %s:%s, extra_port %s, %s, datadir %s",
            self.pid,
            self.host,
            self.port,
            self.extra_port or "none",
            self.thread_handling,
            self.datadir,
        )

    def stop(self, timeout_s: float = 30) -> None:
        """Shut the server down cleanly (SIGTERM), SIGKILL after `timeout_s`. Idempotent."""
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                log.warning("mariadbd pid %s ignored SIGTERM for %ss; killing it", proc.pid, timeout_s)
                proc.kill()
                proc.wait(timeout=10)
        # A server this object did not start (left by a crashed run) is stopped via its pid file.
        stop_stale_server(self, timeout_s)

    def destroy(self) -> None:
        """Stop the server and delete its datadir (the error log stays for post-mortems)."""
        self.stop()
        shutil.rmtree(self.datadir, ignore_errors=True)
        shutil.rmtree(self.base_dir / "data.installing", ignore_errors=True)
        shutil.rmtree(self.tmpdir, ignore_errors=True)
        if self.socket.parent != self.datadir:
            shutil.rmtree(self.socket.parent, ignore_errors=True)

    # ------------------------------------------------------------------ internals

    def _launch(self, deadline: float) -> None:
        log_offset = self.log_file.stat().st_size if self.log_file.exists() else 0
        self.socket.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        with contextlib.suppress(FileNotFoundError):
            self.socket.unlink()
        self._proc = subprocess.Popen(
            server_args(self),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            # Own session: a Ctrl-C on the terminal reaches our handler, which stops the
            # server in order, instead of hitting mariadbd directly.
            start_new_session=True,
            preexec_fn=die_with_parent if self.die_with_parent else None,
        )
        last_err: Exception | None = None
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                new_log = _read_from(self.log_file, log_offset)
                if "Address already in use" in new_log or "Do you already have another" in new_log:
                    raise _PortInUse()
                raise SandboxError(
                    f"mariadbd exited with code {self._proc.returncode} while starting; "
                    f"log {self.log_file}:\n{_tail_text(new_log)}"
                )
            if self.socket.exists():
                try:
                    conn = self.admin_connect(connect_timeout=2)
                    conn.close()
                    return
                except pymysql.MySQLError as e:
                    last_err = e
            time.sleep(0.1)
        self._kill_proc()
        raise SandboxError(
            f"mariadbd did not accept connections within the start timeout (last error: {last_err}); "
            f"log {self.log_file}:\n{_tail_text(_read_from(self.log_file, log_offset))}"
        )

    def _kill_proc(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)


class _PortInUse(Exception):
    pass


def _read_from(path: Path, offset: int) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(offset)
            return f.read().decode(errors="replace")
    except OSError:
        return ""


def _tail_text(text: str, lines: int = 15) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


if __name__ == "__main__":
    # The CLI lives in poolscope_dev/sandbox_cli.py; `python -m poolscope_dev.sandbox` stays its name.
    from poolscope_dev.sandbox_cli import main

    sys.exit(main())
