"""Incident snapshots: list, read, capture on demand, export (JSON, archive with offline report), import."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, HTTPException, Query, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response
from pydantic import BaseModel, Field

from poolscope.api.deps import TargetName
from poolscope.auth import User, require_role
from poolscope.snapshots.document import SnapshotSummary, json_schema
from poolscope.snapshots.export import base_name, build_archive, document_from_archive
from poolscope.snapshots.report import render_report
from poolscope.snapshots.service import SnapshotError, SnapshotService

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
        raise HTTPException(status_code=exc.status, detail=str(exc)) from None


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


@router.get("/snapshots/{snapshot_id}")
async def get_snapshot(snapshot_id: int, service: ServiceDep, _user: Viewer) -> Response:
    """The snapshot document (see the schema)."""
    text = await _guard(service.document_text(snapshot_id))
    return Response(content=text, media_type="application/json")


@router.get("/snapshots/{snapshot_id}/export.json")
async def export_json(snapshot_id: int, service: ServiceDep, _user: Viewer) -> Response:
    """The snapshot document as a download."""
    text = await _guard(service.document_text(snapshot_id))
    doc = await service.document(snapshot_id)
    name = base_name(doc, snapshot_id)
    return Response(
        content=text,
        media_type="application/json",
        headers={"Content-Disposition": f'attachment; filename="{name}.json"'},
    )


@router.get("/snapshots/{snapshot_id}/archive")
async def export_archive(snapshot_id: int, service: ServiceDep, _user: Viewer) -> Response:
    """A zip with snapshot.json, snapshot.schema.json and report.html (opens offline, no server)."""
    text = await _guard(service.document_text(snapshot_id))
    doc = await service.document(snapshot_id)
    name = base_name(doc, snapshot_id)
    return Response(
        content=build_archive(doc, text, name),
        media_type="application/zip",
        headers={"Content-Disposition": f'attachment; filename="{name}.zip"'},
    )


@router.get("/snapshots/{snapshot_id}/report.html", response_class=HTMLResponse)
async def report(snapshot_id: int, service: ServiceDep, _user: Viewer) -> HTMLResponse:
    """The offline HTML report, served for a quick look."""
    doc = await _guard(service.document(snapshot_id))
    return HTMLResponse(render_report(doc))


@router.post("/targets/{name}/snapshots", response_model=Created, status_code=201)
async def capture(
    name: TargetName, service: ServiceDep, _user: Operator, body: CaptureIn | None = None
) -> Created:
    """Capture a snapshot of the target now; its metric window completes after window_after_s."""
    snapshot_id = await _guard(service.capture(name, "manual", title=body.title if body else None))
    return Created(id=snapshot_id)


@router.post("/snapshots/import", response_model=Created, status_code=201)
async def import_snapshot(request: Request, service: ServiceDep, _user: Operator) -> Created:
    """Import an exported snapshot: the JSON document or the zip archive, as the request body."""
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
    if data[:2] == b"PK":
        try:
            text = document_from_archive(data, limit)
        except ValueError as exc:
            raise HTTPException(status_code=422, detail=str(exc)) from None
    else:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise HTTPException(status_code=422, detail="not a JSON document or a zip archive") from None
    snapshot_id = await _guard(service.import_document(text))
    return Created(id=snapshot_id)


@router.delete("/snapshots/{snapshot_id}", status_code=204)
async def delete_snapshot(snapshot_id: int, service: ServiceDep, _user: Operator) -> Response:
    """Delete a snapshot."""
    if not await service.delete(snapshot_id):
        raise HTTPException(status_code=404, detail=f"no snapshot {snapshot_id}")
    return Response(status_code=204)
