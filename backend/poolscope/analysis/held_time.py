"""Time held, stalled and queued, per statement digest: the counters behind "who held the pool".

Each pressure poll adds, per digest and group, the seconds since the previous poll:
- held: worker-seconds its statements held in a group that had a queue;
- stalled: worker-seconds held in a group judged stalled;
- queued: request-seconds its requests waited in a group's queue (a queued request is not read
  by the server yet: it is counted under the statement its connection ran last, when Poolscope
  saw one, else under UNREAD);
and per digest the stall episodes it held a stalled group in, the executions first seen, the
longest statement time, its text and who ran it. They are stored as series like any other
(metric + labels), so they keep the store's resolution and retention; a range's total is a sum.

Label cardinality is bounded per poll: at most MAX_DIGESTS digests (by held + queued time; the
rest count under OTHER), at most MAX_CLIENTS user@host per digest (the client's port left out),
the group a label only in the counters that need it, and the text cut to MAX_TEXT_CHARS.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from poolscope.analysis.digest import digest_of
from poolscope.metrics import Metric
from poolscope.schemas import GroupHolders, HeldDigest, HeldSort, QueuedConnection, Sample

MAX_DIGESTS = 20
MAX_CLIENTS = 5
MAX_TEXT_CHARS = 200
OTHER = "other"
# The group label where the server has no per-group view (Percona): the whole pool.
WHOLE_POOL = "pool"
UNREAD = "unread"
UNREAD_TEXT = "(queued request not read yet; its connection ran nothing Poolscope saw)"
OTHER_TEXT = f"(digests beyond the {MAX_DIGESTS} busiest of a poll)"

HELD = Metric(
    "digest_held_s",
    "worker-seconds held by the digest's statements in a group with a queue",
    unit="s",
    labels=("digest", "group"),
)
STALLED = Metric(
    "digest_stalled_s",
    "worker-seconds held by the digest's statements in a stalled group",
    unit="s",
    labels=("digest", "group"),
)
QUEUED = Metric(
    "digest_queued_s",
    "request-seconds the digest's requests waited in a group's queue",
    unit="s",
    labels=("digest", "group"),
)
EPISODES = Metric(
    "digest_stall_episodes",
    "stall episodes the digest held a stalled group in (1 when it joins one)",
    labels=("digest",),
)
CALLS = Metric(
    "digest_calls", "executions of the digest first seen holding a pressured group", labels=("digest",)
)
MAX_TIME = Metric(
    "digest_max_time_s",
    "longest time in statement seen of the digest",
    unit="s",
    labels=("digest",),
    agg="max",
)
INFO = Metric("digest_info", "1 for each digest seen: its normalised text", labels=("digest", "text"))
CLIENTS = Metric(
    "digest_client",
    "connections of the digest seen, by user and client host",
    labels=("digest", "user", "host"),
)
METRICS = (HELD, STALLED, QUEUED, EPISODES, CALLS, MAX_TIME, INFO, CLIENTS)


class HeldTime:
    """What the counting remembers between polls of one target (forgotten when it goes down)."""

    def __init__(self, interval_s: float = 1.0) -> None:
        self.interval_s = interval_s
        self.last_ts: float | None = None
        self._runs: set[tuple[int, int]] = set()  # (connection, statement start) seen last poll
        self._episodes: dict[int | None, set[str]] = {}  # stalled group -> digests counted in its episode

    def forget(self) -> None:
        self.last_ts = None
        self._runs = set()
        self._episodes = {}

    def count(
        self, now: float, holders: Sequence[GroupHolders], queue: Sequence[QueuedConnection]
    ) -> list[Sample]:
        """This poll's samples; none unless some group holds or queues (cost control upstream)."""
        # The seconds since the last poll, at most two intervals: a gap (target down) is not held time.
        interval_s = self.interval_s
        dt = interval_s if self.last_ts is None else min(max(now - self.last_ts, 0.0), 2 * interval_s)
        self.last_ts = now
        if not holders and not queue:
            self._runs.clear()
            self._episodes.clear()
            return []
        held: dict[tuple[str, str], float] = defaultdict(float)
        stalled: dict[tuple[str, str], float] = defaultdict(float)
        queued: dict[tuple[str, str], float] = defaultdict(float)
        texts: dict[str, str] = {}
        clients: dict[str, dict[tuple[str, str], int]] = defaultdict(lambda: defaultdict(int))
        longest: dict[str, float] = {}
        calls: dict[str, int] = defaultdict(int)
        episode_joins: dict[str, int] = defaultdict(int)
        runs: set[tuple[int, int]] = set()
        episodes: dict[int | None, set[str]] = {}
        for group in holders:
            label = WHOLE_POOL if group.group_id is None else str(group.group_id)
            pressured = bool(group.queue_length) or group.stalled or group.group_id is None
            if group.stalled:
                episodes[group.group_id] = counted = self._episodes.get(group.group_id, set())
            for holder in group.holders:
                digest = holder.digest or UNREAD
                texts.setdefault(digest, holder.digest_text or UNREAD_TEXT)
                if pressured:
                    held[digest, label] += dt
                if group.stalled:
                    stalled[digest, label] += dt
                    if digest not in counted:
                        counted.add(digest)
                        episode_joins[digest] += 1
                clients[digest][_user(holder.user), _host(holder.host)] += 1
                longest[digest] = max(longest.get(digest, 0.0), holder.time_s or 0.0)
                run = (holder.connection_id, round(now - (holder.time_s or 0.0)))
                runs.add(run)
                if (
                    run not in self._runs
                    and (run[0], run[1] - 1) not in self._runs
                    and (run[0], run[1] + 1) not in self._runs
                ):
                    calls[digest] += 1
        for entry in queue:
            sql = entry.info or entry.last_sql
            if sql:
                shape = digest_of(sql)
                digest, text = shape.digest, shape.text
            else:
                digest, text = UNREAD, UNREAD_TEXT
            texts.setdefault(digest, text)
            queued[digest, str(entry.group_id)] += dt
            clients[digest][_user(entry.user), _host(entry.host)] += 1
        self._runs, self._episodes = runs, episodes
        kept = _busiest(held, queued, texts)
        samples: list[Sample] = []
        for metric, values in ((HELD, held), (STALLED, stalled), (QUEUED, queued)):
            for (digest, group_label), seconds in _fold(values, kept).items():
                labels = {"digest": digest, "group": group_label}
                samples.append(Sample(metric=metric.name, labels=labels, value=round(seconds, 3)))
        for metric, per_digest in ((EPISODES, episode_joins), (CALLS, calls), (MAX_TIME, longest)):
            for digest, value in _fold_digest(per_digest, kept, max if metric is MAX_TIME else sum).items():
                samples.append(Sample(metric=metric.name, labels={"digest": digest}, value=float(value)))
        for digest in sorted({_keep(d, kept) for d in texts}):
            text = OTHER_TEXT if digest == OTHER else texts[digest][:MAX_TEXT_CHARS]
            samples.append(Sample(metric=INFO.name, labels={"digest": digest, "text": text}, value=1.0))
            merged: dict[tuple[str, str], int] = defaultdict(int)
            for d, seen in clients.items():
                if _keep(d, kept) == digest:
                    for who, n in seen.items():
                        merged[who] += n
            for (user, host), n in sorted(merged.items(), key=lambda kv: -kv[1])[:MAX_CLIENTS]:
                labels = {"digest": digest, "user": user, "host": host}
                samples.append(Sample(metric=CLIENTS.name, labels=labels, value=float(n)))
        return samples


