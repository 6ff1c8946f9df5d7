"""A change's verdict from the seconds before and after it: better, worse, no detectable change, or
inconclusive when the load moved or another change overlaps. Pure: no I/O, no clock.

The method and its thresholds: docs/decisions/0500-change-verdict.md.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from statistics import median
from typing import Any

import numpy as np
from scipy import stats

from poolscope.actions.models import Judgement, LoadChange, MetricEffect, OverlappingChange, VerdictName
from poolscope.config import Settings

#: One poll: its time and each metric's value summed over label sets (all thread groups).
Second = tuple[float, Mapping[str, float]]

#: (metric, label, the smallest change that counts, both in the metric's unit): what says how
#: much load there is. A move larger than the threshold in either direction is not the change's.
LOAD: tuple[tuple[str, str, float], ...] = (
    ("qps", "QPS", 5.0),
    ("threads_connected", "threads connected", 2.0),
    ("threads_running", "threads running", 2.0),
)
#: (metric, label, the smallest difference that counts): what a change is judged on, at matched
#: load; higher is worse for both.
JUDGED: tuple[tuple[str, str, float], ...] = (
    ("tp_queue_wait_avg_ms", "queue wait (ms)", 1.0),
    # Polled once a second, the queue wait is a snapshot of the requests queued at that instant:
    # noisy where the queue is often empty. How many are queued says the same more steadily.
    ("tp_queued_connections", "queued requests", 1.0),
    ("tp_group_stalls_per_s", "stalls per s", 0.1),
)
#: A stall is a group busier than thread_pool_stall_limit: changing the limit changes what is
#: counted, so the stall rate says nothing about such a change.
NOT_JUDGED_FOR: Mapping[str, frozenset[str]] = {
    "tp_group_stalls_per_s": frozenset({"thread_pool_stall_limit"}),
}
BOOTSTRAP_RESAMPLES = 2000
#: Each side's polls are compared by their mean less the top and bottom fifth (a 20 % trimmed mean): one poll that
#: caught a second-long hiccup (a pool resizing itself) does not outweigh a minute of polls.
TRIM = 0.2


def _setting(name: str) -> Any:
    return Settings.model_fields[f"verdict_{name}"].default


@dataclass(frozen=True)
class Rules:
    """The verdict's thresholds. Their home is the settings `verdict_<name>` (config.py: default,
    bounds, meaning); these defaults are read from there."""

    max_load_change: float = _setting("max_load_change")
    qps_band: float = _setting("qps_band")
    min_matched_polls: int = _setting("min_matched_polls")
    confidence: float = _setting("confidence")

    @classmethod
    def of(cls, settings: Settings) -> Rules:
        """The thresholds a running Poolscope is configured with."""
        return cls(**{f.name: getattr(settings, f"verdict_{f.name}") for f in fields(cls)})


def judge(
    before: Sequence[Second],
    after: Sequence[Second],
    *,
    variable: str,
    overlaps: Sequence[OverlappingChange] = (),
    rules: Rules = Rules(),  # noqa: B008 - frozen, never mutated
    seed: int = 0,
) -> Judgement:
    """The verdict of a change of `variable` from the polls before and after it."""
    reasons: list[str] = []
    for o in overlaps:
        reasons.append(f"another change overlaps: #{o.id} {o.variable} {o.old_value or '?'} → {o.new_value}")
    load = [_load_shift(before, after, metric, label, floor, rules) for metric, label, floor in LOAD]
    # The change cost throughput: not a load change, a regression (the guard must see it), unless
    # another change may have done it.
    loss = None if overlaps else _throughput_loss(before, after, load, variable, rules, seed)
    if loss is not None:
        return Judgement(
            verdict="worse",
            reasons=[loss],
            load=load,
            effects=[],
            overlaps=[],
            matched_before=0,
            matched_after=0,
            polls_before=len(before),
            polls_after=len(after),
        )
    for shift in load:
        if shift.shifted and shift.change is not None:
            reasons.append(
                f"load changed by {shift.change:+.0%} ({shift.label} {_fmt(shift.before)} → {_fmt(shift.after)})"
            )

    bands_b = [_band(s, rules) for s in before]
    bands_a = [_band(s, rules) for s in after]
    common = {b for b in bands_b if b is not None} & {b for b in bands_a if b is not None}
    kept_b = [s for s, b in zip(before, bands_b, strict=True) if b in common]
    kept_a = [s for s, b in zip(after, bands_a, strict=True) if b in common]
    keys_b = [b for b in bands_b if b in common]
    keys_a = [b for b in bands_a if b in common]
    enough = min(len(kept_b), len(kept_a)) >= rules.min_matched_polls
    if not enough:
        reasons.append(
            f"too few polls at matched load ({len(kept_b)} before, {len(kept_a)} after;"
            f" {rules.min_matched_polls} needed)"
        )

    effects = []
    for metric, label, floor in JUDGED:
        if variable in NOT_JUDGED_FOR.get(metric, frozenset()):
            effects.append(_none(metric, label, "inconclusive", f"not judged: {variable} defines it"))
            continue
        effects.append(_effect(kept_b, keys_b, kept_a, keys_a, metric, label, floor, rules, seed, enough))

    if reasons:
        verdict: VerdictName = "inconclusive"
    elif any(e.verdict == "worse" for e in effects):
        verdict = "worse"
    elif any(e.verdict == "better" for e in effects):
        verdict = "better"
    else:
        verdict = "no detectable change"
    if verdict in ("better", "worse"):
        reasons = [_effect_reason(e, rules) for e in effects if e.verdict == verdict]
    return Judgement(
        verdict=verdict,
        reasons=reasons,
        load=load,
        effects=effects,
        overlaps=list(overlaps),
        matched_before=len(kept_b),
        matched_after=len(kept_a),
        polls_before=len(before),
        polls_after=len(after),
    )


def headline(j: Judgement) -> str:
    """One line: the verdict and its first reason ("inconclusive: load changed by +140 % (QPS ...)")."""
    return f"{j.verdict}: {j.reasons[0]}" if j.reasons else j.verdict


def _values(seconds: Sequence[Second], metric: str) -> list[float]:
    return [v for _, row in seconds if (v := row.get(metric)) is not None and math.isfinite(v)]


def _load_shift(
    before: Sequence[Second], after: Sequence[Second], metric: str, label: str, floor: float, rules: Rules
) -> LoadChange:
    vb, va = _values(before, metric), _values(after, metric)
    mb = median(vb) if vb else None
    ma = median(va) if va else None
    change = (ma - mb) / mb if mb and ma is not None else None
    shifted = (
        change is not None
        and mb is not None
        and ma is not None
        and abs(change) > rules.max_load_change
        and abs(ma - mb) >= floor
    )
    return LoadChange(metric=metric, label=label, before=mb, after=ma, change=change, shifted=shifted)


def _throughput_loss(
    before: Sequence[Second],
    after: Sequence[Second],
    load: Sequence[LoadChange],
    variable: str,
    rules: Rules,
    seed: int,
) -> str | None:
    """QPS fell beyond the threshold with the same clients connected while the queue wait or the
    stall rate rose (interval and all): the pool served less of the same demand, which is the
    change's doing. Why a QPS rise is never credited the same way: docs/decisions/0500-change-verdict.md."""
    shifts = {s.metric: s for s in load}
    qps, clients = shifts["qps"], shifts["threads_connected"]
    if not qps.shifted or qps.change is None or qps.change >= 0 or clients.shifted:
        return None
    one_band = [0] * len(before), [0] * len(after)
    enough = min(len(before), len(after)) >= rules.min_matched_polls
    for metric, label, floor in JUDGED:
        if variable in NOT_JUDGED_FOR.get(metric, frozenset()):
            continue
        e = _effect(before, one_band[0], after, one_band[1], metric, label, floor, rules, seed, enough)
        if e.verdict == "worse":
            return (
                f"throughput fell {-qps.change:.0%} (QPS {_fmt(qps.before)} → {_fmt(qps.after)}) with the same"
                f" clients connected ({_fmt(clients.before)} → {_fmt(clients.after)}), while {_effect_reason(e, rules, 'over the windows')}"
            )
    return None


