"""The downloadable archive: the snapshot JSON, its JSON Schema and the offline HTML report, zipped."""

from __future__ import annotations

import io
import json
import re
import zipfile

from poolscope.snapshots.document import json_schema
from poolscope.snapshots.report import utc


def base_name(target: str, moment_ts: float, snapshot_id: int | None = None) -> str:
    stamp = utc(moment_ts, "%Y%m%dT%H%M%SZ")
    safe_target = re.sub(r"[^A-Za-z0-9_.-]", "_", target)
    return f"poolscope-snapshot-{safe_target}-{stamp}" + (
        f"-{snapshot_id}" if snapshot_id is not None else ""
    )


def build_archive(document_json: str, report_html: str, name: str) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(f"{name}/snapshot.json", document_json)
        archive.writestr(f"{name}/report.html", report_html)
        archive.writestr(f"{name}/snapshot.schema.json", json.dumps(json_schema(), indent=2))
    return buffer.getvalue()
