"""Writes the published JSON Schema of the snapshot document: `python -m poolscope.snapshots.schema_file`."""

from __future__ import annotations

import json
from pathlib import Path

from poolscope.snapshots.document import json_schema

SCHEMA_FILE = Path(__file__).resolve().parents[3] / "docs" / "snapshot.schema.json"


def main() -> None:
    SCHEMA_FILE.write_text(json.dumps(json_schema(), indent=2) + "\n")
    print(f"wrote {SCHEMA_FILE}")


if __name__ == "__main__":
    main()
