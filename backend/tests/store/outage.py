"""Stores that fail on demand, for the outage tests: SQLite on a small filesystem of its own that
the test fills (a tmpfs: root may mount one here), and a private PostgreSQL the test stops and
starts again (poolscope_dev/pgsandbox.py). Only the store's own failure is faked: the full disk
is full and the stopped server is stopped."""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from poolscope_dev.pgsandbox import PostgresSandbox


@contextlib.contextmanager
def small_disk(path: Path, size_mb: int = 16) -> Iterator[Path]:
    """A filesystem of `size_mb` at `path`: a tmpfs. Skips the test where none can be mounted
    (mount needs root and CAP_SYS_ADMIN; this machine kind has both)."""
    path.mkdir(parents=True, exist_ok=True)
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size_mb}m,mode=0777", "tmpfs", str(path)], capture_output=True
    )
    if mounted.returncode != 0:
        pytest.skip(f"no small filesystem for a full disk here: {mounted.stderr.decode().strip()}")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], capture_output=True)


def fill(disk: Path) -> Path:
    """Fill the filesystem `disk` until a write fails for want of space; returns the filler file
    (removing it frees the space)."""
    filler = disk / "filler"
    chunk = b"\0" * (1 << 16)
    # The suppress is outermost: closing the file flushes what the last write buffered, which
    # fails for want of space too.
    with contextlib.suppress(OSError), filler.open("wb") as out:
        while True:
            out.write(chunk)
            out.flush()
    return filler


@dataclass
class FailingStore:
    """A migrated store and how to make it fail and come back."""

    url: str
    kind: str
    disk: Path | None = None
    server: PostgresSandbox | None = None
    _filler: Path | None = None

    def fail(self) -> None:
        if self.server is not None:
            self.server.stop()
        else:
            assert self.disk is not None
            self._filler = fill(self.disk)

    def mend(self) -> None:
        if self.server is not None:
            self.server.start()
        elif self._filler is not None:
            self._filler.unlink()
            self._filler = None
