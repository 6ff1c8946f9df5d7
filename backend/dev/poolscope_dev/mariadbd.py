"""A sandbox's server side (poolscope_dev/sandbox.py): mariadbd's command line, the datadir, accounts."""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
from typing import TYPE_CHECKING

from poolscope_dev.supervisor import pid_alive, pid_cmdline, stop_pid, tail

if TYPE_CHECKING:
    from poolscope_dev.sandbox import MariaDBSandbox

log = logging.getLogger("poolscope_dev.sandbox")

MARIADBD_CANDIDATES = ("/usr/sbin/mariadbd", "/usr/sbin/mysqld", "mariadbd", "mysqld")
INSTALL_DB_CANDIDATES = ("mariadb-install-db", "mysql_install_db")


class SandboxError(RuntimeError):
    """The sandbox server could not be installed, started or stopped."""


def find_binary(candidates: tuple[str, ...], what: str) -> str:
    for cand in candidates:
        path = cand if os.path.isabs(cand) else shutil.which(cand)
        if path and os.access(path, os.X_OK):
            return path
    raise SandboxError(
        f"{what} not found (looked for {', '.join(candidates)}); "
        "install the Debian package mariadb-server (scripts/install-system.sh)"
    )


def _program(sb: MariaDBSandbox, relative: str, candidates: tuple[str, ...], what: str) -> str:
    """The sandbox line's program: from its basedir (a MariaDB tree unpacked from Maven Central,
    poolscope_dev/mariadb_lines.py), else Debian's."""
    if sb.basedir is None:
        return find_binary(candidates, what)
    path = sb.basedir / relative
    if not os.access(path, os.X_OK):
        raise SandboxError(
            f"{what} not found at {path} (MariaDB {sb.line}; scripts/install-system.sh fetches it)"
        )
    return str(path)


def _basedir_args(sb: MariaDBSandbox) -> list[str]:
    return [] if sb.basedir is None else [f"--basedir={sb.basedir}"]


def server_args(sb: MariaDBSandbox) -> list[str]:
    """The mariadbd command line of `sb`: --no-defaults, loopback only, its pool settings."""
    args = [
        _program(sb, "bin/mariadbd", MARIADBD_CANDIDATES, "mariadbd"),
        "--no-defaults",
        *_basedir_args(sb),
        f"--datadir={sb.datadir}",
        f"--socket={sb.socket}",
        f"--pid-file={sb.pid_file}",
        f"--log-error={sb.log_file}",
        f"--tmpdir={sb.tmpdir}",
        f"--bind-address={sb.host}",
        f"--port={sb.port}",
        "--skip-name-resolve",
        "--skip-log-bin",
        f"--thread-handling={sb.thread_handling}",
        f"--max-connections={sb.max_connections}",
        "--character-set-server=utf8mb4",
        "--collation-server=utf8mb4_general_ci",
        f"--innodb-buffer-pool-size={sb.innodb_buffer_pool_size}",
        # A sandbox trades durability for less fsync noise in benchmarks.
        "--innodb-flush-log-at-trx-commit=2",
        "--innodb-log-file-size=32M",
        "--lower-case-table-names=0",
    ]
    if sb.thread_handling == "pool-of-threads":
        args += [
            f"--thread-pool-size={sb.thread_pool_size}",
            f"--thread-pool-stall-limit={sb.stall_limit_ms}",
            f"--thread-pool-exact-stats={'ON' if sb.exact_stats else 'OFF'}",
        ]
    if sb.extra_port:
        args += [
            f"--extra-port={sb.extra_port}",
            f"--extra-max-connections={sb.extra_max_connections}",
        ]
    if sb.tls is not None:
        args += [f"--ssl-ca={sb.tls.ca}", f"--ssl-cert={sb.tls.cert}", f"--ssl-key={sb.tls.key}"]
    if os.geteuid() == 0:
        args.append("--user=root")
    args += list(sb.extra_args)
    return args


def install_datadir(sb: MariaDBSandbox, timeout_s: float) -> None:
    """mariadb-install-db into a side directory, renamed into place once complete."""
    install_db = _program(sb, "scripts/mariadb-install-db", INSTALL_DB_CANDIDATES, "mariadb-install-db")
    tmp = sb.base_dir / "data.installing"
    shutil.rmtree(tmp, ignore_errors=True)
    cmd = [
        install_db,
        "--no-defaults",
        *_basedir_args(sb),
        f"--datadir={tmp}",
        "--auth-root-authentication-method=normal",
        "--skip-test-db",
        "--skip-name-resolve",
        f"--tmpdir={sb.tmpdir}",  # passed on to the bootstrap mariadbd
    ]
    if os.geteuid() == 0:
        cmd.append("--user=root")
    install_log = sb.base_dir / "install-db.log"
    log.info("initialising MariaDB datadir %s", sb.datadir)
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
            f"mariadb-install-db failed (exit {res.returncode}); see {install_log}:\n" + tail(install_log)
        )
    # Install into a side dir and rename, so an interrupted install is never "reused".
    shutil.rmtree(sb.datadir, ignore_errors=True)
    tmp.rename(sb.datadir)


def setup_accounts(sb: MariaDBSandbox) -> None:
    """Root socket-only, the sandbox accounts with their grants, the sbtest database (idempotent)."""
    from poolscope_dev.sandbox import GRANTS, PASSWORDS, SBTEST_DB, USER_HOSTS

    conn = sb.admin_connect()
    try:
        with conn.cursor() as cur:
            # Root stays socket-only: drop the TCP root accounts and anonymous users
            # that mariadb-install-db creates.
            cur.execute(
                "SELECT User, Host FROM mysql.user WHERE (User = 'root' AND Host <> 'localhost') OR User = ''"
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


def stop_stale_server(sb: MariaDBSandbox, timeout_s: float = 30) -> None:
    """Stop a mariadbd still running on this datadir (e.g. left by a killed run)."""
    try:
        pid = int(sb.pid_file.read_text().strip())
    except (OSError, ValueError):
        return
    if not pid_alive(pid) or str(sb.datadir) not in pid_cmdline(pid):
        return
    log.warning("stopping mariadbd pid %s left running on %s", pid, sb.datadir)
    if not stop_pid(pid, timeout_s):
        raise SandboxError(f"could not stop mariadbd pid {pid}")
