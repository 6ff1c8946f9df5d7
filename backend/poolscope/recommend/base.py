"""The recommendation rule shape (poolscope/rules/base.py specialised) and the helpers rules share.

A rule is a pure function from a RecommendContext to a RecommendFinding (a change to propose) or a
Clear (why not). Each rule is one file in recommend/rules/, named after the rule, declaring
`RULE = RecommendRule(...)`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from poolscope.enable_pool import RDS_SWITCH
from poolscope.flavors import (
    CAP_GROUPS,
    CAP_QUEUE_DEPTH,
    ENABLE_KIND_BY_FLAVOR,
    PERCONA_BUILTIN_VARIABLES,
    VariableSpec,
    flavor_spec,
)
from poolscope.recommend.flavors import spec
from poolscope.recommend.models import ApplyKind, Evidence
from poolscope.recommend.window import Window
from poolscope.rules.base import Finding, Rule, RuleContext
from poolscope.schemas import ServerInfo, Severity, TargetState

#: Fewer polls than this in the window is too little evidence to recommend a change.
MIN_POLLS = 10


@dataclass(frozen=True, kw_only=True)
class RecommendContext(RuleContext):
    server: ServerInfo
    state: TargetState
    window: Window
    cpus: int | None  # CPUs of the server's host, when known
    cpus_source: str | None = None  # "configured" | "local host"

    @property
    def variables(self) -> dict[str, str]:
        return self.state.variables

    def var(self, key: str) -> tuple[VariableSpec, str] | None:
        """The flavor's variable for a logical setting and its current value, if the server has it."""
        found = spec(self.server, key)
        if found is None or found.name not in self.variables:
            return None
        return found, self.variables[found.name]


@dataclass(frozen=True, kw_only=True)
class RecommendFinding(Finding):
    """A change to propose; summary and description become the recommendation's title and why."""

    variable: str
    current: str | None
    proposed: str
    evidence: list[Evidence]
    severity: Severity
    read_more: str
    chart_metrics: list[str]
    apply: ApplyKind = "live"
    unit: str | None = None
    # The lines to put in the config when the change is not one variable = value (turning the
    # pool on: poolscope/enable_pool.py); None: "[section] variable = proposed".
    config_snippet: str | None = None


@dataclass
class Clear:
    """Nothing to recommend, and why (becomes the note when a recommendation goes away)."""

    reason: str


@dataclass(frozen=True, kw_only=True)
class RecommendRule(Rule[RecommendContext, RecommendFinding | Clear]):
    # Metrics the rule reads from the window (the engine fetches their union once).
    metrics: tuple[str, ...] = ()


def ev(label: str, value: object, metric: str | None = None) -> Evidence:
    return Evidence(label=label, value=fmt(value), metric=metric)


def fmt(value: object) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, float):
        if not math.isfinite(value):
            return "n/a"
        if abs(value) >= 100 or value == int(value):
            return f"{value:,.0f}"
        return f"{value:.2f}" if abs(value) >= 1 else f"{value:.3f}"
    return str(value)


def pct(fraction: float | None) -> str:
    return "n/a" if fraction is None else f"{fraction * 100:.0f}%"


def nice_round(value: float) -> int:
    """Round up to 1, 2 or 5 × a power of ten: proposals people can read and remember."""
    if value <= 1:
        return 1
    exp = 10 ** math.floor(math.log10(value))
    for step in (1, 2, 5, 10):
        if value <= step * exp:
            return int(step * exp)
    return int(10 * exp)


# Requests waiting in the pool, per poll: per group where the server has groups (MariaDB, MySQL
# Enterprise), else the whole pool's count (Percona 8.4.10+ reports only that).
QUEUE_BY_GROUP = "tp_group_queue_length"
QUEUE_WHOLE_POOL = "tp_queued_connections"
QUEUE_METRICS = (QUEUE_BY_GROUP, QUEUE_WHOLE_POOL)


def queue_metric(ctx: RecommendContext) -> str:
    """The queue series this server has: the window's per-poll totals of either mean 'requests queued'."""
    return QUEUE_BY_GROUP if ctx.window.count(QUEUE_BY_GROUP) else QUEUE_WHOLE_POOL


def too_little(ctx: RecommendContext, metric: str) -> Clear | None:
    polls = ctx.window.count(metric)
    if polls < MIN_POLLS:
        return Clear(
            f"only {polls} polls of {metric} in the last {ctx.window.seconds:.0f} s; waiting for more"
        )
    return None


def pool_name(ctx: RecommendContext) -> str:
    """The pool as the user knows it: "Percona thread pool on 8.0.36", "Alibaba Cloud RDS pool"."""
    server = ctx.server
    if RDS_SWITCH in ctx.variables:
        return "the Alibaba Cloud RDS pool"
    if server.flavor == "alisql":
        return f"AliSQL {server.version}'s pool"
    pool = flavor_spec(server)
    return f"the {pool.label} on {server.version}" if pool else f"{server.flavor} {server.version}"


