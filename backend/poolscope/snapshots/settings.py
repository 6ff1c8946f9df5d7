"""Snapshot settings: window around the moment, automatic capture, redaction, retention, import limits,
and the worker processes that import, render and zip."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class SnapshotSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    auto_on_stall: bool = Field(default=True, description="capture when a group_stalled alert fires")
    auto_cooldown_s: float = Field(
        default=300.0, ge=0, le=86400, description="no second automatic snapshot of a target within this time"
    )
    window_before_s: float = Field(
        default=900.0, ge=0, le=86400, description="metric history before the moment"
    )
    window_after_s: float = Field(
        default=300.0, ge=0, le=86400, description="metric history after it; the snapshot completes then"
    )
    capture_timeout_s: float = Field(default=15.0, gt=0, le=120, description="reading the server tables")
    redact_sql_literals: bool = Field(
        default=False, description="replace string and number literals in SQL with ?"
    )
    max_count: int = Field(
        default=100, ge=1, le=100000, description="oldest snapshots beyond this are deleted"
    )
    max_total_mb: float = Field(
        default=500.0, gt=0, le=1_000_000, description="... and beyond this total size"
    )
    import_max_mb: float = Field(default=50.0, gt=0, le=4096, description="largest snapshot file accepted")
    max_points: int = Field(default=3000, ge=100, le=20000, description="points per series in the window")
    import_max_series: int = Field(
        default=2000, ge=1, le=100_000, description="most series an imported snapshot may hold"
    )
    import_max_points: int = Field(
        default=1_000_000,
        ge=1000,
        le=20_000_000,
        description="most points over all series of an imported snapshot (about 25 MB of JSON)",
    )
    import_max_string_kb: int = Field(
        default=1024, ge=1, le=65536, description="longest text (SQL, title, a value) in an imported snapshot"
    )
    # Import, report and archive are CPU work of seconds for a large snapshot: they run in worker
    # processes, never on the event loop that polls the targets and feeds the live channel.
    work_concurrency: int = Field(
        default=2, ge=1, le=16, description="imports, reports and archives worked on at once"
    )
    work_wait_s: float = Field(
        default=10.0, ge=0, le=300, description="a request waits this long for a free worker, then 503"
    )
    report_cache_mb: float = Field(
        default=64.0, ge=0, le=4096, description="rendered HTML reports kept in memory (0: none)"
    )
