"""Shapes of apply/revert requests, previews, audit entries and before/after comparisons."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from poolscope.schemas.base import Schema

AuditAction = Literal["apply", "revert", "auto_revert"]
GuardStatus = Literal["watching", "kept", "reverted", "superseded", "interrupted"]
# unverified: SET GLOBAL was accepted (or its answer never came) and the value could not be read
# back; the server probably holds new_value, and a revert puts back old_value.
AuditResult = Literal["applied", "unverified", "failed"]
#: Results after which the server may hold new_value: such a change can be reverted and guarded.
TOOK_EFFECT: frozenset[str] = frozenset({"applied", "unverified"})


class ApplyIn(Schema):
    """A variable change to apply through the target's admin credential."""

    variable: str = Field(min_length=1, max_length=64)
    """The server variable; it must be on the allow-list."""
    value: str = Field(min_length=1, max_length=64)
    """The new value, as text: it is validated and converted against the server's own metadata
    (type, range, block size, enum list)."""
    recommendation_id: str | None = Field(default=None, max_length=160)
    """The recommendation this applies, if any (409 when it no longer holds)."""
    guard: bool | None = None
    """Watch the guard window after the change and revert it on a conclusive "worse" verdict;
    null: as guard_by_default says (on unless configured off)."""


class VariableMeta(Schema):
    """What information_schema.SYSTEM_VARIABLES says about a variable."""

    name: str
    """The variable's name."""
    type: str
    """VARIABLE_TYPE: INT UNSIGNED, BOOLEAN, ENUM, ..."""
    min: str | None = None
    """NUMERIC_MIN_VALUE, for numbers."""
    max: str | None = None
    """NUMERIC_MAX_VALUE, for numbers."""
    block_size: str | None = None
    """NUMERIC_BLOCK_SIZE: the server rounds a value down to a multiple of it."""
    enum_values: list[str] = Field(default_factory=list)
    """ENUM_VALUE_LIST, for enums and booleans."""
    read_only: bool = False
    """The variable cannot be changed at run time."""
    scope: str | None = None
    """VARIABLE_SCOPE: GLOBAL, SESSION or SESSION ONLY."""


class ApplyPreview(Schema):
    """What applying a value would do, shown before it is confirmed."""

    target: str
    """The target's name."""
    variable: str
    """The variable."""
    current: str | None
    """Its value now."""
    proposed: str
    """The value as the server will store it."""
    meta: VariableMeta
    """The variable's type and limits, from the server."""
    what_happens: str
    """The statement that will run, through which credential and port, and how long it lasts."""
    config_snippet: str
    """The config file lines that keep the change after a restart."""
    persist_sql: str | None = None
    """MySQL / Percona 8.0+: the SET PERSIST statement that does the same; null elsewhere."""
    port_kind: str
    """The port the admin connection uses: extra_port, admin_port or port."""
    guard_default: bool = True
    """Whether a change is guarded unless the operator says otherwise (guard_by_default)."""
    guard_window_s: float = 60
    """How long a guarded change is watched before it is judged."""


class AuditEntry(Schema):
    """One change attempt that reached the server: apply, revert or the guard's revert."""

    id: int
    """The entry's id."""
    ts: float
    """When it was made, Unix time in seconds."""
    target: str
    """The target's name."""
    action: AuditAction
    """`apply`, `revert` (by a user) or `auto_revert` (by the guard)."""
    variable: str
    """The variable changed."""
    old_value: str | None
    """Its value before."""
    new_value: str
    """The value set."""
    result: AuditResult
    """`applied` (set and read back), `unverified` (SET accepted, or its answer lost, but the value
    could not be read back: the server probably holds new_value) or `failed` (refused, or not
    what was asked: the old value was put back)."""
    detail: str | None = None
    """The server's warnings or error."""
    user: str
    """Who made the change (`poolscope-guard` for an automatic revert)."""
    recommendation_id: str | None = None
    """The recommendation applied, if any."""
    manual: bool = False
    """An apply with no recommendation behind it: an operator's own change."""
    reverts_id: int | None = None
    """For a revert: the entry it reverts."""
    reverted_by_id: int | None = None
    """The entry that reverted this one, if any."""
    port_kind: str | None = None
    """The port the admin connection used."""
    guarded: bool = False
    """A guarded apply: watched for guard_window_s after the change."""
    guard_status: GuardStatus | None = None
    """`watching`, `kept`, `reverted`, `superseded` (a newer change or a revert ended the guard) or
    `interrupted` (Poolscope restarted during the window; the change was kept)."""
    guard_until: float | None = None
    """When the guard window ends, Unix time in seconds."""
    guard_note: str | None = None
    """Why the guard ended as it did, with its numbers."""
    config_snippet: str | None = None
    """The config file lines that keep an applied change after a restart (only in the apply
    answer)."""


