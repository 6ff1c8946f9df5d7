"""``python -m poolscope_dev.sandbox``: run a private MariaDB on 127.0.0.1 until Ctrl-C / SIGTERM."""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import signal
import sys
import time
from pathlib import Path

from poolscope_dev.mariadb_lines import DEBIAN_LINE, LINES
from poolscope_dev.sandbox import PASSWORDS, MariaDBSandbox, SandboxError


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
    p.add_argument(
        "--line", default=DEBIAN_LINE, choices=LINES, help="MariaDB line (11.4: from Maven Central)"
    )
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
        line=args.line,
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
