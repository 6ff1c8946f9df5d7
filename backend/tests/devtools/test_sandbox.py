"""The sandbox server is real, loopback-only, pool-configured, and leaves nothing behind."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pymysql
import pytest

from poolscope_dev.sandbox import (
    MONITOR_USER,
    NOPROC_USER,
    PASSWORDS,
    SBTEST_USER,
    MariaDBSandbox,
)
from poolscope_dev.supervisor import pid_alive
from tests.waiting import wait_for

pytestmark = pytest.mark.live  # sandboxes of its own (tests/conftest.py lanes)


def _one(conn: pymysql.connections.Connection, sql: str) -> object:
    with conn.cursor() as cur:
        cur.execute(sql)
        row = cur.fetchone()
        assert row is not None
        return row[0]


def _listening_addresses(port: int) -> set[str]:
    """Local addresses with a TCP socket in LISTEN state on `port`, from /proc/net/tcp{,6}."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            local, state = fields[1], fields[3]
            addr_hex, port_hex = local.rsplit(":", 1)
            if state == "0A" and int(port_hex, 16) == port:
                found.add(addr_hex)
    return found


def test_pool_is_on_with_requested_settings(mariadb: MariaDBSandbox) -> None:
    conn = mariadb.admin_connect()
    try:
        assert _one(conn, "SELECT @@thread_handling") == "pool-of-threads"
        assert _one(conn, "SELECT @@thread_pool_size") == 2
        assert _one(conn, "SELECT @@thread_pool_exact_stats") == 1
        assert _one(conn, "SELECT @@thread_pool_stall_limit") == 500
        assert _one(conn, "SELECT @@character_set_server") == "utf8mb4"
        assert _one(conn, "SELECT @@extra_port") == mariadb.extra_port > 0
        assert _one(conn, "SELECT COUNT(*) FROM information_schema.THREAD_POOL_GROUPS") >= 2
    finally:
        conn.close()


def test_listens_only_on_loopback(mariadb: MariaDBSandbox) -> None:
    conn = mariadb.connect(MONITOR_USER)
    try:
        assert _one(conn, "SELECT @@bind_address") == "127.0.0.1"
        assert _one(conn, "SELECT @@skip_networking") == 0
    finally:
        conn.close()
    # 0100007F is 127.0.0.1 in /proc/net/tcp's little-endian hex.
    assert _listening_addresses(mariadb.port) == {"0100007F"}
    assert _listening_addresses(mariadb.extra_port) == {"0100007F"}


def test_extra_port_answers(mariadb: MariaDBSandbox) -> None:
    conn = mariadb.connect(MONITOR_USER, extra=True)
    try:
        assert _one(conn, "SELECT 1") == 1
        # The extra port is served by one-thread-per-connection, not a pool group.
        assert _one(conn, "SELECT @@extra_port") == mariadb.extra_port
    finally:
        conn.close()


def test_monitor_user_reads_innodb_trx_and_noproc_gets_1227(mariadb: MariaDBSandbox) -> None:
    mon = mariadb.connect(MONITOR_USER)
    try:
        assert _one(mon, "SELECT COUNT(*) FROM information_schema.INNODB_TRX") >= 0
    finally:
        mon.close()
    noproc = mariadb.connect(NOPROC_USER)
    try:
        with pytest.raises(pymysql.err.OperationalError) as err:
            _one(noproc, "SELECT COUNT(*) FROM information_schema.INNODB_TRX")
        assert err.value.args[0] == 1227
        # Pool tables need no privilege at all.
        assert _one(noproc, "SELECT COUNT(*) FROM information_schema.THREAD_POOL_GROUPS") >= 2
    finally:
        noproc.close()


def test_every_user_logs_in_over_tcp_and_dsn_shape(mariadb: MariaDBSandbox) -> None:
    for user in PASSWORDS:
        conn = mariadb.connect(user)
        conn.close()
    assert mariadb.dsn(MONITOR_USER) == (
        f"mysql://{MONITOR_USER}:{PASSWORDS[MONITOR_USER]}@127.0.0.1:{mariadb.port}/"
    )
    assert "***" in mariadb.safe_dsn(MONITOR_USER)
    assert PASSWORDS[MONITOR_USER] not in mariadb.safe_dsn(MONITOR_USER)
    sb = mariadb.connect(SBTEST_USER, database="sbtest")
    try:
        with sb.cursor() as cur:
            cur.execute("CREATE TABLE IF NOT EXISTS smoke (id INT PRIMARY KEY)")
            cur.execute("DROP TABLE smoke")
    finally:
        sb.close()


