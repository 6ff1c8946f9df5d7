"""The JSON texts of a latest row (store/latest.py), byte for byte what pydantic's
`model_dump_json` gives, with less encoding per poll: an idle server's poll repeats most of the
previous one.

- Samples are never changed once made, and collectors hand the same object on while a series'
  value stays the same (poller/collectors/base.py `sample()`): per target, a sample that is the
  very object at its place in the target's last list of samples keeps its text.
- The poll's collector statuses are one list in its TargetInfo and its TargetState: encoded once,
  with the info, and their text put into the state's (encoded without them).
- Parts of the state that an idle server repeats (the pool summary, threads, transactions:
  analysis/last_made.py LastMade's; the carried waits; the variables) are the very objects of
  the last poll or equal ones: per target, such a part keeps its text, and the rest of the state
  is encoded without it and the kept texts put in at their places (`Spliced`). The info is one
  pass: cutting its 3 kB text costs more than its repeated server and connection save.
- The overview figures (overview_fields_json) repeat but for the poll time and a few figures:
  the rest is encoded once per distinct set of values and the floats are put in.

Floats are put in as Python's repr only where that is pydantic's text too (finite, 0 or at
least 1e-4 in size: below, pydantic writes 0.00001 and 1e-7 where repr writes 1e-05 and 1e-07);
any other value is encoded by pydantic. tests/store/test_latest_json.py compares every text with
model_dump_json, on real polls and on the edge cases.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Sequence
from itertools import compress
from operator import is_, is_not
from typing import Any, cast

from pydantic import BaseModel

from poolscope.schemas import OverviewRow, Sample, TargetInfo, TargetState

# Distinct overview figures kept (cleared when full).
OVERVIEWS = 8192
# The overview row's fields that come from the poll (name, tags and alerts are the API's).
OVERVIEW_EXCLUDE = {"name", "tags", "active_alerts"}
# Overview fields that change from poll to poll: put into the encoded rest as they come.
OVERVIEW_FLOATS = ("last_poll_at", "longest_wait_ms", "qps")
COLLECTORS = "collectors"


def float_json(value: float | None) -> str | None:
    """The value as pydantic writes a float field, or None where that might differ from repr."""
    if value is None:
        return "null"
    if value.__class__ is float and math.isfinite(value) and (value == 0.0 or abs(value) >= 1e-4):
        return repr(value)
    return None


def _key_after(model: type[BaseModel], name: str) -> str:
    """The key of the field that follows `name` in the model's JSON, as it appears there."""
    fields = list(model.model_fields)
    return f',"{fields[fields.index(name) + 1]}":'


# The statuses are cut from the info's JSON (between their key and the next one: the last of
# each in the text, since nothing after them has such a key and a quote inside a string is
# escaped) and put into the state's, in front of the key that follows them there.
INFO_COLLECTORS = f',"{COLLECTORS}":'
INFO_AFTER_COLLECTORS = _key_after(TargetInfo, COLLECTORS)


def variables_fingerprint(variables: dict[str, str]) -> str:
    """A short digest of a state's variables: the latest row carries it (store/latest.py
    `variables_fp`), so a reader sees that they changed without decoding the state."""
    text = json.dumps(sorted(variables.items()), separators=(",", ":"))
    return hashlib.blake2b(text.encode(), digest_size=8).hexdigest()


class ListJson:
    """A list's JSON per target, from the target's last list of the same length: an item that is
    the very object at its place there keeps its text (found without a Python loop over all of
    them); the others are encoded. Only for objects never changed once made."""

    def __init__(self, model: type[BaseModel]) -> None:
        self._to_json = model.__pydantic_serializer__.to_json
        # Per target, by length: the last list's objects and their texts.
        self._last: dict[str, dict[int, tuple[tuple[BaseModel, ...], list[str]]]] = {}

    def json(self, target: str, objects: Sequence[BaseModel]) -> str:
        to_json = self._to_json
        lasts = self._last.get(target)
        if lasts is None:
            lasts = self._last[target] = {}
        last = lasts.get(len(objects))
        if last is None:
            texts = [to_json(obj).decode() for obj in objects]
        else:
            was, texts = last[0], last[1].copy()
            for i in compress(range(len(was)), map(is_not, objects, was)):
                texts[i] = to_json(objects[i]).decode()
        lasts[len(objects)] = (tuple(objects), texts)
        return f"[{','.join(texts)}]"

    def forget(self, target: str) -> None:
        self._last.pop(target, None)