VerdictName = Literal["better", "worse", "no detectable change", "inconclusive"]


class LoadChange(Schema):
    """How much one load metric moved between the windows (medians of their polls)."""

    metric: str
    """The metric's name."""
    label: str
    """What it is, for reading."""
    before: float | None
    """Its median over the window before the change."""
    after: float | None
    """Its median over the window after."""
    change: float | None
    """(after - before) / before; null without both or when before is 0."""
    shifted: bool
    """Beyond verdict_max_load_change: the load changed, and the verdict does not credit it to
    the change."""


class MetricEffect(Schema):
    """What the change did to one judged metric, at matched load, with an interval."""

    metric: str
    """The metric's name."""
    label: str
    """What it is, for reading."""
    before: float | None
    """Its mean over the polls before whose QPS band also occurs after."""
    after: float | None
    """Its mean over the polls after whose QPS band also occurs before."""
    difference: float | None
    """after - before at matched load: the per-QPS-band differences, weighted by their polls."""
    low: float | None
    """The lower end of the difference's interval (bootstrap, verdict_confidence)."""
    high: float | None
    """The upper end."""
    verdict: VerdictName
    """`worse` / `better` when the whole interval lies beyond the smallest difference that counts,
    else `no detectable change`; `inconclusive` without enough matched polls."""
    note: str | None = None
    """Why it is not judged, if it is not."""


class OverlappingChange(Schema):
    """Another change to the same target inside one of the windows."""

    id: int
    """Its audit entry."""
    ts: float
    """When it was made, Unix time in seconds."""
    variable: str
    """The variable it changed."""
    old_value: str | None
    """Its value before."""
    new_value: str
    """The value set."""


class Judgement(Schema):
    """A change's verdict from the polls of the windows before and after it (actions/verdict.py)."""

    verdict: VerdictName
    """`better`, `worse`, `no detectable change` or `inconclusive` (the load moved, another change
    overlaps, too few polls at matched load, or the window after is still running)."""
    reasons: list[str]
    """Every reason for the verdict, in words with its numbers: each load shift, overlap or metric
    that decided it."""
    load: list[LoadChange]
    """QPS, threads connected and threads running: how much the load moved."""
    effects: list[MetricEffect]
    """Queue wait, queued requests and stall rate at matched load, with their intervals."""
    overlaps: list[OverlappingChange]
    """Other changes to the target inside either window."""
    matched_before: int
    """Polls before the change that were compared (their QPS band also occurs after)."""
    matched_after: int
    """Polls after the change that were compared."""
    polls_before: int
    """Polls in the window before."""
    polls_after: int
    """Polls in the window after."""


class Comparison(Judgement):
    """The verdict of a change: its windows before and after compared poll by poll, not as means."""

    change_id: int
    """The audit entry compared."""
    ts: float
    """When the change was made, Unix time in seconds."""
    window_s: float
    """The length of each window, in s."""
    before_from: float
    """Start of the window before, Unix time in seconds."""
    after_to: float
    """End of the window after."""
    complete: bool
    """False while the window after is still running (the verdict is then inconclusive)."""
    headline: str
    """The verdict and its first reason, e.g. `inconclusive: load changed by +136% (QPS 410 → 968)`."""
