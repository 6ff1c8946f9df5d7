"""How every generated file in scripts/ is written: the file, or with --check only whether it is stale.

A generator renders its text and ends with `sys.exit(write_or_check(OUT, text, ...))`;
`--check` exits 1 when the file on disk differs (the drift check, as `make lint` runs it).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def write_or_check(
    out: Path, text: str, *, source: str, remedy: str, argv: list[str] | None = None
) -> int:
    """Write `text` to `out`; with --check in argv, write nothing and exit 1 when `out` is stale."""
    parser = argparse.ArgumentParser(description=f"Write {out.name} from {source}.")
    parser.add_argument(
        "--check", action="store_true", help="exit 1 if the file is not up to date"
    )
    args = parser.parse_args(argv)
    if args.check:
        if not out.exists() or out.read_text() != text:
            print(
                f"{out} is out of date with {source}: run `{remedy}`", file=sys.stderr
            )
            return 1
        return 0
    if not out.exists() or out.read_text() != text:
        out.write_text(text)
        print(f"wrote {out}")
    return 0
