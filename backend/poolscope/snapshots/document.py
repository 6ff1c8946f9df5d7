"""The snapshot document: one versioned JSON shape, published as a JSON Schema (docs/snapshot.schema.json).

Readers check `format` and `schema_version`; a new optional field keeps the version, a changed or
removed one bumps it.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from poolscope.schemas import Alert, SeriesOut, TargetInfo, TargetState

SCHEMA_VERSION: Literal[1] = 1
FORMAT: Literal["poolscope-snapshot"] = "poolscope-snapshot"

# A raw row of a server table: column name (lower case) -> value as JSON scalar.
Row = dict[str, str | int | float | bool | None]


class SnapshotWindow(BaseModel):
    from_: float = Field(alias="from", serialization_alias="from")
    to: float
    before_s: float
    after_s: float
    # False until the window after the moment has closed and its metrics are in.
    complete: bool

    model_config = ConfigDict(populate_by_name=True)


class ServerTables(BaseModel):
    """The server's own tables read once at the moment (raw rows, as the server returned them)."""

    captured_at: float | None = None
    port_kind: str | None = None  # "extra_port" | "port": which port the capture used
    thread_pool_groups: list[Row] = Field(default_factory=list)
    thread_pool_queues: list[Row] = Field(default_factory=list)
    thread_pool_stats: list[Row] = Field(default_factory=list)
    thread_pool_waits: list[Row] = Field(default_factory=list)
    innodb_trx: list[Row] = Field(default_factory=list)
    innodb_lock_waits: list[Row] = Field(default_factory=list)
    processlist: list[Row] = Field(default_factory=list)
    global_status: dict[str, str] = Field(default_factory=dict)
    global_variables: dict[str, str] = Field(default_factory=dict)
    # Statements that could not be read, and why (a missing privilege, a timeout during a stall).
    errors: dict[str, str] = Field(default_factory=dict)


class VariableChange(BaseModel):
    """A variable changed through Poolscope (from the audit log) inside the window."""

    at: float
    variable: str
    old_value: str | None = None
    new_value: str | None = None
    by: str | None = None
    extra: dict[str, Any] = Field(default_factory=dict)


class SnapshotDocument(BaseModel):
    """Everything about one incident moment on one target."""

    model_config = ConfigDict(title="Poolscope incident snapshot")

    format: Literal["poolscope-snapshot"] = FORMAT
    schema_version: Literal[1] = SCHEMA_VERSION
    poolscope_version: str
    title: str = Field(max_length=500)
    target: str = Field(max_length=64)
    trigger: Literal["alert", "manual", "import"]
    alert_id: int | None = None
    created_at: float
    moment_ts: float  # the poll the snapshot is about
    window: SnapshotWindow
    redacted_sql: bool = False
    target_info: TargetInfo  # server flavor and version, connection kind, collectors' health
    state: TargetState  # the poll at the moment: groups, queue with user/host/db/SQL, trx, sessions, waits
    server_tables: ServerTables = Field(default_factory=ServerTables)
    series: list[SeriesOut] = Field(default_factory=list)  # every metric of the target over the window
    step_s: float = 1.0
    alerts: list[Alert] = Field(default_factory=list)  # alerts active at some time in the window
    variable_changes: list[VariableChange] = Field(default_factory=list)


class SnapshotSummary(BaseModel):
    id: int
    target: str
    title: str
    trigger: str
    status: Literal["collecting", "complete"]
    created_at: float
    moment_ts: float
    window_from: float
    window_to: float
    alert_id: int | None
    size_bytes: int


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
