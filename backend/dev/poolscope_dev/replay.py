"""Replay captured server output as if it came from a live server (a test and development facility).

A target whose DSN is `fixture://<flavor>/<version>` (e.g. `fixture://percona/8.4`) is served by
FixtureConnection: the real poller, store, API and UI run unchanged, but every statement is
answered from `<fixtures root>/<flavor>/<version>/` instead of a server. `register(root)` plugs
it into the product's DSN scheme registry (poller/connection.py); the tests pass
backend/tests/fixtures (tests/conftest.py), as does `python -m poolscope_dev poolscope`. This is how
flavors that cannot be installed here (Percona, MySQL Enterprise, AliSQL) are exercised end to
end; it is not a way to monitor anything, and each such target says so in its notes.

A fixture directory holds:
  discovery_variables.json  rows of the discovery SHOW GLOBAL VARIABLES (Variable_name, Value)
  discovery_tables.json     rows of the discovery information_schema.TABLES query
  sessions.json             optional: every session's ID, USER, HOST, DB, which answers the
                            poller's lookups of idle sessions by id (else processlist.json does)
  <collector name>.json     the rows that collector's SQL returns, as
                            {"sql": "...", "rows": [...]} or {"frames": [[...], ...]} (one frame
                            per poll, cycled), optionally with "advance": {name: n} which adds
                            n × poll number to that column (or to the Value of that Variable_name
                            row) so counters grow and rates are not all zero; or
                            {"error": [code, "message"]} for a statement the server refused.
A collector that applies but has no file fails that poll with MySQL error 1146, as a missing
table would. `python -m poolscope_dev.capture` writes such a directory from a live server.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from asyncmy import errors as driver_errors

from poolscope.config import TargetConfig
from poolscope.poller.connection import (
    ConnectError,
    StatementResult,
    TargetConnection,
    register_scheme,
)
from poolscope.poller.discovery import server_from_discovery
from poolscope.schemas import ConnectionInfo

SCHEME = "fixture"
FIXTURE_SCHEME = f"{SCHEME}://"
# The poller's on-demand lookup of idle sessions by id (poller/collectors/session_lookup.py).
LOOKUP_IDS = re.compile(r"information_schema\.PROCESSLIST WHERE ID IN \(([\d, ]*)\)")
# The poller's lookups while the pool is under pressure (thread_lookup.py, trx_lookup.py), answered
# from threads.json (THREAD_ID, PROCESSLIST_ID) and innodb_trx.json.
THREAD_IDS = re.compile(r"performance_schema\.threads WHERE THREAD_ID IN \(([\d, ]*)\)")
TRX_IDS = re.compile(r"information_schema\.INNODB_TRX WHERE trx_id IN \(([\d', ]*)\)")
REPLAY_NOTE = "Replaying captured output from {where} (test/development facility): not a live server."


def register(root: Path) -> None:
    """Serve `fixture://` targets from `root` (e.g. backend/tests/fixtures) in this process."""
    root = root.resolve()
    if not root.is_dir():
        raise ValueError(f"no fixtures directory at {root}")
    register_scheme(SCHEME, lambda config: FixtureConnection(config, root))


def fixture_dir(dsn: str, root: Path) -> Path:
    """`fixture://percona/8.4` -> <root>/percona/8.4; `fixture:///abs/dir` -> /abs/dir."""
    rest = dsn[len(FIXTURE_SCHEME) :].rstrip("/")
    if ".." in Path(rest).parts or not rest:
        raise ConnectError(f"fixture DSN {dsn!r} must name <flavor>/<version> under {root}")
    return Path(rest) if rest.startswith("/") else root / rest


def _load(path: Path) -> Any:
    with path.open(encoding="utf-8") as handle:
        return json.load(handle)


def _lower(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    # The live connection hands collectors lower-cased column names (connection._run_multi).
    return [{str(k).lower(): v for k, v in row.items()} for row in rows]


def rows_for_poll(captured: dict[str, Any], poll: int) -> list[dict[str, Any]]:
    """The rows of one captured file as the `poll`-th poll sees them (frames cycled, counters advanced)."""
    frames = captured.get("frames")
    rows = _lower(frames[poll % len(frames)] if frames else captured.get("rows", []))
    advance = {str(k).lower(): v for k, v in captured.get("advance", {}).items()}
    if not advance:
        return rows
    for row in rows:
        for name, step in advance.items():
            if name in row and row[name] is not None:
                row[name] = row[name] + step * poll
            elif str(row.get("variable_name", "")).lower() == name:
                row["value"] = str(float(row["value"]) + step * poll).removesuffix(".0")
    return rows


class FixtureConnection(TargetConnection):
    """A TargetConnection that answers from a fixture directory; everything above it is the real code."""

    def __init__(self, config: TargetConfig, root: Path) -> None:
        super().__init__(config)
        self.root = root
        self.directory = root
        self.polls = 0
        self._files: dict[str, str] = {}

    async def connect(self) -> None:
        # Resolved here, not in __init__: a bad DSN marks this target down instead of failing start-up.
        self.directory = fixture_dir(self.config.dsn.get_secret_value(), self.root)
        if not (self.directory / "discovery_variables.json").is_file():
            raise ConnectError(f"no fixture at {self.directory} (discovery_variables.json missing)")
        variables = _lower(_load(self.directory / "discovery_variables.json")["rows"])
        tables_file = self.directory / "discovery_tables.json"
        tables = _lower(_load(tables_file)["rows"]) if tables_file.is_file() else []
        self.server = server_from_discovery(variables, tables)
        where = (
            f"{self.root.parent.name}/{self.root.name}/{self.directory.relative_to(self.root)}"
            if self.directory.is_relative_to(self.root)
            else str(self.directory)
        )
        self.server.notes.insert(0, REPLAY_NOTE.format(where=where))
        self.info = ConnectionInfo(host="fixture", port=0, port_kind="fixture")
        self.conn = True  # type: ignore[assignment]  # "connected": the poller only checks for None
        from poolscope.poller.collectors import all_collectors

        self._files = {sql: c.name for c in all_collectors() for sql in c.statements(self.server)}

    async def run_batch(self, statements: list[str]) -> list[StatementResult]:
        if self.conn is None:
            raise ConnectError("not connected")
        results = []
        # A poll's second round trip (lookups by id only) is part of the same poll: same frame.
        polled = False
        for statement in statements:
            if (lookup := LOOKUP_IDS.search(statement)) is not None:
                results.append(StatementResult(self._lookup(lookup.group(1), self.polls - 1), None, 0.0))
                continue
            if (lookup := THREAD_IDS.search(statement)) is not None:
                rows = self._rows_by("threads", "thread_id", lookup.group(1), self.polls - 1)
                results.append(StatementResult(rows, None, 0.0))
                continue
            if (lookup := TRX_IDS.search(statement)) is not None:
                rows = self._rows_by("innodb_trx", "trx_id", lookup.group(1), self.polls - 1)
                results.append(StatementResult(rows, None, 0.0))
                continue
            polled = True
            name = self._files.get(statement)
            path = self.directory / f"{name}.json"
            if name is None or not path.is_file():
                error = driver_errors.ProgrammingError(
                    1146,
                    f"fixture {self.directory.name} has no captured output for {name or statement[:60]!r}",
                )
                results.append(StatementResult(None, error, 0.0))
                continue
            captured = _load(path)
            if "error" in captured:
                # A server refusal as captured, e.g. [1142, "SELECT command denied ..."].
                code, message = captured["error"]
                results.append(StatementResult(None, driver_errors.OperationalError(code, message), 0.0))
                continue
            results.append(StatementResult(rows_for_poll(captured, self.polls), None, 0.0))
        if polled:
            self.polls += 1
        return results

    def _lookup(self, ids: str, poll: int) -> list[dict[str, Any]]:
        """Answer a lookup by id from the captured sessions (else PROCESSLIST), as the server would."""
        wanted = {int(i) for i in ids.split(",") if i.strip()}
        paths = [self.directory / name for name in ("sessions.json", "processlist.json")]
        path = next((p for p in paths if p.is_file()), None)
        sessions = rows_for_poll(_load(path), poll) if path else []
        return [
            {k: row.get(k) for k in ("id", "user", "host", "db")}
            for row in sessions
            if row.get("id") in wanted
        ]

    def _rows_by(self, name: str, column: str, ids: str, poll: int) -> list[dict[str, Any]]:
        """Rows of <name>.json whose `column` is one of `ids`, as a lookup by id would return."""
        wanted = {i.strip(" '") for i in ids.split(",") if i.strip(" '")}
        path = self.directory / f"{name}.json"
        rows = rows_for_poll(_load(path), poll) if path.is_file() else []
        return [row for row in rows if str(row.get(column)) in wanted]

    async def close(self) -> None:
        self.conn = None
