"""Capture what Poolscope's statements return on a live server into a fixture directory.

    python -m poolscope_dev.capture --dsn mysql://user:pw@host:3306/ --out DIR

Writes discovery_variables.json, discovery_tables.json and one <collector>.json per collector
that applies to the server, in the format poolscope_dev/replay.py serves. This is how a
user of a flavor we cannot install (Percona, MySQL Enterprise, AliSQL) can send us their
server's real output; the mariadb/10.11 fixtures were made with it. Review the files before
sharing them: PROCESSLIST and INNODB_TRX rows contain user names, hosts and SQL text.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import decimal
import json
import sys
from pathlib import Path
from typing import Any

from pydantic import SecretStr

from poolscope.config import TargetConfig
from poolscope.dsn import redact_dsn
from poolscope.poller.collectors import all_collectors
from poolscope.poller.collectors.session_lookup import EVERY_SESSION_SQL
from poolscope.poller.connection import TargetConnection, describe_mysql_error
from poolscope.poller.discovery import discovery_statements


def jsonable(value: Any) -> Any:
    if isinstance(value, decimal.Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, datetime.datetime | datetime.date):
        return value.isoformat()
    return value


def _rows(rows: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    # Column names upper-cased as servers report most of them; replay lower-cases them again.
    return [{k.upper(): jsonable(v) for k, v in row.items()} for row in rows or []]


async def capture(dsn: str, out: Path) -> list[str]:
    """Write the fixture files; returns the collectors that failed (their files are not written)."""
    connection = TargetConnection(TargetConfig(name="capture", dsn=SecretStr(dsn), extra_port=0))
    await connection.connect()
    assert connection.server is not None
    server = connection.server
    failed: list[str] = []
    try:
        discovery = await connection.run_batch(discovery_statements())
        for name, result in zip(("discovery_variables", "discovery_tables"), discovery, strict=True):
            _write(out / f"{name}.json", {"rows": _rows(result.rows)})
        # Every session's identity, for the poller's lookups of idle (queued) sessions by id.
        (sessions,) = await connection.run_batch([EVERY_SESSION_SQL])
        if sessions.error is None:
            _write(out / "sessions.json", {"sql": EVERY_SESSION_SQL, "rows": _rows(sessions.rows)})
        collectors = [c for c in all_collectors() if c.applies(server) is None]
        results = await connection.run_batch([c.sql(server) for c in collectors])
        for collector, result in zip(collectors, results, strict=True):
            if result.error is not None:
                failed.append(f"{collector.name}: {describe_mysql_error(result.error)}")
                continue
            _write(out / f"{collector.name}.json", {"sql": collector.sql(server), "rows": _rows(result.rows)})
    finally:
        await connection.close()
    return failed


def _write(path: Path, data: dict[str, Any]) -> None:
    path.write_text(json.dumps(data, indent=1, sort_keys=False) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--dsn", required=True, help="mysql://user:password@host:port/ (monitoring user)")
    parser.add_argument("--out", required=True, type=Path, help="fixture directory to write")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    try:
        failed = asyncio.run(capture(args.dsn, args.out))
    except Exception as exc:
        print(f"capture from {redact_dsn(args.dsn)} failed: {exc}", file=sys.stderr)
        return 1
    for line in failed:
        print(f"not captured: {line}", file=sys.stderr)
    print(f"captured {redact_dsn(args.dsn)} into {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
