"""CPU and memory of a whole process tree from /proc: a supervisor and every process it forked."""

from __future__ import annotations

import os
from dataclasses import dataclass

_TICK = os.sysconf("SC_CLK_TCK")
_PAGE = os.sysconf("SC_PAGE_SIZE")


def _stat_fields(pid: int | str) -> list[str] | None:
    """/proc/PID/stat after "pid (comm) ": index 0 is field 3 (state), so field N is index N - 3."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(") ", 1)[1].split()
    except (OSError, IndexError):
        return None  # gone while scanning


def tree_pids(root: int) -> list[int]:
    """`root` and all its descendants (by parent pid), zombies included; [] once `root` is gone."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        fields = _stat_fields(entry)
        if fields is not None:
            children.setdefault(int(fields[1]), []).append(int(entry))
    if _stat_fields(root) is None:
        return []
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo.extend(children.get(pid, ()))
    return out


@dataclass(frozen=True)
class TreeUsage:
    cpu_s: float  # utime + stime of every member, plus what its reaped children used (cutime + cstime)
    rss_bytes: int
    pids: tuple[int, ...]
    cpu_by_pid: dict[int, float]  # the same per member


def cpu_by_role(u0: TreeUsage, u1: TreeUsage, roles: dict[int, str]) -> dict[str, float]:
    """CPU seconds between two readings per role (pid -> role; a pid not listed counts as
    "supervisor" if it is the root, else "other"); a member that started in between counts whole."""
    out: dict[str, float] = {}
    for pid, cpu in u1.cpu_by_pid.items():
        role = roles.get(pid) or ("supervisor" if pid == u1.pids[0] else "other")
        out[role] = out.get(role, 0.0) + cpu - u0.cpu_by_pid.get(pid, 0.0)
    return out


def tree_usage(root: int) -> TreeUsage:
    """CPU seconds and resident memory of `root`'s tree now.

    A child that died and was reaped has its CPU in its parent's cutime/cstime, so the total
    only grows as long as the root lives: differences over a window are the tree's CPU in it.
    """
    rss_pages = 0
    by_pid: dict[int, float] = {}
    pids = tree_pids(root)
    for pid in pids:
        fields = _stat_fields(pid)
        if fields is None:
            continue
        # utime 14, stime 15, cutime 16, cstime 17, rss 24 (pages)
        by_pid[pid] = sum(int(fields[i]) for i in (11, 12, 13, 14)) / _TICK
        rss_pages += int(fields[21])
    return TreeUsage(sum(by_pid.values()), rss_pages * _PAGE, tuple(pids), by_pid)
