"""Helpers to prepare and run sysbench OLTP against a loopback server (the sandbox, usually).

Used by the demo (when sysbench is installed) and by benchmarks:

    target = SysbenchTarget.from_sandbox(sb)
    prepare(target)                                  # 4 tables x 10000 rows, skipped if present
    result = run(target, "oltp_read_write", threads=64, time_s=30)
    result.tps

CLI: ``python -m poolscope_dev.sysbench {prepare,run,cleanup} --dsn mysql://sbtest:PW@127.0.0.1:PORT/sbtest``.
"""

from __future__ import annotations

import argparse
import atexit
import functools
import logging
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pymysql

from poolscope_dev import supervisor
from poolscope_dev.loadtarget import LoadgenError, parse_dsn

if TYPE_CHECKING:
    from poolscope_dev.sandbox import MariaDBSandbox

log = logging.getLogger(__name__)

TESTS = ("oltp_read_write", "oltp_read_only", "oltp_write_only", "oltp_point_select")
DEFAULT_TABLES = 4
DEFAULT_TABLE_SIZE = 10_000
MAX_TIME_S = 24 * 3600


class SysbenchError(RuntimeError):
    """sysbench is missing, failed, or printed something we could not parse."""


@dataclass(frozen=True)
class SysbenchTarget:
    host: str
    port: int
    user: str
    password: str
    database: str

    @classmethod
    def from_dsn(cls, dsn: str) -> SysbenchTarget:
        """From ``mysql://user:pass@127.0.0.1:port/db``; non-loopback hosts are refused."""
        try:
            p = parse_dsn(dsn, default_database="sbtest")
        except LoadgenError as e:
            raise SysbenchError(str(e)) from None
        return cls(p.host, p.port, p.user, p.password, p.database)

    @classmethod
    def from_sandbox(cls, sb: MariaDBSandbox) -> SysbenchTarget:
        from poolscope_dev.sandbox import SBTEST_DB, SBTEST_PASSWORD, SBTEST_USER

        return cls(sb.host, sb.port, SBTEST_USER, SBTEST_PASSWORD, SBTEST_DB)

    def safe(self) -> str:
        return f"mysql://{self.user}:***@{self.host}:{self.port}/{self.database}"


@dataclass(frozen=True)
class SysbenchResult:
    test: str
    threads: int
    time_s: float
    transactions: int
    tps: float
    queries: int
    qps: float
    ignored_errors: int
    reconnects: int
    latency_avg_ms: float | None
    latency_p95_ms: float | None
    output: str


def available() -> bool:
    return shutil.which("sysbench") is not None


def _sysbench() -> str:
    path = shutil.which("sysbench")
    if path is None:
        raise SysbenchError("sysbench not installed (Debian package sysbench; scripts/install-system.sh)")
    return path


@functools.cache
def _options_file(password: str) -> str:
    """A file of sysbench options (--config-file) holding the password, readable by this user only,
    in a directory removed when this process exits: on the command line it would show in `ps` to
    every user of the machine. sysbench reads it once, at start."""
    if "\n" in password or "\r" in password:
        raise SysbenchError("a password with a line break cannot be given to sysbench")
    directory = tempfile.mkdtemp(prefix="poolscope-sysbench-")  # mode 0700
    atexit.register(shutil.rmtree, directory, True)
    path = os.path.join(directory, "options")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(f"mysql-password={password}\n")
    return path


def command(
    target: SysbenchTarget,
    test: str,
    action: str,
    *,
    tables: int = DEFAULT_TABLES,
    table_size: int = DEFAULT_TABLE_SIZE,
    threads: int = 1,
    time_s: int | None = None,
    report_interval: int = 0,
    extra_args: tuple[str, ...] = (),
) -> list[str]:
    """The sysbench argv; the password is in an options file, not in the argv."""
    if test not in TESTS:
        raise SysbenchError(f"unknown sysbench test {test!r}; choose one of {', '.join(TESTS)}")
    cmd = [
        _sysbench(),
        test,
        "--db-driver=mysql",
        f"--mysql-host={target.host}",
        f"--mysql-port={target.port}",
        f"--mysql-user={target.user}",
        f"--config-file={_options_file(target.password)}",
        f"--mysql-db={target.database}",
        f"--tables={tables}",
        f"--table-size={table_size}",
        f"--threads={threads}",
    ]
    if time_s is not None:
        cmd += [f"--time={time_s}", "--events=0"]
    if report_interval:
        cmd.append(f"--report-interval={report_interval}")
    cmd += list(extra_args)
    cmd.append(action)
    return cmd


