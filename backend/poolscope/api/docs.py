"""Swagger UI at /api/docs, only when `api_docs` is on (off by default).

Its files are Poolscope's own: the built UI carries them (frontend/vite.config.ts copies them from
the pinned swagger-ui-dist package), never a CDN, and the page runs no inline script (the
Content-Security-Policy of perimeter/headers.py allows none). The page, its files and the document
they show (/api/openapi.json) are public: the API's shape, nothing of this installation. Its calls
carry the tab's session (init.js).
"""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter, HTTPException
from fastapi.responses import FileResponse, HTMLResponse

DOCS_PATH = "/api/docs"
ASSET_PATH = "/api/docs/{name}"
# The only files served from the build's api-docs/ folder.
FILES = ("swagger-ui-bundle.js", "swagger-ui.css", "init.js")
PAGE = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Poolscope API</title>
<link rel="stylesheet" href="{DOCS_PATH}/swagger-ui.css"></head>
<body><div id="swagger-ui"></div>
<script src="{DOCS_PATH}/swagger-ui-bundle.js"></script><script src="{DOCS_PATH}/init.js"></script>
</body></html>
"""


def docs_router(static_dir: Path) -> APIRouter:
    folder = static_dir / "api-docs"
    router = APIRouter(include_in_schema=False)

    @router.get(DOCS_PATH)
    async def page() -> HTMLResponse:
        if not (folder / FILES[0]).is_file():
            raise HTTPException(status_code=404, detail="no Swagger UI in this build (run `make build`)")
        return HTMLResponse(PAGE)

    @router.get(ASSET_PATH)
    async def asset(name: str) -> FileResponse:
        if name not in FILES or not (folder / name).is_file():
            raise HTTPException(status_code=404, detail="no such file of Swagger UI")
        return FileResponse(folder / name)

    return router
