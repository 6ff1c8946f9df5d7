"""The snapshot document: one versioned JSON shape, published as a JSON Schema (docs/reference/snapshot.schema.json).

Readers check `format` and `schema_version`; a new optional field keeps the version, a changed or
removed one bumps it.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import ConfigDict, Field

from poolscope.schemas import Alert, FlightEntry, GroupHolders, SeriesOut, TargetInfo, TargetState
from poolscope.schemas.base import Schema

SCHEMA_VERSION: Literal[1] = 1
FORMAT: Literal["poolscope-snapshot"] = "poolscope-snapshot"

# A raw row of a server table: column name (lower case) -> value as JSON scalar.
Row = dict[str, str | int | float | bool | None]


class SnapshotWindow(Schema):
    """The span of metric history a snapshot holds around its moment."""

    from_: float = Field(alias="from", serialization_alias="from")
    """Start of the window, Unix time in seconds."""
    to: float
    """End of the window."""
    before_s: float
    """Seconds of history before the moment (window_before_s)."""
    after_s: float
    """Seconds of history after it (window_after_s)."""
    complete: bool
    """False until the window after the moment has closed and its metrics are in."""

    model_config = ConfigDict(populate_by_name=True)


class ServerTables(Schema):
    """The server's own tables read once at the moment (raw rows, as the server returned them;
    column names in lower case)."""

    captured_at: float | None = None
    """When they were read, Unix time in seconds."""
    port_kind: str | None = None
    """Which port the capture used: extra_port or port."""
    thread_pool_groups: list[Row] = Field(default_factory=list)
    """information_schema.THREAD_POOL_GROUPS."""
    thread_pool_queues: list[Row] = Field(default_factory=list)
    """information_schema.THREAD_POOL_QUEUES."""
    thread_pool_stats: list[Row] = Field(default_factory=list)
    """information_schema.THREAD_POOL_STATS."""
    thread_pool_waits: list[Row] = Field(default_factory=list)
    """information_schema.THREAD_POOL_WAITS."""
    innodb_trx: list[Row] = Field(default_factory=list)
    """information_schema.INNODB_TRX."""
    innodb_lock_waits: list[Row] = Field(default_factory=list)
    """information_schema.INNODB_LOCK_WAITS."""
    processlist: list[Row] = Field(default_factory=list)
    """The full PROCESSLIST, idle sessions included."""
    global_status: dict[str, str] = Field(default_factory=dict)
    """SHOW GLOBAL STATUS, name -> value."""
    global_variables: dict[str, str] = Field(default_factory=dict)
    """SHOW GLOBAL VARIABLES, name -> value (secret-looking ones `<redacted>`)."""
    errors: dict[str, str] = Field(default_factory=dict)
    """Statements that could not be read, and why (a missing privilege, a timeout during a
    stall)."""


class VariableChange(Schema):
    """A variable changed through Poolscope (from the audit log) inside the window."""

    at: float
    """When, Unix time in seconds."""
    variable: str
    """The variable."""
    old_value: str | None = None
    """Its value before."""
    new_value: str | None = None
    """The value set."""
    by: str | None = None
    """Who changed it."""
    extra: dict[str, Any] = Field(default_factory=dict)
    """The audit entry's action, result, detail, recommendation_id and guard_status."""


class SnapshotDocument(Schema):
    """Everything about one incident moment on one target."""

    model_config = ConfigDict(title="Poolscope incident snapshot")

    format: Literal["poolscope-snapshot"] = FORMAT
    """Always `poolscope-snapshot`: what the file is."""
    schema_version: Literal[1] = SCHEMA_VERSION
    """The document's version: a new optional field keeps it, a changed or removed one bumps it."""
    poolscope_version: str
    """The Poolscope version that made it."""
    title: str = Field(max_length=500)
    """A title for people: the alert's summary, or what the capturer typed."""
    target: str = Field(max_length=64)
    """The target's name."""
    trigger: Literal["alert", "manual", "import"]
    """How it was taken: by a group_stalled alert, on demand, or imported from a file (as stored
    here)."""
    alert_id: int | None = None
    """The alert that took it, if any."""
    created_at: float
    """When it was taken, Unix time in seconds (an imported file's time in the future becomes the
    import's)."""
    moment_ts: float
    """The poll the snapshot is about."""
    window: SnapshotWindow
    """The span of metric history it holds."""
    redacted_sql: bool = False
    """SQL literals were replaced by ? (redact_sql_literals)."""
    target_info: TargetInfo
    """The target at the moment: server flavor and version, connection, collectors' health."""
    state: TargetState
    """The poll at the moment: groups, queue with user/host/db/SQL, transactions, sessions,
    waits."""
    server_tables: ServerTables = Field(default_factory=ServerTables)
    """The server's own tables, read once between two polls."""
    holders: list[GroupHolders] = Field(default_factory=list)
    """Per stalled group at the moment: the connections executing in it and who blocks them."""
    flight_recorder: list[FlightEntry] = Field(default_factory=list)
    """The run-up, one entry a second: who held and who queued in each group under pressure over
    the last 120 s the poller kept (empty when no running poller took the snapshot)."""
    series: list[SeriesOut] = Field(default_factory=list)
    """Every metric of the target over the window."""
    step_s: float = 1.0
    """The spacing of the series' points, in s."""
    alerts: list[Alert] = Field(default_factory=list)
    """Alerts active at some time in the window."""
    variable_changes: list[VariableChange] = Field(default_factory=list)
    """Variables changed through Poolscope in the window."""


class SnapshotSummary(Schema):
    """A stored snapshot as lists show it (without the document)."""

    id: int
    """The snapshot's id."""
    target: str
    """The target's name."""
    title: str
    """Its title."""
    trigger: str
    """alert, manual or import."""
    status: Literal["collecting", "complete"]
    """`collecting` until the window after the moment closes."""
    created_at: float
    """When it was taken, Unix time in seconds."""
    moment_ts: float
    """The poll it is about."""
    window_from: float
    """Start of its metric window."""
    window_to: float
    """End of its metric window."""
    alert_id: int | None
    """The alert that took it, if any."""
    size_bytes: int
    """The stored document's size."""


def stored_row(doc: SnapshotDocument, status: str) -> dict[str, Any]:
    """The store's row for a document (tables.py): the JSON text and the columns lists filter on."""
    text = doc.model_dump_json(by_alias=True)
    return {
        "target": doc.target,
        "created_at": doc.created_at,
        "moment_ts": doc.moment_ts,
        "window_from": doc.window.from_,
        "window_to": doc.window.to,
        "status": status,
        "trigger": doc.trigger,
        "title": doc.title,
        "alert_id": doc.alert_id,
        "size_bytes": len(text.encode()),
        "document": text,
    }


def json_schema() -> dict[str, Any]:
    schema = SnapshotDocument.model_json_schema(by_alias=True, mode="serialization")
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = f"https://poolscope.dev/schemas/snapshot-v{SCHEMA_VERSION}.json"
    return schema
