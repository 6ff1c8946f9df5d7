"""What the deploy tests share: `make dist`'s sdist and wheel, made once per run."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.deploy.support import ROOT


@pytest.fixture(scope="session")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`make dist` into a directory of its own (named dist, as the Dockerfile's stage that makes
    it): the wheel and sdist of this checkout, with the UI `make build` made once per run."""
    out = tmp_path_factory.mktemp("shipped") / "dist"
    subprocess.run(
        ["make", "--no-print-directory", "-C", str(ROOT), "dist", f"DIST={out}"], check=True, timeout=600
    )
    return out