def _connect(target: SysbenchTarget) -> pymysql.connections.Connection[pymysql.cursors.Cursor]:
    return pymysql.connect(
        host=target.host,
        port=target.port,
        user=target.user,
        password=target.password,
        database=target.database,
        connect_timeout=10,
        read_timeout=60,
        autocommit=True,
    )


def prepared(
    target: SysbenchTarget, tables: int = DEFAULT_TABLES, table_size: int = DEFAULT_TABLE_SIZE
) -> bool:
    """True when sbtest1..N exist and each holds `table_size` rows."""
    conn = _connect(target)
    try:
        with conn.cursor() as cur:
            for i in range(1, tables + 1):
                cur.execute(
                    "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE()"
                    " AND TABLE_NAME = %s",
                    (f"sbtest{i}",),
                )
                row = cur.fetchone()
                if not row or not row[0]:
                    return False
                cur.execute(f"SELECT COUNT(*) FROM sbtest{i}")
                row = cur.fetchone()
                if not row or row[0] != table_size:
                    return False
        return True
    finally:
        conn.close()


def _run(cmd: list[str], timeout_s: float) -> str:
    log.info("running %s", shlex.join(cmd))
    try:
        res = subprocess.run(
            cmd, capture_output=True, text=True, timeout=timeout_s, stdin=subprocess.DEVNULL, check=False
        )
    except subprocess.TimeoutExpired:
        raise SysbenchError(f"sysbench did not finish within {timeout_s:.0f}s: {shlex.join(cmd)}") from None
    if res.returncode != 0:
        tail = "\n".join((res.stdout + res.stderr).strip().splitlines()[-15:])
        raise SysbenchError(f"sysbench failed (exit {res.returncode}): {shlex.join(cmd)}\n{tail}")
    return res.stdout


def cleanup(target: SysbenchTarget, tables: int = DEFAULT_TABLES, timeout_s: float = 120) -> None:
    _run(command(target, "oltp_read_write", "cleanup", tables=tables), timeout_s)


def prepare(
    target: SysbenchTarget,
    tables: int = DEFAULT_TABLES,
    table_size: int = DEFAULT_TABLE_SIZE,
    *,
    force: bool = False,
    timeout_s: float = 300,
) -> bool:
    """Create and fill the sysbench tables unless they are already there. True if it (re)built."""
    if not force and prepared(target, tables, table_size):
        log.info("sysbench tables already prepared on %s", target.safe())
        return False
    cleanup(target, tables, timeout_s)
    _run(
        command(
            target,
            "oltp_read_write",
            "prepare",
            tables=tables,
            table_size=table_size,
            threads=min(tables, 4),
        ),
        timeout_s,
    )
    return True


_NUM = r"([0-9]+(?:\.[0-9]+)?)"


def parse_output(text: str, test: str = "", threads: int = 0, time_s: float = 0.0) -> SysbenchResult:
    """Pull totals out of sysbench 1.0's final report."""

    def grab(pattern: str) -> re.Match[str] | None:
        return re.search(pattern, text)

    trx = grab(rf"transactions:\s+(\d+)\s+\({_NUM} per sec\.\)")
    queries = grab(rf"queries:\s+(\d+)\s+\({_NUM} per sec\.\)")
    if trx is None or queries is None:
        tail = "\n".join(text.strip().splitlines()[-10:])
        raise SysbenchError(f"could not find the transactions/queries totals in sysbench output:\n{tail}")
    ignored = grab(r"ignored errors:\s+(\d+)")
    reconnects = grab(r"reconnects:\s+(\d+)")
    avg = grab(rf"avg:\s+{_NUM}")
    p95 = grab(rf"95th percentile:\s+{_NUM}")
    thr = grab(r"Number of threads:\s+(\d+)")
    total_time = grab(rf"total time:\s+{_NUM}s")
    return SysbenchResult(
        test=test,
        threads=int(thr.group(1)) if thr else threads,
        time_s=float(total_time.group(1)) if total_time else time_s,
        transactions=int(trx.group(1)),
        tps=float(trx.group(2)),
        queries=int(queries.group(1)),
        qps=float(queries.group(2)),
        ignored_errors=int(ignored.group(1)) if ignored else 0,
        reconnects=int(reconnects.group(1)) if reconnects else 0,
        latency_avg_ms=float(avg.group(1)) if avg else None,
        latency_p95_ms=float(p95.group(1)) if p95 else None,
        output=text,
    )


