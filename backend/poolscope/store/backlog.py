"""What waits for the store, in order and bounded in bytes: in memory, then in a spool file.

A record is one line of JSON (store/writer.py makes and reads them: a poll's samples, an alert
change, a snapshot). Records go to memory while it has room, then to the end of the spool file;
once the spool holds records, every new one goes after them, so the order stays the order they
came in. They are taken from the head: memory first, then the spool from where reading stopped.
Past both bounds, `push` refuses a record (the writer counts it as dropped); an essential one
(an alert change: small, and an incident must not lose it) is kept in memory regardless.

The spool is a plain append-only file on local disk, written without fsync: a killed process
loses nothing written to it (the next process of this host adopts it, `adopt`); a power cut may
lose the last seconds, as SQLite's WAL with synchronous=NORMAL may.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

log = logging.getLogger(__name__)

SPOOL_PREFIX = "spool-"
SPOOL_SUFFIX = ".jsonl"
DEFAULT_MEMORY_BYTES = 64 * 2**20


@dataclass(frozen=True)
class Holding:
    """How much a process holds for a failing store, and where (Settings store_buffer_memory_mb,
    store_buffer_spool_mb, spool_dir; services.py `holding`). No spool_dir: memory only."""

    node: str = "local"
    memory_bytes: int = DEFAULT_MEMORY_BYTES
    spool_bytes: int = 0
    spool_dir: Path | None = None
    host: str = field(default_factory=lambda: _file_safe(socket.gethostname()))
    pid: int = field(default_factory=os.getpid)

    def spool_file(self) -> Path | None:
        if self.spool_dir is None or self.spool_bytes <= 0:
            return None
        return self.spool_dir / f"{SPOOL_PREFIX}{self.host}-{self.pid}{SPOOL_SUFFIX}"


def _file_safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)


class Backlog:
    def __init__(self, memory_bytes: int, spool_bytes: int, spool_path: Path | None) -> None:
        self.memory_bytes = memory_bytes
        self.spool_bytes = spool_bytes if spool_path is not None else 0
        self.spool_path = spool_path
        self._memory: deque[bytes] = deque()
        self.in_memory = 0  # bytes
        self._spool: BinaryIO | None = None
        self._read_at = 0  # offset of the first unread record in the spool
        self._spool_end = 0
        self.spool_broken: str | None = None  # why the spool cannot be written (a full disk)

    @property
    def in_spool(self) -> int:
        return self._spool_end - self._read_at

    @property
    def size(self) -> int:
        return self.in_memory + self.in_spool

    def __bool__(self) -> bool:
        return bool(self._memory) or self.in_spool > 0

    def push(self, record: bytes, *, essential: bool = False) -> bool:
        """Add a record at the tail; False when there was no room for it (it is not kept)."""
        if self.in_spool == 0 and (self.in_memory + len(record) <= self.memory_bytes or essential):
            self._memory.append(record)
            self.in_memory += len(record)
            return True
        if self._append_to_spool(record):
            return True
        if essential:  # the spool is full or broken: an alert change still goes (after the others)
            self._memory.append(record)
            self.in_memory += len(record)
            return True
        return False

    def push_front(self, records: list[bytes]) -> None:
        """Put taken records back at the head, in their order (their write failed)."""
        for record in reversed(records):
            self._memory.appendleft(record)
            self.in_memory += len(record)

    def take(self, max_records: int) -> list[bytes]:
        """Up to `max_records` from the head (from memory, else from the spool)."""
        out: list[bytes] = []
        while self._memory and len(out) < max_records:
            record = self._memory.popleft()
            self.in_memory -= len(record)
            out.append(record)
        if not out and self.in_spool:
            out = list(self._read_spool(max_records))
        return out

    def spill(self) -> bool:
        """Put everything held into the spool file, in order (the process stops: nothing in
        memory is lost). False when there is no spool, or it cannot take it all."""
        if not self._memory:
            return True
        if self.spool_path is None or self.spool_broken:
            return False
        try:
            self._open()
            assert self._spool is not None
            self._spool.seek(self._read_at)
            rest = self._spool.read(self.in_spool)
            temporary = self.spool_path.with_name(f".{self.spool_path.name}.spill")
            with temporary.open("wb") as out:
                for record in self._memory:
                    out.write(record + b"\n")
                out.write(rest)
            os.replace(temporary, self.spool_path)
        except OSError as error:
            self.spool_broken = str(error)
            log.warning("store buffer: spilling %d bytes to the spool failed: %s", self.in_memory, error)
            return False
        self._close()
        self._memory.clear()
        self.in_memory = 0
        self._read_at, self._spool_end = 0, self.spool_path.stat().st_size
        return True

    def adopt(self, path: Path) -> bytes:
        """Append the spool of a stopped process of this host to this one's (at start-up, before
        anything of this process: its records are older), beyond the spool's bound if need be;
        the file is removed once copied. Returns the records adopted."""
        if self.spool_path is None or self._memory:
            return b""
        try:
            data = path.read_bytes()
            if data and not data.endswith(b"\n"):  # its last record was cut by the kill
                data = data[: data.rfind(b"\n") + 1]
            self._open()
            assert self._spool is not None
            self._spool.seek(0, os.SEEK_END)
            self._spool.write(data)
            self._spool.flush()
        except OSError as error:
            log.warning("store buffer: the spool %s of a stopped process cannot be adopted: %s", path, error)
            return b""
        self._spool_end += len(data)
        with contextlib.suppress(OSError):
            path.unlink()
        return data

    def close(self) -> None:
        """Close the spool; an emptied one is removed (one with records stays for the next process)."""
        empty = not self.in_spool
        self._close()
        if empty and self.spool_path is not None:
            with contextlib.suppress(OSError):
                self.spool_path.unlink()

    # --- the spool file ---------------------------------------------------------------------

    def _open(self) -> None:
        if self._spool is None:
            assert self.spool_path is not None
            self.spool_path.parent.mkdir(parents=True, exist_ok=True)
            self._spool = self.spool_path.open("a+b")
            self._spool_end = self._spool.seek(0, os.SEEK_END)

    def _close(self) -> None:
        if self._spool is not None:
            with contextlib.suppress(OSError):
                self._spool.close()
            self._spool = None

    def _append_to_spool(self, record: bytes) -> bool:
        if self.spool_path is None or self.spool_broken or self.in_spool + len(record) + 1 > self.spool_bytes:
            return False
        try:
            self._open()
            assert self._spool is not None
            self._spool.seek(0, os.SEEK_END)
            self._spool.write(record + b"\n")
            self._spool.flush()
        except OSError as error:
            # A full disk: the records already in it stay readable; nothing more goes there.
            self.spool_broken = str(error)
            log.warning("store buffer: the spool file %s cannot be written: %s", self.spool_path, error)
            with contextlib.suppress(OSError):
                assert self._spool is not None
                self._spool.truncate(self._spool_end)
            return False
        self._spool_end += len(record) + 1
        return True

    def _read_spool(self, max_records: int) -> Iterator[bytes]:
        assert self._spool is not None
        self._spool.seek(self._read_at)
        for _ in range(max_records):
            line = self._spool.readline()
            if not line:
                break
            self._read_at += len(line)
            yield line.rstrip(b"\n")
        if self._read_at >= self._spool_end:  # read to the end: start the file again
            self._spool.truncate(0)
            self._read_at = self._spool_end = 0
            self.spool_broken = None


def orphans(spool_dir: Path, host: str, own: Path) -> list[Path]:
    """Spool files of this host's processes that are gone (their pid is not running), each
    claimed for this process by renaming it (two processes starting together take each once)."""
    found = []
    with contextlib.suppress(OSError):
        for path in sorted(spool_dir.glob(f"{SPOOL_PREFIX}{host}-*{SPOOL_SUFFIX}")):
            pid_text = path.name[len(SPOOL_PREFIX) + len(host) + 1 : -len(SPOOL_SUFFIX)]
            if path == own or not pid_text.isdigit() or pid_alive(int(pid_text)):
                continue
            claimed = path.with_name(f".{path.name}.{own.name}")
            try:
                os.rename(path, claimed)
            except OSError:
                continue  # another process claimed it first
            found.append(claimed)
    return found


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True
