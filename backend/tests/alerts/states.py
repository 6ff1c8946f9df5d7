"""Builders for TargetInfo / TargetState / PollEvent as rules and the engine see them, and alert
changes as the live channel carries them (plain data)."""

from __future__ import annotations

from typing import Any

from poolscope.schemas import (
    Alert,
    AlertEvent,
    GroupState,
    PollEvent,
    TargetInfo,
    TargetState,
    Threads,
    Transaction,
    Transactions,
)


def group(group_id: int = 0, **values: Any) -> GroupState:
    base: dict[str, Any] = {
        "group_id": group_id,
        "connections": 10,
        "threads": 4,
        "active_threads": 1,
        "standby_threads": 0,
        "queue_length": 0,
        "has_listener": True,
        "is_stalled": False,
    }
    base.update(values)
    if base.get("stall_reason"):
        base["stalled"] = True
    return GroupState(**base)


def state(ts: float, groups: list[GroupState] | None = None, **values: Any) -> TargetState:
    base: dict[str, Any] = {
        "target": "db1",
        "ts": ts,
        "status": "up",
        "groups": groups if groups is not None else [group()],
        "variables": {
            "thread_pool_stall_limit": "500",
            "thread_pool_max_threads": "100",
            "max_connections": "200",
        },
    }
    base.update(values)
    return TargetState(**base)


def info(ts: float, status: str = "up", reason: str | None = None) -> TargetInfo:
    return TargetInfo(
        name="db1",
        status=status,
        reason=reason,
        poll_interval_s=1.0,
        last_poll_at=ts,
        last_success_at=ts if status == "up" else None,
    )


def poll(ts: float, target_state: TargetState | None) -> PollEvent:
    up = target_state is not None
    return PollEvent(
        target="db1",
        ts=ts,
        target_info=info(ts, "up" if up else "down", None if up else "refused"),
        state=target_state,
        samples=[],
    )


def stalled(ts: float, group_id: int = 0) -> PollEvent:
    return poll(
        ts, state(ts, [group(group_id, stall_reason="stalls_counter", queue_length=5, stalls_per_s=3.0)])
    )


def calm(ts: float) -> PollEvent:
    return poll(ts, state(ts))


def threads(**values: Any) -> Threads:
    return Threads(**values)


def transactions(*items: Transaction) -> Transactions:
    return Transactions(
        count=len(items),
        longest_age_s=max((i.age_s or 0 for i in items), default=None),
        lock_waits=sum(1 for i in items if i.wait_s is not None),
        items=list(items),
    )


def pending_change(target: str, ts: float, fingerprint: str = "p1") -> AlertEvent:
    """A target_down alert of `target` gone pending at `ts`, as the alert engine publishes it."""
    alert = Alert(
        fingerprint=fingerprint,
        target=target,
        rule="target_down",
        severity="critical",
        status="pending",
        summary="down",
        description="down",
        started_at=ts,
        last_active_at=ts,
    )
    return AlertEvent(target=target, ts=ts, transition="pending", alert=alert)