def run(
    target: SysbenchTarget,
    test: str = "oltp_read_write",
    *,
    threads: int = 64,
    time_s: int = 60,
    tables: int = DEFAULT_TABLES,
    table_size: int = DEFAULT_TABLE_SIZE,
    report_interval: int = 0,
    extra_args: tuple[str, ...] = (),
) -> SysbenchResult:
    """One bounded sysbench run (``--time``); returns parsed TPS/QPS/latency."""
    if not 1 <= time_s <= MAX_TIME_S:
        raise SysbenchError(f"time_s must be in [1, {MAX_TIME_S}]")
    cmd = command(
        target,
        test,
        "run",
        tables=tables,
        table_size=table_size,
        threads=threads,
        time_s=time_s,
        report_interval=report_interval,
        extra_args=extra_args,
    )
    out = _run(cmd, timeout_s=time_s + 120)
    return parse_output(out, test, threads, time_s)


def start(
    target: SysbenchTarget,
    test: str = "oltp_read_write",
    *,
    threads: int = 64,
    time_s: int = 300,
    tables: int = DEFAULT_TABLES,
    table_size: int = DEFAULT_TABLE_SIZE,
    report_interval: int = 10,
    stdout: int | None = subprocess.DEVNULL,
    extra_args: tuple[str, ...] = (),
) -> subprocess.Popen[bytes]:
    """Start a bounded sysbench run in the background (own process group); caller waits/stops it."""
    if not 1 <= time_s <= MAX_TIME_S:
        raise SysbenchError(f"time_s must be in [1, {MAX_TIME_S}]")
    cmd = command(
        target,
        test,
        "run",
        tables=tables,
        table_size=table_size,
        threads=threads,
        time_s=time_s,
        report_interval=report_interval,
        extra_args=extra_args,
    )
    log.info("starting %s", shlex.join(cmd))
    return supervisor.start("sysbench", cmd, stdout=stdout, die_with_starter=False).proc


# ---------------------------------------------------------------------- CLI


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m poolscope_dev.sysbench", description=__doc__.splitlines()[0])
    p.add_argument("action", choices=["prepare", "run", "cleanup"])
    p.add_argument("--dsn", required=True, help="mysql://sbtest:PW@127.0.0.1:PORT/sbtest (loopback only)")
    p.add_argument("--test", choices=TESTS, default="oltp_read_write")
    p.add_argument("--tables", type=int, default=DEFAULT_TABLES)
    p.add_argument("--table-size", type=int, default=DEFAULT_TABLE_SIZE)
    p.add_argument("--threads", type=int, default=64)
    p.add_argument("--time", type=int, default=60, help="seconds (run)")
    p.add_argument("--report-interval", type=int, default=0)
    p.add_argument("--force", action="store_true", help="prepare: rebuild even if present")
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s sysbench: %(message)s", stream=sys.stderr)
    try:
        target = SysbenchTarget.from_dsn(args.dsn)
        if args.action == "prepare":
            prepare(target, args.tables, args.table_size, force=args.force)
        elif args.action == "cleanup":
            cleanup(target, args.tables)
        else:
            res = run(
                target,
                args.test,
                threads=args.threads,
                time_s=args.time,
                tables=args.tables,
                table_size=args.table_size,
                report_interval=args.report_interval,
            )
            print(
                f"{res.test}: {res.threads} threads, {res.time_s:.1f}s: tps {res.tps:.2f}, qps {res.qps:.2f}, "
                f"p95 {res.latency_p95_ms} ms, ignored errors {res.ignored_errors}",
                flush=True,
            )
    except (SysbenchError, pymysql.MySQLError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
