"""Write the backend's OpenAPI document (no server, no database) for the UI's generated types.

Usage: .venv/bin/python scripts/gen-openapi.py [OUT]  (default frontend/src/api/openapi.json;
`make contract` runs it, then openapi-typescript).
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str]) -> int:
    sys.path.insert(0, str(ROOT / "backend"))
    from poolscope.api.contract import OPENAPI_PATH, openapi_document, render

    # create_app warns when no UI is built; irrelevant to the document.
    logging.getLogger("poolscope").setLevel(logging.ERROR)
    out = Path(argv[1]) if len(argv) > 1 else ROOT / OPENAPI_PATH
    text = render(openapi_document())
    if not out.is_file() or out.read_text(encoding="utf-8") != text:
        out.write_text(text, encoding="utf-8")
        print(f"gen-openapi: wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