def _same(last: Any, value: Any) -> bool:
    return last is value


def _equal(last: Any, value: Any) -> bool:
    # A dict's JSON follows its order, which == ignores.
    if isinstance(value, dict):
        return isinstance(last, dict) and list(last.items()) == list(value.items())
    return bool(last == value)


def _same_items(last: Any, value: Any) -> bool:
    return len(last) == len(value) and all(map(is_, last, value))


class Spliced:
    """A model's JSON with some fields' texts kept per target: a field whose value is as it was
    last time (`kept`: name -> test of the last value against this one) keeps its text; the
    model is encoded without the kept fields and their texts are put in front of the key that
    follows them. Kept by identity only for objects never changed once made; by equality only
    where equal values encode the same (strings)."""

    def __init__(self, model: type[BaseModel], kept: dict[str, Callable[[Any, Any], bool]]) -> None:
        self._to_json = model.__pydantic_serializer__.to_json
        self._kept = kept
        self.exclude = set(kept)
        # Runs of kept fields (each last field first), with the key of the field after the run,
        # last run first: each key is looked for from the end (rindex) before the one after it,
        # so only what is encoded after it (fields of known keys, strings with their quotes
        # escaped) lies beyond it.
        runs: list[tuple[str, list[str]]] = []
        run: list[str] = []
        for name in model.model_fields:
            if name in kept:
                run.append(name)
            elif run:
                runs.append((f',"{name}":', run[::-1]))
                run = []
        if run:
            raise ValueError(f"{model.__name__}: a kept field needs a field after it")
        self._runs = runs[::-1]
        self._last: dict[str, dict[str, tuple[Any, str]]] = {}

    def json(self, target: str, obj: BaseModel, given: dict[str, str]) -> str:
        """obj's JSON; `given`: texts made by the caller for kept fields (`,"name":value`)."""
        text = self._to_json(obj, exclude=self.exclude).decode()
        last = self._last.get(target)
        if last is None:
            last = self._last[target] = {}
        values = obj.__dict__
        pieces = []
        end = len(text)
        for key, run in self._runs:
            at = text.rindex(key, 0, end)
            pieces.append(text[at:end])
            for name in run:
                if name in given:
                    pieces.append(given[name])
                    continue
                value, kept = values[name], last.get(name)
                if kept is None or not self._kept[name](kept[0], value):
                    part = self._to_json(obj, include={name}).decode()
                    kept = last[name] = (value, f",{part[1:-1]}")
                pieces.append(kept[1])
            end = at
        pieces.append(text[:end])
        pieces.reverse()
        return "".join(pieces)

    def forget(self, target: str) -> None:
        self._last.pop(target, None)


# What an idle server's state repeats: LastMade's models (by identity), the carried waits (a new
# list of the same objects), the variables (a new dict of equal strings). The statuses are given:
# cut from the info's text.
STATE_KEPT: dict[str, Callable[[Any, Any], bool]] = {
    "transactions": _same,
    "waits": _same_items,
    "threads": _same,
    "variables": _equal,
    "pool": _same,
    COLLECTORS: _same,
}


