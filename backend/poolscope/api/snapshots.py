"""Incident snapshots: list, read, capture on demand, export (JSON, archive with offline report), import."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, HTTPException, Query, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response
from pydantic import Field

from poolscope.api.deps import RowId, SnapshotsDep, TargetName
from poolscope.auth import User, require_role
from poolscope.schemas.base import Schema
from poolscope.snapshots.document import SnapshotDocument, SnapshotSummary, json_schema
from poolscope.snapshots.report import CSP as REPORT_CSP
from poolscope.snapshots.report import ReportView, Theme

router = APIRouter(prefix="/api", tags=["snapshots"])


Viewer = Annotated[User, Depends(require_role("viewer"))]
Operator = Annotated[User, Depends(require_role("operator"))]


def report_view(
    tz_offset_min: Annotated[
        int,
        Query(ge=-16 * 60, le=16 * 60, description="the reader's zone: minutes east of UTC at the moment"),
    ] = 0,
    tz_name: Annotated[
        str,
        Query(
            max_length=32,
            pattern=r"^[A-Za-z0-9+\-:_/ ]+$",
            description="that zone's name, as the UI shows it",
        ),
    ] = "UTC",
    theme: Annotated[Theme, Query(description="the theme the report opens in (switchable in it)")] = "system",
) -> ReportView:
    """How the report shows times and colours: as the UI that asked for it (UTC by default)."""
    return ReportView(tz_offset_min=tz_offset_min, tz_name=tz_name, theme=theme)


ViewDep = Annotated[ReportView, Depends(report_view)]


class CaptureIn(Schema):
    """A snapshot to capture now."""

    title: str | None = Field(default=None, max_length=200)
    """A title for people; default "<target>: snapshot"."""


class Created(Schema):
    """What was stored."""

    id: int
    """Its id."""


@router.get("/snapshots", response_model=list[SnapshotSummary])
async def list_snapshots(
    service: SnapshotsDep, _user: Viewer, target: Annotated[str | None, Query(max_length=64)] = None
) -> list[SnapshotSummary]:
    """Every stored snapshot, newest first (without the document)."""
    return await service.list(target)


@router.get("/snapshots/schema.json")
async def snapshot_schema() -> JSONResponse:
    """The JSON Schema of the snapshot document (also in docs/reference/snapshot.schema.json)."""
    return JSONResponse(json_schema())


# The stored text is sent as is; response_model only documents its shape.
@router.get("/snapshots/{snapshot_id}", response_model=SnapshotDocument)
async def get_snapshot(snapshot_id: RowId, service: SnapshotsDep, _user: Viewer) -> Response:
    """The snapshot document (see the schema)."""
    text = await service.document_text(snapshot_id)
    return Response(content=text, media_type="application/json")


@router.get("/snapshots/{snapshot_id}/export.json")
async def export_json(snapshot_id: RowId, service: SnapshotsDep, _user: Viewer) -> Response:
    """The snapshot document as a download."""
    text = await service.document_text(snapshot_id)
    name = await service.export_name(snapshot_id)
    return Response(
        content=text,
        media_type="application/json",
        headers={"Content-Disposition": f'attachment; filename="{name}.json"'},
    )


@router.get("/snapshots/{snapshot_id}/archive")
async def export_archive(snapshot_id: RowId, service: SnapshotsDep, _user: Viewer, view: ViewDep) -> Response:
    """A zip with snapshot.json, snapshot.schema.json and report.html (opens offline, no server)."""
    name, data = await service.archive(snapshot_id, view)
    return Response(
        content=data,
        media_type="application/zip",
        headers={"Content-Disposition": f'attachment; filename="{name}.zip"'},
    )


@router.get("/snapshots/{snapshot_id}/report.html", response_class=HTMLResponse)
async def report(snapshot_id: RowId, service: SnapshotsDep, _user: Viewer, view: ViewDep) -> HTMLResponse:
    """The offline HTML report, served for a quick look (rendered once per view, then from a cache)."""
    policy = f"{REPORT_CSP}; frame-ancestors 'none'"
    return HTMLResponse(
        await service.report_html(snapshot_id, view), headers={"Content-Security-Policy": policy}
    )


@router.post("/targets/{name}/snapshots", response_model=Created, status_code=201)
async def capture(
    name: TargetName, service: SnapshotsDep, _user: Operator, body: CaptureIn | None = None
) -> Created:
    """Capture a snapshot of the target now; its metric window completes after window_after_s."""
    snapshot_id = await service.capture(name, "manual", title=body.title if body else None)
    return Created(id=snapshot_id)


@router.post("/snapshots/import", response_model=Created, status_code=201)
async def import_snapshot(request: Request, service: SnapshotsDep, _user: Operator) -> Created:
    """Import an exported snapshot: the JSON document or the zip archive, as the request body.

    Checked in a worker process: 422 with the reason when it is not a valid snapshot or exceeds the
    import limits, 503 with Retry-After when the workers stay busy; nothing is stored then."""
    limit = int(service.config.import_max_mb * 1024 * 1024)
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > limit:
        raise HTTPException(
            status_code=413, detail=f"snapshot file is {int(declared)} bytes, over the limit of {limit} bytes"
        )
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise HTTPException(status_code=413, detail=f"snapshot file is over the limit of {limit} bytes")
        chunks.append(chunk)
    data = b"".join(chunks)
    if not data:
        raise HTTPException(
            status_code=422, detail="empty request: send the snapshot JSON or archive as the body"
        )
    snapshot_id = await service.import_file(data)
    return Created(id=snapshot_id)


@router.delete("/snapshots/{snapshot_id}", status_code=204)
async def delete_snapshot(snapshot_id: RowId, service: SnapshotsDep, _user: Operator) -> Response:
    """Delete a snapshot."""
    if not await service.delete(snapshot_id):
        raise HTTPException(status_code=404, detail=f"no snapshot {snapshot_id}")
    return Response(status_code=204)