def pool_on(ctx: RecommendContext) -> str:
    """How this server says its pool is on, for a reason text."""
    if RDS_SWITCH in ctx.variables:
        return f"{RDS_SWITCH}={ctx.variables[RDS_SWITCH]}"
    return f"thread_handling={ctx.server.thread_handling}"


def pool_setting(ctx: RecommendContext, key: str, what: str) -> tuple[VariableSpec, str] | Clear:
    """The pool setting a rule tunes, or why the rule has nothing to say: the pool is off, this
    flavor has no such setting, or the server did not report it."""
    if not ctx.server.pool_enabled:
        return Clear("the thread pool is off")
    found = ctx.var(key)
    if found is not None:
        return found
    named = spec(ctx.server, key)
    if named is None:
        return Clear(f"{pool_name(ctx)} has no {what} setting: this rule does not apply")
    return Clear(f"the server does not report {named.name}")


def no_group_data(ctx: RecommendContext, needs: str) -> Clear | None:
    """Clear when the server reports no per-group data, which the rule needs (said once, not
    "waiting for more" forever: Percona, AliSQL and RDS publish only pool-wide status)."""
    if CAP_GROUPS in ctx.server.capabilities:
        return None
    return Clear(
        f"this rule compares {needs} per thread group, and {pool_name(ctx)} reports no per-group data"
        " (only pool-wide Threadpool_* status): it does not apply here"
    )


def no_queue_data(ctx: RecommendContext) -> Clear | None:
    """Clear when the server reports no queue at all: neither per group nor pool-wide (Percona
    before 8.4.10-10, AliSQL, RDS)."""
    if {CAP_GROUPS, CAP_QUEUE_DEPTH} & set(ctx.server.capabilities):
        return None
    return Clear(
        f"{pool_name(ctx)} reports no queue length or queue wait (Percona's pool-wide queue status"
        " arrived in 8.4.10-10): this rule cannot judge the pool here"
    )


# The flavors' own documentation of their pool and server variables ("read more" links).
MARIADB_DOCS = "https://mariadb.com/kb/en/{page}/#{variable}"
PERCONA_DOCS = "https://docs.percona.com/percona-server/{version}/{page}.html#{variable}"
MYSQL_DOCS = "https://dev.mysql.com/doc/refman/{version}/en/server-system-variables.html#sysvar_{variable}"
ALIBABA_DOCS = "https://www.alibabacloud.com/help/en/rds/apsaradb-rds-for-mysql/thread-pool"
PERCONA_MANUALS = ((5, 7), (8, 0), (8, 4), (9, 7))


def read_more(ctx: RecommendContext, variable: str) -> str:
    """The page of this server's own vendor that documents `variable`: MariaDB's KB, Percona's
    manual for its version, the MySQL manual (the Enterprise plugin and server-wide variables of
    MySQL and Percona), Alibaba Cloud's thread pool page (RDS, AliSQL)."""
    server = ctx.server
    major, minor = server.version_tuple[:2]
    pool_variable = variable.startswith(("thread_pool", "extra_"))
    if RDS_SWITCH in ctx.variables or (server.flavor == "alisql" and pool_variable):
        return ALIBABA_DOCS
    if server.flavor == "mariadb":
        page = "thread-pool-system-status-variables" if pool_variable else "server-system-variables"
        return MARIADB_DOCS.format(page=page, variable=variable)
    kind = server.pool_kind or ENABLE_KIND_BY_FLAVOR.get(server.flavor)
    if pool_variable and server.flavor == "percona" and kind == "mysql_enterprise":
        # 9.7.2+ documents MySQL's thread_pool plugin on a page of its own; on the compat build the
        # size, the stall limit (ms) and the built-in pool's variables are Percona's own (flavors.py).
        own = variable in ("thread_pool_size", "thread_pool_stall_limit", *PERCONA_BUILTIN_VARIABLES)
        page = "threadpool" if own and server.percona_builtin_pool else "mysql-thread-pool"
        return PERCONA_DOCS.format(version=f"{major}.{minor}", page=page, variable=variable)
    if pool_variable and kind == "percona":
        # Percona's pool, or one derived from it on another build (its variables tell): Percona's
        # manual for the nearest version it has (5.7's page sits elsewhere).
        docs = max((v for v in PERCONA_MANUALS if v <= (major, minor)), default=PERCONA_MANUALS[0])
        page = "performance/threadpool" if docs < (8, 0) else "threadpool"
        return PERCONA_DOCS.format(version=f"{docs[0]}.{docs[1]}", page=page, variable=variable)
    manual = f"{major}.{minor}" if (major, minor) >= (8, 0) else "8.0"
    return MYSQL_DOCS.format(version=manual, variable=variable)