def _band(second: Second, rules: Rules) -> int | None:
    """The QPS band of a poll: bands are rules.qps_band wide in ratio, so 1000 and 1150 match."""
    qps = second[1].get("qps")
    if qps is None or not math.isfinite(qps):
        return None
    if qps < 1.0:
        return -1  # an idle second: all of them one band
    return int(math.floor(math.log(qps) / math.log1p(rules.qps_band)))


def _effect(
    before: Sequence[Second],
    keys_b: Sequence[int | None],
    after: Sequence[Second],
    keys_a: Sequence[int | None],
    metric: str,
    label: str,
    floor: float,
    rules: Rules,
    seed: int,
    enough: bool,
) -> MetricEffect:
    """after - before of `metric` within each QPS band, weighted by the band's polls, with a
    stratified bootstrap interval: each band's polls before and after are resampled on their own."""
    samples: list[np.ndarray] = []
    weights: list[int] = []
    for band in sorted({k for k in keys_b if k is not None} & {k for k in keys_a if k is not None}):
        in_b = _band_values(before, keys_b, band, metric)
        in_a = _band_values(after, keys_a, band, metric)
        if len(in_b) and len(in_a):
            samples += [in_b, in_a]
            weights.append(len(in_b) + len(in_a))
    if not samples:
        return _none(metric, label, "inconclusive", "no data")
    share = np.array(weights, dtype=float) / sum(weights)
    mean_b = float(stats.trim_mean(np.concatenate(samples[0::2]), TRIM))
    mean_a = float(stats.trim_mean(np.concatenate(samples[1::2]), TRIM))

    def statistic(*xs: np.ndarray, axis: int = -1) -> np.ndarray:
        return sum(  # type: ignore[return-value]
            w
            * (stats.trim_mean(xs[2 * i + 1], TRIM, axis=axis) - stats.trim_mean(xs[2 * i], TRIM, axis=axis))
            for i, w in enumerate(share)
        )

    difference = float(statistic(*samples))
    if not enough:
        return MetricEffect(
            metric=metric,
            label=label,
            before=mean_b,
            after=mean_a,
            difference=difference,
            low=None,
            high=None,
            verdict="inconclusive",
        )
    if np.ptp(np.concatenate(samples)) == 0:
        # Every poll the same (an idle queue: 0 ms throughout): nothing to resample.
        return MetricEffect(
            metric=metric,
            label=label,
            before=mean_b,
            after=mean_a,
            difference=0.0,
            low=0.0,
            high=0.0,
            verdict="no detectable change",
        )
    # A band with one poll on a side resamples to itself: scipy wants two.
    padded = [x if len(x) > 1 else np.repeat(x, 2) for x in samples]
    result = stats.bootstrap(
        padded,
        statistic,
        vectorized=True,
        n_resamples=BOOTSTRAP_RESAMPLES,
        confidence_level=rules.confidence,
        method="percentile",
        rng=np.random.default_rng(seed),
    )
    low, high = float(result.confidence_interval.low), float(result.confidence_interval.high)
    if low > floor:
        verdict: VerdictName = "worse"
    elif high < -floor:
        verdict = "better"
    else:
        verdict = "no detectable change"
    return MetricEffect(
        metric=metric,
        label=label,
        before=mean_b,
        after=mean_a,
        difference=difference,
        low=low,
        high=high,
        verdict=verdict,
    )


def _band_values(seconds: Sequence[Second], keys: Sequence[int | None], band: int, metric: str) -> np.ndarray:
    return np.array(
        [
            v
            for (_, row), k in zip(seconds, keys, strict=True)
            if k == band and (v := row.get(metric)) is not None
        ],
        dtype=float,
    )


def _none(metric: str, label: str, verdict: VerdictName, note: str) -> MetricEffect:
    return MetricEffect(
        metric=metric,
        label=label,
        before=None,
        after=None,
        difference=None,
        low=None,
        high=None,
        verdict=verdict,
        note=note,
    )


def _effect_reason(e: MetricEffect, rules: Rules, where: str = "at matched load") -> str:
    return (
        f"{e.label} {_fmt(e.before)} → {_fmt(e.after)}, {_fmt(e.difference, signed=True)} {where}"
        f" ({rules.confidence:.0%} interval {_fmt(e.low, signed=True)} … {_fmt(e.high, signed=True)})"
    )


def _fmt(v: float | None, signed: bool = False) -> str:
    if v is None:
        return "n/a"
    text = f"{v:+.1f}" if signed else f"{v:.1f}"
    return text
