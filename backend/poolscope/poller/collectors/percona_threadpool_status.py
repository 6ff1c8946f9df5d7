"""SHOW GLOBAL STATUS LIKE 'Threadpool%' on Percona (and Percona-derived pools such as AliSQL).

Percona's pool has no per-group tables: what it offers is status variables. Threadpool_threads
and Threadpool_idle_threads are numbers (charted by global_status); Percona 8.4+ adds
string-valued statistics such as Threadpool_average_queue_wait_us whose value reads
"avg: …, min: …, max: …, dev: …, cnt: …". This collector parses every such string into numbers,
whatever the variable is called, so a statistic added in a later release shows up without a
code change.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from poolscope.poller.collectors.base import (
    Collector,
    CollectorOutput,
    ParseContext,
    Row,
    as_float,
    needs_pool_kind,
    sample,
)
from poolscope.schemas import QueueWaitStat, ServerInfo

STAT_FIELDS = ("avg", "min", "max", "dev", "cnt")
_PAIR = re.compile(r"\b(avg|min|max|dev|cnt)\s*[:=]\s*([-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)")


@dataclass
class PerconaPoolSection:
    numbers: dict[str, float] = field(default_factory=dict)
    stats: list[QueueWaitStat] = field(default_factory=list)


def parse_stat_string(name: str, value: str) -> QueueWaitStat | None:
    """ "avg: 12.5, min: 1, max: 90, dev: 4.2, cnt: 300" -> QueueWaitStat; None if it is not one."""
    pairs = dict(_PAIR.findall(value))
    if not pairs:
        return None
    return QueueWaitStat(name=name, **{k: float(v) for k, v in pairs.items() if k in STAT_FIELDS})


class PerconaThreadpoolStatus(Collector):
    name = "percona_threadpool_status"
    help = 'Percona Threadpool_* status, with 8.4+\'s "avg: …, min: …" queue-wait statistics parsed.'

    def applies(self, server: ServerInfo) -> str | None:
        return needs_pool_kind(server, "percona")

    def sql(self, server: ServerInfo) -> str:
        return "SHOW GLOBAL STATUS LIKE 'Threadpool%'"

    def parse(self, rows: list[Row], ctx: ParseContext) -> CollectorOutput:
        section = PerconaPoolSection()
        samples = []
        for row in rows:
            name, raw = str(row["variable_name"]), row["value"]
            text = raw.decode() if isinstance(raw, bytes) else str(raw)
            number = as_float(text)
            if number is not None:
                section.numbers[name] = number
                continue
            stat = parse_stat_string(name, text)
            if stat is None:
                continue
            section.stats.append(stat)
            samples += [
                sample("pool_stat_avg", stat.avg, stat=name),
                sample("pool_stat_max", stat.max, stat=name),
                sample("pool_stat_count", stat.cnt, stat=name),
            ]
        return CollectorOutput(section=section, samples=samples)
