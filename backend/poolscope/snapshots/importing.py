"""Import of a snapshot file someone sent: the checks a file from elsewhere needs before it is stored,
so that whatever is stored reads back, renders and zips. Runs in a worker process (workers.py).

Every refusal is a DocumentRefused whose message names the field and the problem (the API answers
422 with it); nothing is stored then.
"""

from __future__ import annotations

import io
import math
import zipfile
from typing import Any

import pydantic_core
from pydantic import ValidationError

from poolscope.snapshots.document import FORMAT, SCHEMA_VERSION, SnapshotDocument, stored_row
from poolscope.snapshots.errors import DocumentRefused
from poolscope.snapshots.scrub import redact_document_sql, redact_document_variables
from poolscope.snapshots.settings import SnapshotSettings

MIB = 1024 * 1024
# The latest time a report can print (9999-12-31T23:59:59Z); snapshot times are Unix seconds.
TS_MAX = 253402300799.0
# Wider numbers fit no SQL column and no JavaScript number.
INT_MAX = 2**63 - 1
# alert_id is an INTEGER column of the store (32 bits on MariaDB).
ALERT_ID_MAX = 2**31 - 1
# A real document nests about 8 levels (document > state > queue > item > field); `extra` adds a few.
MAX_DEPTH = 32
ENCRYPTED_FLAG = 0x1  # general purpose bit 0 of a zip entry


def prepare_import(data: bytes, config: SnapshotSettings, now: float) -> dict[str, Any]:
    """The row to store for an uploaded snapshot JSON or archive (as the body came)."""
    from_archive = data[:2] == b"PK"
    if from_archive:
        data = document_from_archive(data, int(config.import_max_mb * MIB))
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise DocumentRefused(
            "snapshot.json in the archive is not UTF-8 text"
            if from_archive
            else "not a JSON document or a zip archive"
        ) from None
    raw = _parse(text)
    _check_size(raw, config)
    doc = _validate(raw)
    _check_values(doc, config.import_max_string_kb * 1024)
    _check_times(doc)
    # A time in the future would keep it newest for ever: retention deletes the oldest first.
    doc.created_at = min(doc.created_at, now)
    doc.trigger = "import"
    # Imported files come from elsewhere: this installation's rules on secrets apply to them too.
    redact_document_variables(doc)
    if config.redact_sql_literals:
        redact_document_sql(doc)
    # An import is never completed here (its metrics are not ours): it is final as it came.
    return stored_row(doc, status="complete")


