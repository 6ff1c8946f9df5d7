"""performance_schema.tp_thread_state (MySQL Enterprise): one row per pool thread, summarised.

Used for what the group rows do not say (MySQL manual §29.12.16, tp_thread_state):
- WAIT_TYPE: what a blocked thread waits on, one of THD_WAIT_SLEEP … THD_WAIT_SYNC (NULL: not blocked);
- TP_THREAD_TYPE (8.0.32+): QUERY_WORKER_THREAD, LISTENER_WORKER_THREAD, CONNECTION_HANDLER_WORKER_THREAD,
  TIMER_WORKER_THREAD;
- STATE and MARKED_STALLED (8.4+): what each thread is doing (Polling, Processing Queued, Sleeping
  Reserve, …) and whether the stall checker marked it stalled. The manual describes MARKED_STALLED
  as True/False without naming the column type, so every plausible spelling is read and anything
  else counts as unknown: one odd value never fails the collector.
SELECT * for the same reason as tp_thread_group_state: the column set grew across releases. The
Admin thread group's threads (8.0.31+) are counted with the rest: they are pool threads too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from poolscope.metrics import Metric
from poolscope.poller.collectors.base import (
    CollectorOutput,
    ParseContext,
    Row,
    sample,
)
from poolscope.poller.collectors.mysql_tp_group_state import MysqlTpCollector
from poolscope.schemas import ThreadStates
from poolscope.values import int_or_none

if TYPE_CHECKING:
    from poolscope.poller.outputs import PollOutputs

MAX_ROWS = 20_000
_TRUE = {"true", "yes", "on", "1", "y", "t"}
_FALSE = {"false", "no", "off", "0", "n", "f", ""}

METRICS = (
    Metric("tp_threads_waiting", "pool threads blocked, by tp_thread_state.WAIT_TYPE", labels=("wait_type",)),
    Metric("tp_threads_by_state", "pool threads by tp_thread_state.STATE", labels=("state",)),
    Metric("tp_threads_marked_stalled", "pool threads the stall checker marked stalled (8.4+)"),
)


def as_flag(value: Any) -> bool | None:
    """MARKED_STALLED as a bool: True/False, 1/0, b'\\x01', 'YES'/'NO'; None when it is none of these."""
    if value is None:
        return None
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return value != 0
    if isinstance(value, bytes | bytearray):
        if len(value) == 1 and value[0] in (0, 1):  # BIT(1)
            return value[0] == 1
        value = value.decode(errors="replace")
    text = str(value).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    return None


def _text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, bytes | bytearray):
        value = value.decode(errors="replace")
    text = str(value).strip()
    return text or None


def _count(counts: dict[str, int], key: str | None) -> None:
    if key is not None:
        counts[key] = counts.get(key, 0) + 1


class MysqlTpThreadState(MysqlTpCollector[ThreadStates]):
    name = "mysql_tp_thread_state"
    help = "MySQL Enterprise pool threads: what they do (STATE), wait on (WAIT_TYPE), and how many are marked stalled."
    table = "tp_thread_state"
    limit = MAX_ROWS
    metrics = METRICS

    def parse(self, rows: list[Row], ctx: ParseContext) -> CollectorOutput[ThreadStates]:
        states = ThreadStates(threads=len(rows))
        marked = 0
        has_marked = False
        for row in rows:
            _count(states.by_state, _text(row.get("state")))
            _count(states.by_type, _text(row.get("tp_thread_type")))
            _count(states.waiting, _text(row.get("wait_type")))
            thread_id, group_id = int_or_none(row.get("thread_id")), int_or_none(row.get("tp_group_id"))
            if (
                thread_id is not None
                and group_id is not None
                and (int_or_none(row.get("process_count")) or 0) > 0
            ):
                states.busy[thread_id] = (group_id, _text(row.get("wait_type")))
            if "marked_stalled" in row:
                has_marked = True
                marked += 1 if as_flag(row["marked_stalled"]) else 0
        states.marked_stalled = marked if has_marked else None
        samples = [
            sample("tp_threads_waiting", float(n), wait_type=w) for w, n in sorted(states.waiting.items())
        ]
        samples += [
            sample("tp_threads_by_state", float(n), state=s) for s, n in sorted(states.by_state.items())
        ]
        if states.marked_stalled is not None:
            samples.append(sample("tp_threads_marked_stalled", float(states.marked_stalled)))
        return CollectorOutput(section=states, samples=samples)

    def put(self, outputs: PollOutputs, section: ThreadStates) -> None:
        outputs.mysql_tp_thread_state = section