class LatestJson:
    """Encodes polls for latest rows; one per LatestRows (caches are per process)."""

    def __init__(self) -> None:
        self._samples = ListJson(Sample)
        self._info_to_json = TargetInfo.__pydantic_serializer__.to_json
        self._state = Spliced(TargetState, STATE_KEPT)
        self._state_to_json = TargetState.__pydantic_serializer__.to_json
        # Overview: the encoded rest, split where the floats go, by the other fields' values.
        self._overviews: dict[tuple[Any, ...], list[str]] = {}
        # Each target's last variables and their fingerprint: they seldom change, and comparing
        # two dicts of a few dozen strings costs far less than hashing one.
        self._fingerprints: dict[str, tuple[dict[str, str], str]] = {}

    def samples(self, target: str, samples: Sequence[Sample]) -> str:
        return self._samples.json(target, samples)

    def forget(self, target: str) -> None:
        """Drop what is kept for a target this process no longer writes."""
        self._samples.forget(target)
        self._state.forget(target)
        self._fingerprints.pop(target, None)

    def variables_fp(self, target: str, state: TargetState) -> str:
        """variables_fingerprint(state.variables)."""
        last = self._fingerprints.get(target)
        if last is not None and last[0] == state.variables:
            return last[1]
        fingerprint = variables_fingerprint(state.variables)
        self._fingerprints[target] = (state.variables, fingerprint)
        return fingerprint

    def info_state(self, info: TargetInfo, state: TargetState | None) -> tuple[str, str | None]:
        """info.model_dump_json() and state.model_dump_json() (None without a state)."""
        info_json = self._info_to_json(info).decode()
        if state is None:
            return info_json, None
        if state.collectors is not info.collectors:
            return info_json, self._state_to_json(state).decode()
        end = info_json.rindex(INFO_AFTER_COLLECTORS)
        collectors = info_json[info_json.rindex(INFO_COLLECTORS, 0, end) : end]
        return info_json, self._state.json(info.name, state, {COLLECTORS: collectors})

    def overview(self, info: TargetInfo) -> str:
        """overview_fields_json(info)."""
        summary, server = info.summary, info.server
        floats = (info.last_poll_at, summary.longest_wait_ms, summary.qps)
        texts = [float_json(x) for x in floats]
        if None in texts:
            return overview_fields_json(info)
        floats_json = cast(list[str], texts)
        values = (
            info.status,
            info.reason,
            server.pool_enabled if server is not None else None,
            summary.groups,
            summary.stalled_groups,
            summary.queue_length,
            summary.queued_connections,
            summary.threads_connected,
            summary.threads_running,
        )
        key = (values, tuple(map(type, values)))
        parts = self._overviews.get(key)
        if parts is None:
            if len(self._overviews) >= OVERVIEWS:
                self._overviews.clear()
            parts = self._overviews[key] = _split_at_floats(info)
        out = parts[0]
        for text, part in zip(floats_json, parts[1:], strict=True):
            out += text + part
        return out


def _overview_row(info: TargetInfo, floats_null: bool = False) -> OverviewRow:
    summary = info.summary
    return OverviewRow(
        name=info.name,
        status=info.status,
        reason=info.reason,
        last_poll_at=None if floats_null else info.last_poll_at,
        pool_enabled=info.server.pool_enabled if info.server else None,
        groups=summary.groups,
        stalled_groups=summary.stalled_groups,
        queue_length=summary.queue_length,
        queued_connections=summary.queued_connections,
        longest_wait_ms=None if floats_null else summary.longest_wait_ms,
        threads_connected=summary.threads_connected,
        threads_running=summary.threads_running,
        qps=None if floats_null else summary.qps,
    )


def overview_fields_json(info: TargetInfo) -> str:
    """The poll's part of the target's OverviewRow, as a JSON object in the row's field order."""
    return _overview_row(info).model_dump_json(exclude=OVERVIEW_EXCLUDE)


def _split_at_floats(info: TargetInfo) -> list[str]:
    """The overview JSON with the floats null, split where each float's text goes."""
    text = _overview_row(info, floats_null=True).model_dump_json(exclude=OVERVIEW_EXCLUDE)
    parts = []
    for name in OVERVIEW_FLOATS:
        # `"name":` is a key: inside a string its quotes would be escaped.
        head, _, text = text.partition(f'"{name}":null')
        parts.append(f'{head}"{name}":')
    return [*parts, text]
