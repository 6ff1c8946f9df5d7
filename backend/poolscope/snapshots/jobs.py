"""What the worker processes run (workers.py): import checks, report rendering, zipping.

Plain functions of plain values (bytes, str, settings), so they cross to a worker process cheaply
and never touch the store or the event loop.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from poolscope.snapshots.document import SnapshotDocument
from poolscope.snapshots.errors import DocumentRefused
from poolscope.snapshots.export import build_archive
from poolscope.snapshots.importing import prepare_import
from poolscope.snapshots.report import ReportView, render_report
from poolscope.snapshots.settings import SnapshotSettings


def import_job(data: bytes, config: SnapshotSettings, now: float) -> dict[str, Any]:
    """The store row for an uploaded file, or DocumentRefused with the reason."""
    return prepare_import(data, config, now)


def report_job(document_text: str, view: ReportView) -> str:
    return render_report(_read(document_text), view)


def archive_job(
    document_text: str, name: str, report_html: str | None, view: ReportView
) -> tuple[bytes, str]:
    """The zip, and the report in it (rendered unless the caller had it cached) for the cache."""
    html = report_html if report_html is not None else render_report(_read(document_text), view)
    return build_archive(document_text, html, name), html


def _read(document_text: str) -> SnapshotDocument:
    try:
        return SnapshotDocument.model_validate_json(document_text)
    except ValidationError as exc:
        # Only a snapshot stored by an older version, before imports were checked, can get here.
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(document)"
        raise DocumentRefused(
            f"this stored snapshot cannot be read ({where}: {first['msg']}); delete it"
        ) from None
