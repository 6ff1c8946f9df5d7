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

import argparse
import contextlib
import ctypes
import hashlib
import json
import logging
import os
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

MARIADBD_CANDIDATES = ("/usr/sbin/mariadbd", "/usr/sbin/mysqld", "mariadbd", "mysqld")
INSTALL_DB_CANDIDATES = ("mariadb-install-db", "mysql_install_db")

# sockaddr_un.sun_path is 108 bytes on Linux.
_MAX_SOCKET_PATH = 100

_PR_SET_PDEATHSIG = 1


@dataclass(frozen=True)
class ServerTls:
    """The server's TLS files (PEM): --ssl-ca, --ssl-cert, --ssl-key."""

    ca: Path
    cert: Path
    key: Path


class SandboxError(RuntimeError):
    """The sandbox server could not be installed, started or stopped."""


def _find_binary(candidates: tuple[str, ...], what: str) -> str:
    for cand in candidates:
        path = cand if os.path.isabs(cand) else shutil.which(cand)
        if path and os.access(path, os.X_OK):
            return path
    raise SandboxError(
        f"{what} not found (looked for {', '.join(candidates)}); "
        "install the Debian package mariadb-server (scripts/install-system.sh)"
    )


def free_port(host: str = HOST) -> int:
    """A TCP port on `host` that was free a moment ago (the kernel's pick)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie still answers kill(0); treat it as gone.
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ", 1)[1][:1] != "Z"
    except (OSError, IndexError):
        return True


def _pid_cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _die_with_parent() -> None:
    """preexec_fn: have the kernel SIGTERM the server if the process that started it dies.

    mariadbd treats SIGTERM as a clean shutdown, so a killed pytest or demo never leaves a
    server behind.
    """
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    except Exception:  # noqa: BLE001 - best effort; stop() is the normal path
        pass


class MariaDBSandbox:
    """A private MariaDB server in `base_dir`, listening on 127.0.0.1 only.

    `port` / `extra_port` default to free ports; ``extra_port=0`` runs without an extra
    port (``@@extra_port`` = 0). An existing datadir is reused. Accounts and the `sbtest`
    database are (re)created on every start, so reuse is idempotent. With `tls` the server
    offers TLS with those files (poolscope_dev/tlscerts.py makes a throw-away set); plain TCP still works.

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
        self._stop_stale_server()
        if not (self.datadir / "mysql").is_dir():
            self._install_datadir(timeout_s)
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
            self._setup_accounts()
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
        self._stop_stale_server(timeout_s)

    def destroy(self) -> None:
        """Stop the server and delete its datadir (the error log stays for post-mortems)."""
        self.stop()
        shutil.rmtree(self.datadir, ignore_errors=True)
        shutil.rmtree(self.base_dir / "data.installing", ignore_errors=True)
        shutil.rmtree(self.tmpdir, ignore_errors=True)
        if self.socket.parent != self.datadir:
            shutil.rmtree(self.socket.parent, ignore_errors=True)

    # ------------------------------------------------------------------ internals

    def _server_args(self) -> list[str]:
        args = [
            _find_binary(MARIADBD_CANDIDATES, "mariadbd"),
            "--no-defaults",
            f"--datadir={self.datadir}",
            f"--socket={self.socket}",
            f"--pid-file={self.pid_file}",
            f"--log-error={self.log_file}",
            f"--tmpdir={self.tmpdir}",
            f"--bind-address={self.host}",
            f"--port={self.port}",
            "--skip-name-resolve",
            "--skip-log-bin",
            f"--thread-handling={self.thread_handling}",
            f"--max-connections={self.max_connections}",
            "--character-set-server=utf8mb4",
            "--collation-server=utf8mb4_general_ci",
            f"--innodb-buffer-pool-size={self.innodb_buffer_pool_size}",
            # A sandbox trades durability for less fsync noise in benchmarks.
            "--innodb-flush-log-at-trx-commit=2",
            "--innodb-log-file-size=32M",
            "--lower-case-table-names=0",
        ]
        if self.thread_handling == "pool-of-threads":
            args += [
                f"--thread-pool-size={self.thread_pool_size}",
                f"--thread-pool-stall-limit={self.stall_limit_ms}",
                f"--thread-pool-exact-stats={'ON' if self.exact_stats else 'OFF'}",
            ]
        if self.extra_port:
            args += [
                f"--extra-port={self.extra_port}",
                f"--extra-max-connections={self.extra_max_connections}",
            ]
        if self.tls is not None:
            args += [f"--ssl-ca={self.tls.ca}", f"--ssl-cert={self.tls.cert}", f"--ssl-key={self.tls.key}"]
        if os.geteuid() == 0:
            args.append("--user=root")
        args += list(self.extra_args)
        return args

    def _install_datadir(self, timeout_s: float) -> None:
        install_db = _find_binary(INSTALL_DB_CANDIDATES, "mariadb-install-db")
        tmp = self.base_dir / "data.installing"
        shutil.rmtree(tmp, ignore_errors=True)
        cmd = [
            install_db,
            "--no-defaults",
            f"--datadir={tmp}",
            "--auth-root-authentication-method=normal",
            "--skip-test-db",
            "--skip-name-resolve",
            f"--tmpdir={self.tmpdir}",  # passed on to the bootstrap mariadbd
        ]
        if os.geteuid() == 0:
            cmd.append("--user=root")
        install_log = self.base_dir / "install-db.log"
        log.info("initialising MariaDB datadir %s", self.datadir)
        with open(install_log, "wb") as out:
            try:
                res = subprocess.run(
                    cmd, stdout=out, stderr=subprocess.STDOUT, timeout=timeout_s, stdin=subprocess.DEVNULL
                )
            except subprocess.TimeoutExpired:
                raise SandboxError(
                    f"mariadb-install-db took longer than {timeout_s}s; see {install_log}"
                ) from None
        if res.returncode != 0:
            raise SandboxError(
                f"mariadb-install-db failed (exit {res.returncode}); see {install_log}:\n"
                + _tail(install_log)
            )
        # Install into a side dir and rename, so an interrupted install is never "reused".
        shutil.rmtree(self.datadir, ignore_errors=True)
        tmp.rename(self.datadir)

    def _launch(self, deadline: float) -> None:
        log_offset = self.log_file.stat().st_size if self.log_file.exists() else 0
        self.socket.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        with contextlib.suppress(FileNotFoundError):
            self.socket.unlink()
        self._proc = subprocess.Popen(
            self._server_args(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            # Own session: a Ctrl-C on the terminal reaches our handler, which stops the
            # server in order, instead of hitting mariadbd directly.
            start_new_session=True,
            preexec_fn=_die_with_parent if self.die_with_parent else None,
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

    def _setup_accounts(self) -> None:
        conn = self.admin_connect()
        try:
            with conn.cursor() as cur:
                # Root stays socket-only: drop the TCP root accounts and anonymous users
                # that mariadb-install-db creates.
                cur.execute(
                    "SELECT User, Host FROM mysql.user WHERE (User = 'root' AND Host <> 'localhost')"
                    " OR User = ''"
                )
                for user, host in cur.fetchall():
                    cur.execute("DROP USER IF EXISTS %s@%s", (user, host))
                cur.execute(f"CREATE DATABASE IF NOT EXISTS `{SBTEST_DB}`")
                for user, password in PASSWORDS.items():
                    for host in USER_HOSTS:
                        account = (user, host, password)
                        cur.execute("CREATE USER IF NOT EXISTS %s@%s IDENTIFIED BY %s", account)
                        cur.execute("ALTER USER %s@%s IDENTIFIED BY %s", account)
                        for grant in GRANTS[user]:
                            cur.execute(grant + " TO %s@%s", (user, host))
                cur.execute("FLUSH PRIVILEGES")
        finally:
            conn.close()

    def _stop_stale_server(self, timeout_s: float = 30) -> None:
        """Stop a mariadbd still running on this datadir (e.g. left by a killed run)."""
        try:
            pid = int(self.pid_file.read_text().strip())
        except (OSError, ValueError):
            return
        if not _pid_alive(pid) or str(self.datadir) not in _pid_cmdline(pid):
            return
        log.warning("stopping mariadbd pid %s left running on %s", pid, self.datadir)
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout_s
        while _pid_alive(pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        if _pid_alive(pid):
            os.kill(pid, signal.SIGKILL)
            kill_deadline = time.monotonic() + 10
            while _pid_alive(pid) and time.monotonic() < kill_deadline:
                time.sleep(0.1)
        if _pid_alive(pid):
            raise SandboxError(f"could not stop mariadbd pid {pid}")


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


def _tail(path: Path, lines: int = 15) -> str:
    return _tail_text(_read_from(path, 0), lines)


# ---------------------------------------------------------------------- CLI


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="python -m poolscope_dev.sandbox",
        description="Run a private MariaDB server on 127.0.0.1 until Ctrl-C / SIGTERM.",
    )
    p.add_argument("--dir", required=True, type=Path, help="base directory (datadir is DIR/data)")
    p.add_argument("--port", type=int, default=None, help="TCP port (default: a free one)")
    p.add_argument("--extra-port", type=int, default=None, help="extra_port (default: a free one; 0 = none)")
    p.add_argument(
        "--thread-handling",
        default="pool-of-threads",
        choices=["pool-of-threads", "one-thread-per-connection"],
    )
    p.add_argument("--thread-pool-size", type=int, default=2)
    p.add_argument("--stall-limit-ms", type=int, default=500)
    p.add_argument("--exact-stats", action=argparse.BooleanOptionalAction, default=True)
    p.add_argument("--max-connections", type=int, default=500)
    p.add_argument("--extra-max-connections", type=int, default=5)
    p.add_argument("--info-file", type=Path, help="write host/ports/DSNs as JSON here once ready")
    p.add_argument("--hide-passwords", action="store_true", help="print DSNs with passwords masked")
    p.add_argument("--max-hours", type=float, default=24.0, help="stop by itself after this long")
    p.add_argument("--stop", action="store_true", help="stop a server left running in DIR and exit")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = _parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s sandbox: %(message)s", stream=sys.stderr)
    sb = MariaDBSandbox(
        args.dir,
        port=args.port,
        extra_port=args.extra_port,
        thread_handling=args.thread_handling,
        thread_pool_size=args.thread_pool_size,
        stall_limit_ms=args.stall_limit_ms,
        exact_stats=args.exact_stats,
        max_connections=args.max_connections,
        extra_max_connections=args.extra_max_connections,
        die_with_parent=True,
    )
    if args.stop:
        was_running = sb.pid_file.exists()
        sb.stop()
        print(f"{'stopped the' if was_running else 'no'} MariaDB sandbox running in {sb.datadir}")
        return 0

    stop_requested = False

    def _on_signal(signum: int, _frame: object) -> None:
        nonlocal stop_requested
        stop_requested = True

    signal.signal(signal.SIGTERM, _on_signal)
    signal.signal(signal.SIGINT, _on_signal)
    try:
        sb.start()
    except SandboxError as e:
        print(f"error: {e}", file=sys.stderr)
        sb.stop()
        return 1
    try:
        if args.info_file:
            tmp = args.info_file.with_suffix(".tmp")
            tmp.write_text(json.dumps(sb.info(), indent=2))
            tmp.chmod(0o600)
            tmp.replace(args.info_file)
        print(f"MariaDB sandbox running (pid {sb.pid}, {sb.thread_handling}), datadir {sb.datadir}")
        print(f"  socket: {sb.socket}   (root, no password: mariadb -S {sb.socket} -uroot)")
        for user in PASSWORDS:
            dsn = sb.safe_dsn(user) if args.hide_passwords else sb.dsn(user)
            print(f"  {user:<18} {dsn}")
        if sb.extra_port:
            print(f"  extra_port: {sb.extra_port}")
        print("Press Ctrl-C to stop.", flush=True)
        deadline = time.monotonic() + args.max_hours * 3600
        while not stop_requested and time.monotonic() < deadline:
            if not sb.running:
                print(f"error: mariadbd exited unexpectedly; see {sb.log_file}", file=sys.stderr)
                return 1
            time.sleep(0.5)
    finally:
        print("stopping MariaDB sandbox ...", file=sys.stderr, flush=True)
        sb.stop()
        if args.info_file:
            with contextlib.suppress(FileNotFoundError):
                args.info_file.unlink()
        print("MariaDB sandbox stopped", file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
