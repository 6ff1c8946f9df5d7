"""Percona's lifetime queue-wait statistics as the server prints them: for fixtures and tests.

Percona 8.4.10-10 and 9.7.1-1 report Threadpool_average_queue_wait_us / _hp_queue_wait_us as
"avg: %.3f, min: %.3f, max: %.3f, dev: %.3f, cnt: %ld" (µs), one sample per dequeued request
since the server started, each group's figures merged by LiveStats::join (percona-server
sql-common/live_stats.h: Welford's algorithm, the parallel form for join, dev = sqrt(M2/count)).
`LiveStats` below does the same arithmetic, so a story of per-poll batches merged into a
lifetime of any length prints what such a server would print.

`python -m poolscope_dev.percona_stats DIR` rewrites a fixture's Threadpool_* frames and its
Uptime/Questions from STORY, with lifetime counts that follow from Uptime (see the fixture's
README.md); --uptime sets a different one.
"""

from __future__ import annotations

import argparse
import json
import math
from dataclasses import dataclass
from pathlib import Path


@dataclass
class LiveStats:
    """count/mean/M2/min/max merged like percona-server's LiveStats::join."""

    count: int = 0
    mean: float = 0.0
    m2: float = 0.0
    low: float = 0.0
    high: float = 0.0

    def join(self, other: LiveStats) -> None:
        if other.count == 0:
            return
        if self.count == 0:
            self.count, self.mean, self.m2, self.low, self.high = (
                other.count,
                other.mean,
                other.m2,
                other.low,
                other.high,
            )
            return
        combined = self.count + other.count
        delta = other.mean - self.mean
        self.m2 += other.m2 + delta * delta * self.count * other.count / combined
        self.mean = (self.mean * self.count + other.mean * other.count) / combined
        self.low = min(self.low, other.low)
        self.high = max(self.high, other.high)
        self.count = combined

    @classmethod
    def batch(cls, count: int, mean: float, dev: float, high: float, low: float = 0.0) -> LiveStats:
        """`count` samples with this mean and (population) deviation: M2 = dev²·count."""
        return cls(count=count, mean=mean, m2=dev * dev * count, low=low, high=high)

    def text(self) -> str:
        """The status value as the server formats it."""
        dev = math.sqrt(self.m2 / self.count) if self.count > 1 else 0.0
        return f"avg: {self.mean:.3f}, min: {self.low:.3f}, max: {self.high:.3f}, dev: {dev:.3f}, cnt: {self.count}"


@dataclass(frozen=True)
class Batch:
    """One poll's dequeued requests in one queue: how many, their mean/deviation/max wait (µs)."""

    count: int
    mean: float
    dev: float
    high: float


@dataclass(frozen=True)
class Poll:
    normal: Batch
    hp: Batch
    waiting: int  # Threadpool_requests_waiting_in_queue at the poll
    waiting_hp: int
    starved: int
    threads: int
    idle: int


def _calm(alt: bool) -> Poll:
    if alt:
        return Poll(Batch(2000, 180.0, 850.0, 30_000.0), Batch(640, 55.0, 200.0, 8_000.0), 1, 0, 0, 31, 19)
    return Poll(Batch(2100, 205.0, 900.0, 36_000.0), Batch(610, 61.0, 210.0, 9_000.0), 0, 0, 0, 31, 20)


# The per-poll story of the percona/8.4.10 and percona/9.7.1 fixtures (1 s polls): calm, a stall
# in which requests wait up to 0.73 s on average, recovery. Frame 0 is the base reading.
STORY: tuple[Poll, ...] = (
    *(_calm(i % 2 == 0) for i in range(8)),
    Poll(Batch(900, 9_800.0, 9_000.0, 61_000.0), Batch(420, 690.0, 900.0, 9_000.0), 18, 3, 0, 38, 4),
    Poll(
        Batch(310, 182_000.0, 60_000.0, 402_000.0), Batch(260, 4_100.0, 3_000.0, 22_000.0), 46, 7, 21, 44, 0
    ),
    Poll(
        Batch(240, 655_000.0, 180_000.0, 1_183_000.0),
        Batch(230, 9_800.0, 6_000.0, 41_000.0),
        83,
        11,
        64,
        47,
        0,
    ),
    Poll(
        Batch(380, 731_000.0, 220_000.0, 1_466_000.0),
        Batch(280, 8_300.0, 5_000.0, 38_000.0),
        71,
        9,
        52,
        47,
        0,
    ),
    Poll(Batch(1500, 96_000.0, 70_000.0, 390_000.0), Batch(520, 1_900.0, 1_500.0, 12_000.0), 12, 2, 0, 41, 6),
    Poll(Batch(2600, 2_400.0, 3_000.0, 40_000.0), Batch(700, 155.0, 300.0, 9_000.0), 2, 0, 0, 36, 14),
    *(_calm(i % 2 == 0) for i in range(6)),
)
POLL_S = 1.0
# Lifetime base: the calm mix's rates over the uptime; the long-run means and spreads.
NORMAL_BASE = (212.0, 900.0, 41_830.0)  # mean, dev, max (µs)
HP_BASE = (61.0, 210.0, 9_120.0)


