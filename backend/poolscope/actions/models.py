"""Shapes of apply/revert requests, previews, audit entries and before/after comparisons."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

AuditAction = Literal["apply", "revert", "auto_revert"]
GuardStatus = Literal["watching", "kept", "reverted", "superseded", "interrupted"]
# unverified: SET GLOBAL was accepted (or its answer never came) and the value could not be read
# back; the server probably holds new_value, and a revert puts back old_value.
AuditResult = Literal["applied", "unverified", "failed"]
#: Results after which the server may hold new_value: such a change can be reverted and guarded.
TOOK_EFFECT: frozenset[str] = frozenset({"applied", "unverified"})


class ApplyIn(BaseModel):
    variable: str = Field(min_length=1, max_length=64)
    # A string on purpose: it is validated and converted against the server's own metadata.
    value: str = Field(min_length=1, max_length=64)
    recommendation_id: str | None = Field(default=None, max_length=160)
    guard: bool = Field(default=False, description="watch the guard window and revert on a regression")


class VariableMeta(BaseModel):
    """What information_schema.SYSTEM_VARIABLES says about a variable."""

    name: str
    type: str
    min: str | None = None
    max: str | None = None
    block_size: str | None = None
    enum_values: list[str] = Field(default_factory=list)
    read_only: bool = False
    scope: str | None = None


class ApplyPreview(BaseModel):
    target: str
    variable: str
    current: str | None
    proposed: str  # as the server will store it
    meta: VariableMeta
    what_happens: str
    config_snippet: str
    persist_sql: str | None = None
    port_kind: str


class AuditEntry(BaseModel):
    id: int
    ts: float
    target: str
    action: AuditAction
    variable: str
    old_value: str | None
    new_value: str
    result: AuditResult
    detail: str | None = None
    user: str
    recommendation_id: str | None = None
    reverts_id: int | None = None
    reverted_by_id: int | None = None
    port_kind: str | None = None
    guarded: bool = False
    guard_status: GuardStatus | None = None
    guard_until: float | None = None
    guard_note: str | None = None
    config_snippet: str | None = None  # to make an applied change survive a restart


class MetricChange(BaseModel):
    metric: str
    label: str
    before: float | None
    after: float | None
    change: float | None  # (after - before) / before; None without both or when before is 0


class Comparison(BaseModel):
    change_id: int
    ts: float
    window_s: float
    before_from: float
    after_to: float
    complete: bool  # False while the after-window is still running
    metrics: list[MetricChange]