def test_root_is_socket_only(mariadb: MariaDBSandbox) -> None:
    with pytest.raises(pymysql.err.OperationalError) as err:
        pymysql.connect(host="127.0.0.1", port=mariadb.port, user="root", password="", connect_timeout=5)
    assert err.value.args[0] == 1045


def test_pool_off_server(mariadb_pool_off: MariaDBSandbox) -> None:
    conn = mariadb_pool_off.connect(MONITOR_USER)
    try:
        assert _one(conn, "SELECT @@thread_handling") == "one-thread-per-connection"
        assert _one(conn, "SELECT @@extra_port") == 0
        assert _one(conn, "SELECT COUNT(*) FROM information_schema.THREAD_POOL_GROUPS") == 0
    finally:
        conn.close()
    assert mariadb_pool_off.extra_port == 0


def test_restart_reuses_datadir_and_stop_leaves_no_process(tmp_path: Path) -> None:
    sb = MariaDBSandbox(tmp_path / "sb", thread_pool_size=1)
    try:
        sb.start()
        pid = sb.pid
        assert pid is not None
        conn = sb.connect(SBTEST_USER, database="sbtest")
        with conn.cursor() as cur:
            cur.execute("CREATE TABLE kept (id INT PRIMARY KEY)")
            cur.execute("INSERT INTO kept VALUES (7)")
        conn.close()
        sb.stop()
        assert not pid_alive(pid)
        assert not sb.running

        sb.start()  # same datadir: no re-install, accounts still work, data kept
        conn = sb.connect(SBTEST_USER, database="sbtest")
        assert _one(conn, "SELECT id FROM kept") == 7
        conn.close()
        pid = sb.pid
    finally:
        sb.destroy()
    assert pid is not None and not pid_alive(pid)
    assert not (tmp_path / "sb" / "data").exists()


def test_cli_prints_dsns_and_stops_on_sigterm(tmp_path: Path) -> None:
    info_file = tmp_path / "info.json"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "poolscope_dev.sandbox",
            "--dir",
            str(tmp_path / "cli"),
            "--info-file",
            str(info_file),
            "--thread-pool-size",
            "1",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        wait_for(
            lambda: info_file.exists() or proc.poll() is not None,
            60,
            "sandbox CLI did not come up",
            every_s=0.1,
        )
        assert info_file.exists(), "sandbox CLI did not come up"
        info = json.loads(info_file.read_text())
        assert oct(info_file.stat().st_mode & 0o777) == "0o600"
        server_pid = info["pid"]
        conn = pymysql.connect(
            host="127.0.0.1",
            port=info["port"],
            user=MONITOR_USER,
            password=PASSWORDS[MONITOR_USER],
            connect_timeout=5,
        )
        assert _one(conn, "SELECT @@thread_pool_size") == 1
        conn.close()
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
    assert proc.returncode == 0, out
    assert f"{MONITOR_USER:<18} mysql://{MONITOR_USER}:" in out
    assert "MariaDB sandbox stopped" in out
    assert not pid_alive(server_pid)
    assert not info_file.exists()


def test_server_dies_with_its_parent(tmp_path: Path) -> None:
    """A killed test run or demo must not leave mariadbd behind (PR_SET_PDEATHSIG)."""
    code = (
        "import sys, time; from pathlib import Path;"
        "from poolscope_dev.sandbox import MariaDBSandbox;"
        f"sb = MariaDBSandbox(Path({str(tmp_path / 'orphan')!r}), thread_pool_size=1); sb.start();"
        "print(sb.pid, flush=True); time.sleep(120)"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        server_pid = int(proc.stdout.readline())
        assert pid_alive(server_pid)
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
    with contextlib.suppress(AssertionError):  # the assertion below says it
        wait_for(lambda: not pid_alive(server_pid), 30, "", every_s=0.1)
    survived = pid_alive(server_pid)
    if survived:  # don't leak it even when the assertion fails
        MariaDBSandbox(tmp_path / "orphan").stop()
    assert not survived
