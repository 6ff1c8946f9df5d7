"""The Dockerfile's own `dist` stage has every file scripts/dist.sh reads.

The container test (test_container.py) gives that stage this run's `make dist` instead of building
the UI again in the image, so the stage itself is checked here, from the two files' text: a file
dist.sh reads that the stage does not COPY breaks `docker build .` from a checkout (LICENSE did)."""

from __future__ import annotations

import re

from tests.deploy.support import ROOT


def _dist_stage() -> str:
    text = (ROOT / "Dockerfile").read_text()
    start = text.index(" AS dist\n")
    return text[start : text.index("\nFROM ", start)]


def test_the_dist_stage_copies_what_dist_sh_reads() -> None:
    read = set(re.findall(r"\$root/([\w./-]+)", (ROOT / "scripts" / "dist.sh").read_text()))
    assert read >= {"LICENSE", "migrations", "backend/poolscope", "backend/pyproject.toml"}, read
    copied = [
        source.rstrip("/")
        for line in _dist_stage().splitlines()
        if line.startswith("COPY ") and "--from" not in line
        for source in line.split()[1:-1]
    ]
    # The UI is made in the stage itself (npm run build), then handed to dist.sh as its UI_DIR.
    missing = {
        path
        for path in read - {"frontend/dist"}
        if not any(path == c or path.startswith(f"{c}/") for c in copied)
    }
    assert not missing, (
        f"scripts/dist.sh reads {sorted(missing)}, which the Dockerfile's dist stage does not COPY"
    )
