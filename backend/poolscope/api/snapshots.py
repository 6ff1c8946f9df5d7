"""Incident snapshots: list, read, capture on demand, export (JSON, archive with offline report), import."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, HTTPException, Query, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response
from pydantic import BaseModel, Field

from poolscope.api.deps import RowId, TargetName
from poolscope.auth import User, require_role
from poolscope.snapshots.document import SnapshotDocument, SnapshotSummary, json_schema
from poolscope.snapshots.errors import SnapshotError
from poolscope.snapshots.service import SnapshotService

router = APIRouter(prefix="/api", tags=["snapshots"])


def get_snapshots(request: Request) -> SnapshotService:
    service = getattr(request.app.state, "snapshots", None)
    if service is None:
        raise HTTPException(status_code=503, detail="snapshots are not available yet (starting)")
    return service  # type: ignore[no-any-return]


ServiceDep = Annotated[SnapshotService, Depends(get_snapshots)]
Viewer = Annotated[User, Depends(require_role("viewer"))]
Operator = Annotated[User, Depends(require_role("operator"))]


class CaptureIn(BaseModel):
    title: str | None = Field(default=None, max_length=200)


class Created(BaseModel):
    id: int


async def _guard(call: Any) -> Any:
    try:
        return await call
    except SnapshotError as exc:
        raise HTTPException(status_code=exc.status, detail=str(exc), headers=exc.headers) from None


@router.get("/snapshots", response_model=list[SnapshotSummary])
async def list_snapshots(
    service: ServiceDep, _user: Viewer, target: Annotated[str | None, Query(max_length=64)] = None
) -> list[SnapshotSummary]:
    """Every stored snapshot, newest first (without the document)."""
    return await service.list(target)


@router.get("/snapshots/schema.json")
async def snapshot_schema() -> JSONResponse:
    """The JSON Schema of the snapshot document (also in docs/snapshot.schema.json)."""
    return JSONResponse(json_schema())


# The stored text is sent as is; response_model only documents its shape.
@router.get("/snapshots/{snapshot_id}", response_model=SnapshotDocument)
async def get_snapshot(snapshot_id: RowId, service: ServiceDep, _user: Viewer) -> Response:
    """The snapshot document (see the schema)."""
    text = await _guard(service.document_text(snapshot_id))
    return Response(content=text, media_type="application/json")


@router.get("/snapshots/{snapshot_id}/export.json")
async def export_json(snapshot_id: RowId, service: ServiceDep, _user: Viewer) -> Response:
    """The snapshot document as a download."""
    text = await _guard(service.document_text(snapshot_id))
    name = await _guard(service.export_name(snapshot_id))
    return Response(
        content=text,
        media_type="application/json",
        headers={"Content-Disposition": f'attachment; filename="{name}.json"'},
    )


@router.get("/snapshots/{snapshot_id}/archive")
async def export_archive(snapshot_id: RowId, service: ServiceDep, _user: Viewer) -> Response:
    """A zip with snapshot.json, snapshot.schema.json and report.html (opens offline, no server)."""
    name, data = await _guard(service.archive(snapshot_id))
    return Response(
        content=data,
        media_type="application/zip",
        headers={"Content-Disposition": f'attachment; filename="{name}.zip"'},
    )


@router.get("/snapshots/{snapshot_id}/report.html", response_class=HTMLResponse)
async def report(snapshot_id: RowId, service: ServiceDep, _user: Viewer) -> HTMLResponse:
    """The offline HTML report, served for a quick look (rendered once, then from a cache)."""
    return HTMLResponse(await _guard(service.report_html(snapshot_id)))


@router.post("/targets/{name}/snapshots", response_model=Created, status_code=201)
async def capture(
    name: TargetName, service: ServiceDep, _user: Operator, body: CaptureIn | None = None
) -> Created:
    """Capture a snapshot of the target now; its metric window completes after window_after_s."""
    snapshot_id = await _guard(service.capture(name, "manual", title=body.title if body else None))
    return Created(id=snapshot_id)


@router.post("/snapshots/import", response_model=Created, status_code=201)
async def import_snapshot(request: Request, service: ServiceDep, _user: Operator) -> Created:
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
    snapshot_id = await _guard(service.import_file(data))
    return Created(id=snapshot_id)


@router.delete("/snapshots/{snapshot_id}", status_code=204)
async def delete_snapshot(snapshot_id: RowId, service: ServiceDep, _user: Operator) -> Response:
    """Delete a snapshot."""
    if not await service.delete(snapshot_id):
        raise HTTPException(status_code=404, detail=f"no snapshot {snapshot_id}")
    return Response(status_code=204)
