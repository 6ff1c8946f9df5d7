"""``python -m poolscope_dev.loadgen``: bounded load against a loopback MariaDB/MySQL server."""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import sys

from poolscope_dev.loadgen import MODES, LoadGenerator
from poolscope_dev.loadtarget import LoadgenError


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="python -m poolscope_dev.loadgen",
        description="Generate bounded load against a loopback MariaDB/MySQL server.",
    )
    p.add_argument("--dsn", required=True, help="mysql://user:pass@127.0.0.1:PORT/[db] (loopback only)")
    p.add_argument("--mode", choices=MODES, default="waves")
    p.add_argument("--duration", type=float, default=60.0, help="seconds (max 86400)")
    p.add_argument("--connections", type=int, default=None, help="default: waves 64, stall 6, trx 12")
    p.add_argument("--wave-period", type=float, default=40.0, help="waves: seconds per wave")
    p.add_argument("--stall-seconds", type=float, default=3.0, help="stall: length of each statement")
    p.add_argument("--progress-every", type=float, default=10.0, help="seconds between progress lines")
    p.add_argument("--quiet", action="store_true", help="only warnings and the summary")
    return p.parse_args(argv)


async def _amain(args: argparse.Namespace) -> int:
    gen = LoadGenerator(
        args.dsn,
        args.mode,
        args.duration,
        args.connections,
        wave_period_s=args.wave_period,
        stall_seconds=args.stall_seconds,
        progress_every_s=args.progress_every,
    )
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, gen.stop)
    stats = await gen.run()
    print(stats.summary(), flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    args = _parse_args(argv)
    logging.basicConfig(
        level=logging.WARNING if args.quiet else logging.INFO,
        format="%(asctime)s loadgen: %(message)s",
        stream=sys.stderr,
    )
    try:
        return asyncio.run(_amain(args))
    except LoadgenError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