def document_from_archive(data: bytes, max_bytes: int) -> bytes:
    """The snapshot.json inside an archive; bounded so a zip bomb cannot exhaust memory."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            members = [m for m in archive.infolist() if m.filename.endswith("snapshot.json")]
            if not members:
                raise DocumentRefused("the archive has no snapshot.json")
            member = members[0]
            if member.flag_bits & ENCRYPTED_FLAG:
                raise DocumentRefused(
                    "snapshot.json in the archive is encrypted: send the archive without a password"
                )
            if member.file_size > max_bytes:
                raise DocumentRefused(
                    f"snapshot.json in the archive is {member.file_size} bytes, over the limit"
                )
            with archive.open(member) as handle:
                content = handle.read(max_bytes + 1)
    except DocumentRefused:
        raise
    except zipfile.BadZipFile as exc:
        raise DocumentRefused(f"not a valid zip archive: {exc}") from None
    except Exception as exc:  # noqa: BLE001 (corrupt data, unknown compression: whatever the zip holds)
        raise DocumentRefused(
            f"snapshot.json in the archive cannot be read: {type(exc).__name__}: {exc}"
        ) from None
    if len(content) > max_bytes:
        raise DocumentRefused("snapshot.json in the archive is over the size limit")
    return content


def _parse(text: str) -> Any:
    # pydantic-core's parser, not json: it refuses NaN and Infinity, lone surrogates (which no
    # store can encode) and nesting deeper than 200 levels, instead of recursing until it crashes.
    try:
        raw = pydantic_core.from_json(text, allow_inf_nan=False)
    except ValueError as exc:
        if "recursion limit" in str(exc):
            raise DocumentRefused(f"the JSON is nested too deeply: {exc}") from None
        raise DocumentRefused(f"not a JSON document: {exc}") from None
    if not isinstance(raw, dict) or raw.get("format") != FORMAT:
        raise DocumentRefused('not a Poolscope snapshot (the JSON has no "format": "poolscope-snapshot")')
    version = raw.get("schema_version")
    if type(version) is not int or version != SCHEMA_VERSION:
        raise DocumentRefused(
            f"unsupported snapshot schema_version {_short(version)} (this Poolscope reads {SCHEMA_VERSION})"
        )
    return raw


def _check_size(raw: dict[str, Any], config: SnapshotSettings) -> None:
    """Series and points counted before validation, which costs time and memory in proportion."""
    series = raw.get("series")
    if not isinstance(series, list):
        return  # validation says what is wrong with it
    if len(series) > config.import_max_series:
        raise DocumentRefused(
            f"series: {len(series)} series, over the limit of {config.import_max_series} (import_max_series)"
        )
    points = sum(
        len(s["points"]) for s in series if isinstance(s, dict) and isinstance(s.get("points"), list)
    )
    if points > config.import_max_points:
        raise DocumentRefused(
            f"series: {points} points in all, over the limit of {config.import_max_points} (import_max_points)"
        )


def _validate(raw: dict[str, Any]) -> SnapshotDocument:
    try:
        return SnapshotDocument.model_validate(raw)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or '(document)'}: {e['msg']}" for e in exc.errors()[:5]
        )
        more = f" (and {exc.error_count() - 5} more)" if exc.error_count() > 5 else ""
        raise DocumentRefused(f"snapshot does not match schema version 1: {problems}{more}") from None


def _check_values(doc: SnapshotDocument, max_chars: int) -> None:
    """Finite numbers that fit 64 bits, texts within the limit, bounded nesting: everywhere."""
    for i, s in enumerate(doc.series):
        where = f"series.{i}"
        for text in (s.metric, *s.labels, *s.labels.values()):
            _check_text(text, where, max_chars)
        for t, v in s.points:
            if not 0 <= t <= TS_MAX:
                raise DocumentRefused(f"{where}.points: time {t!r} is not a Unix time in seconds")
            if v is not None and not math.isfinite(v):
                raise DocumentRefused(f"{where}.points: value {v!r} is not a finite number")
    # Iterative, so no document can make it recurse; series (checked above) are most of the points.
    stack: list[tuple[Any, str, int]] = [(doc.model_dump(by_alias=True, exclude={"series"}), "", 0)]
    while stack:
        node, path, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise DocumentRefused(f"{path}: nested more than {MAX_DEPTH} levels deep")
        if isinstance(node, dict):
            for key, value in node.items():
                _check_text(str(key), path or "(document)", max_chars)
                stack.append((value, f"{path}.{key}" if path else str(key), depth + 1))
        elif isinstance(node, list | tuple):
            stack.extend((value, f"{path}.{i}", depth + 1) for i, value in enumerate(node))
        elif isinstance(node, str):
            _check_text(node, path, max_chars)
        elif isinstance(node, bool):
            continue
        elif isinstance(node, int) and abs(node) > INT_MAX:
            raise DocumentRefused(f"{path}: the number {_short(node)} is out of range")
        elif isinstance(node, float) and not math.isfinite(node):
            raise DocumentRefused(f"{path}: {node!r} is not a finite number")


def _check_text(text: str, path: str, max_chars: int) -> None:
    if len(text) > max_chars:
        raise DocumentRefused(
            f"{path}: a text of {len(text)} characters, over the limit of {max_chars} (import_max_string_kb)"
        )


def _check_times(doc: SnapshotDocument) -> None:
    window = doc.window
    times = {
        "created_at": doc.created_at,
        "moment_ts": doc.moment_ts,
        "window.from": window.from_,
        "window.to": window.to,
        "state.ts": doc.state.ts,
    }
    for name, value in times.items():
        if not 0 <= value <= TS_MAX:
            raise DocumentRefused(f"{name}: {value!r} is not a Unix time in seconds (0 to {TS_MAX:.0f})")
    if window.from_ > window.to:
        raise DocumentRefused(f"window: from ({window.from_!r}) is after to ({window.to!r})")
    if window.before_s < 0 or window.after_s < 0:
        raise DocumentRefused("window: before_s and after_s cannot be negative")
    if doc.alert_id is not None and not 0 < doc.alert_id <= ALERT_ID_MAX:
        raise DocumentRefused(f"alert_id: {_short(doc.alert_id)} is out of range (1 to {ALERT_ID_MAX})")


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:37]}..."