def _user(user: str | None) -> str:
    return user or "?"


def _host(host: str | None) -> str:
    """The client's host without its port: one label value per machine, not per connection."""
    if not host:
        return "?"
    return host.rsplit(":", 1)[0] if host.count(":") == 1 or host.startswith("[") else host


def _busiest(
    held: dict[tuple[str, str], float], queued: dict[tuple[str, str], float], texts: dict[str, str]
) -> set[str]:
    total: dict[str, float] = defaultdict(float)
    for (digest, _), seconds in (*held.items(), *queued.items()):
        total[digest] += seconds
    for digest in texts:
        total.setdefault(digest, 0.0)
    return set(sorted(total, key=lambda d: (-total[d], d))[:MAX_DIGESTS])


def _keep(digest: str, kept: set[str]) -> str:
    return digest if digest in kept else OTHER


def _fold(values: dict[tuple[str, str], float], kept: set[str]) -> dict[tuple[str, str], float]:
    out: dict[tuple[str, str], float] = defaultdict(float)
    for (digest, group), seconds in values.items():
        out[_keep(digest, kept), group] += seconds
    return out


def _fold_digest(values: dict[str, float] | dict[str, int], kept: set[str], combine) -> dict[str, float]:  # type: ignore[no-untyped-def]
    out: dict[str, float] = {}
    for digest, value in values.items():
        key = _keep(digest, kept)
        out[key] = combine((out[key], value)) if key in out else value
    return out


def rank(
    sums: Sequence[tuple[str, dict[str, str], float, int]],
    maxima: Sequence[tuple[str, dict[str, str], float, int]],
    sort: HeldSort,
    limit: int,
) -> list[HeldDigest]:
    """The range's digests from the store's totals of these series, largest `sort` first."""
    rows: dict[str, HeldDigest] = {}

    def row(digest: str) -> HeldDigest:
        return rows.setdefault(
            digest, HeldDigest(digest=digest, text=OTHER_TEXT if digest == OTHER else UNREAD_TEXT)
        )

    fields = {HELD.name: "held_s", STALLED.name: "stalled_s", QUEUED.name: "queued_s"}
    for metric, labels, value, _ in sums:
        entry = row(labels.get("digest", OTHER))
        if metric in fields:
            setattr(entry, fields[metric], round(getattr(entry, fields[metric]) + value, 3))
            if (group := labels.get("group")) and group not in entry.groups:
                entry.groups.append(group)
        elif metric == EPISODES.name:
            entry.stall_episodes += int(round(value))
        elif metric == CALLS.name:
            entry.calls += int(round(value))
        elif metric == INFO.name and labels.get("text"):
            entry.text = labels["text"]
        elif metric == CLIENTS.name:
            client = f"{labels.get('user', '?')}@{labels.get('host', '?')}"
            if client not in entry.clients:
                entry.clients.append(client)
    for _, labels, value, _ in maxima:
        entry = row(labels.get("digest", OTHER))
        entry.max_time_s = max(entry.max_time_s or 0.0, value)
    for entry in rows.values():
        entry.groups.sort(key=lambda g: int(g) if g.isdigit() else -1)
        entry.clients.sort()
    key = {"stalled": "stalled_s", "held": "held_s", "queued": "queued_s"}[sort]
    ranked = sorted(rows.values(), key=lambda d: (-getattr(d, key), -d.held_s, d.digest))
    return ranked[:limit]


SUMMED = (HELD.name, STALLED.name, QUEUED.name, EPISODES.name, CALLS.name, INFO.name, CLIENTS.name)
