"""The downloadable archive: the snapshot JSON, its JSON Schema and the offline HTML report, zipped."""

from __future__ import annotations

import datetime as dt
import io
import json
import re
import zipfile

from poolscope.snapshots.document import SnapshotDocument, json_schema
from poolscope.snapshots.report import render_report


def base_name(doc: SnapshotDocument, snapshot_id: int | None = None) -> str:
    stamp = dt.datetime.fromtimestamp(doc.moment_ts, dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    target = re.sub(r"[^A-Za-z0-9_.-]", "_", doc.target)
    return f"poolscope-snapshot-{target}-{stamp}" + (f"-{snapshot_id}" if snapshot_id is not None else "")


def build_archive(doc: SnapshotDocument, document_json: str, name: str) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(f"{name}/snapshot.json", document_json)
        archive.writestr(f"{name}/report.html", render_report(doc))
        archive.writestr(f"{name}/snapshot.schema.json", json.dumps(json_schema(), indent=2))
    return buffer.getvalue()


def document_from_archive(data: bytes, max_bytes: int) -> str:
    """The snapshot.json inside an archive; bounded so a zip bomb cannot exhaust memory."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            members = [m for m in archive.infolist() if m.filename.endswith("snapshot.json")]
            if not members:
                raise ValueError("the archive has no snapshot.json")
            member = members[0]
            if member.file_size > max_bytes:
                raise ValueError(f"snapshot.json in the archive is {member.file_size} bytes, over the limit")
            with archive.open(member) as handle:
                content = handle.read(max_bytes + 1)
            if len(content) > max_bytes:
                raise ValueError("snapshot.json in the archive is over the size limit")
            return content.decode("utf-8")
    except zipfile.BadZipFile as exc:
        raise ValueError(f"not a valid zip archive: {exc}") from None
    except UnicodeDecodeError:
        raise ValueError("snapshot.json in the archive is not UTF-8 text") from None