def calm_rates() -> tuple[float, float]:
    """Normal and high-priority dequeues per second in the calm polls."""
    calm = [p for p in STORY if p.normal.mean < 1000]
    return (
        sum(p.normal.count for p in calm) / len(calm) / POLL_S,
        sum(p.hp.count for p in calm) / len(calm) / POLL_S,
    )


def base_counts(uptime_s: float) -> tuple[int, int]:
    """Lifetime counts at frame 0 for a server up `uptime_s`: cnt = Uptime × calm rate."""
    normal, hp = calm_rates()
    return round(uptime_s * normal), round(uptime_s * hp)


def frames(base_normal: int, base_hp: int, story: tuple[Poll, ...] = STORY) -> list[dict[str, str]]:
    """Per poll, the Threadpool_* status values (name -> value) of a server whose lifetime starts
    at these counts and then dequeues each poll's batches."""
    normal = LiveStats.batch(base_normal, *NORMAL_BASE)
    hp = LiveStats.batch(base_hp, *HP_BASE)
    out = []
    for i, poll in enumerate(story):
        if i:
            normal.join(
                LiveStats.batch(poll.normal.count, poll.normal.mean, poll.normal.dev, poll.normal.high)
            )
            hp.join(LiveStats.batch(poll.hp.count, poll.hp.mean, poll.hp.dev, poll.hp.high))
        out.append(
            {
                "Threadpool_average_hp_queue_wait_us": hp.text(),
                "Threadpool_average_queue_wait_us": normal.text(),
                "Threadpool_idle_threads": str(poll.idle),
                "Threadpool_requests_starved_in_queue": str(poll.starved),
                "Threadpool_requests_waiting_in_hp_queue": str(poll.waiting_hp),
                "Threadpool_requests_waiting_in_queue": str(poll.waiting),
                "Threadpool_threads": str(poll.threads),
            }
        )
    return out


def true_means(story: tuple[Poll, ...] = STORY) -> list[float | None]:
    """Per poll, the real mean wait (µs) of the normal queue's requests dequeued in it."""
    return [None, *(p.normal.mean for p in story[1:])]


def rewrite_fixture(directory: Path, uptime_s: float) -> tuple[int, int]:
    """Threadpool_* frames and Uptime/Questions of `directory` rebuilt for `uptime_s`."""
    base_normal, base_hp = base_counts(uptime_s)
    rows = frames(base_normal, base_hp)
    status_path = directory / "percona_threadpool_status.json"
    status = json.loads(status_path.read_text())
    status["frames"] = [[{"Variable_name": k, "Value": v} for k, v in frame.items()] for frame in rows]
    status_path.write_text(json.dumps(status, indent=1) + "\n")
    # Questions: about one statement per dequeued request, so the lifetime count and the
    # per-poll rate follow the same uptime and rates.
    normal_rate, hp_rate = calm_rates()
    questions = base_normal + base_hp
    global_path = directory / "global_status.json"
    data = json.loads(global_path.read_text())
    for frame in data["frames"]:
        for row in frame:
            if row["Variable_name"] == "Uptime":
                row["Value"] = str(int(uptime_s))
            elif row["Variable_name"] == "Questions":
                row["Value"] = str(questions)
    data.setdefault("advance", {})["Uptime"] = int(POLL_S)
    data["advance"]["Questions"] = round((normal_rate + hp_rate) * POLL_S)
    global_path.write_text(json.dumps(data, indent=1) + "\n")
    return base_normal, base_hp


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "directory", type=Path, help="a fixture directory, e.g. backend/tests/fixtures/percona/8.4.10"
    )
    parser.add_argument(
        "--uptime", type=float, default=864_000.0, help="Uptime at frame 0, seconds (10 days)"
    )
    args = parser.parse_args()
    normal, hp = rewrite_fixture(args.directory, args.uptime)
    print(f"{args.directory}: lifetime counts at frame 0: normal {normal:,}, high priority {hp:,}")


if __name__ == "__main__":
    main()
