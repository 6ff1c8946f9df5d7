"""The packets of one MySQL response, cut from the stream's bytes as they arrive (poller/wire.py reads them).

A poll's answer mostly arrives before it is parsed: every whole packet that has arrived is cut in
one loop, into a queue its reader walks with an index, instead of a call per packet.
"""

from __future__ import annotations

import asyncio
import struct

import aiomysql
from pymysql import err
from pymysql.constants import CR

_MAX_PACKET = 0xFFFFFF
_READ_CHUNK = 256 * 1024
_HEAD = struct.Struct("<I").unpack_from


class Packets:
    """Packets of one response, split from the stream's bytes all at once, in one loop.

    Every whole packet that has arrived goes to `queue` as soon as it is read; readers walk the
    queue with their own index (`at`) and await `fetch()` only when it is used up. A poll's
    answer mostly arrives before it is parsed, so that is one loop over it instead of a call
    per packet.
    """

    def __init__(self, conn: aiomysql.Connection) -> None:
        self._reader: asyncio.StreamReader = conn._reader
        self._buf = b""
        self._pos = 0
        self._seq = 1  # the command itself was packet 0
        self.queue: list[bytes] = []
        self.at = 0  # the next packet of `queue` to read

    async def fetch(self) -> None:
        """Read until at least one more whole packet is queued."""
        queued = len(self.queue)
        # The bytes are joined once there are enough for the next packet, not on every read: a
        # packet of megabytes arrives in many reads.
        pending = [self._buf[self._pos :]]
        have, need = len(pending[0]), self._needed()
        while True:
            chunk = await self._reader.read(_READ_CHUNK)
            if not chunk:
                raise err.OperationalError(CR.CR_SERVER_LOST, "Lost connection to MySQL server during query")
            pending.append(chunk)
            have += len(chunk)
            if have >= need:
                self._buf = b"".join(pending)
                self._pos = 0
                self._split()
                if len(self.queue) > queued:
                    return
                pending = [self._buf[self._pos :]]
                have, need = len(pending[0]), self._needed()

    def _needed(self) -> int:
        """How many bytes from the read position the next packet needs at least (its headers
        so far tell)."""
        buf, pos, need = self._buf, self._pos, 0
        while len(buf) - pos >= 4:
            length: int = _HEAD(buf, pos)[0] & _MAX_PACKET
            need += 4 + length
            if length < _MAX_PACKET or len(buf) - pos < 4 + length:
                return need + (4 if length == _MAX_PACKET else 0)
            pos += 4 + length
        return need + 4

    async def next(self) -> bytes:
        if self.at == len(self.queue):
            await self.fetch()
        self.at += 1
        return self.queue[self.at - 1]

    def _split(self) -> None:
        buf, pos, seq, queue = self._buf, self._pos, self._seq, self.queue
        append, end = queue.append, len(buf)
        # As few steps per packet as it takes (a poll's answer is ~180 packets): the next
        # packet's end first, then whether it has arrived and is a whole one.
        while end - pos >= 4:
            head = _HEAD(buf, pos)[0]  # 3 bytes of length, 1 of sequence number
            if head >> 24 != seq:
                raise err.InternalError(f"Packet sequence number wrong - got {head >> 24} expected {seq}")
            start = pos + 4
            stop = start + (head & _MAX_PACKET)
            if stop > end or stop - start == _MAX_PACKET:
                if stop - start != _MAX_PACKET:
                    break  # not all here yet
                # A payload of 16 MB or more continues in the next packet.
                joined = _long_packet(buf, pos, seq)
                if joined is None:
                    break
                payload, pos, seq = joined
                append(payload)
                continue
            append(buf[start:stop])
            pos = stop
            seq = (seq + 1) & 0xFF
        self._pos, self._seq = pos, seq

    @property
    def drained(self) -> bool:
        return self._pos == len(self._buf) and self.at == len(self.queue)


def _long_packet(buf: bytes, pos: int, seq: int) -> tuple[bytes, int, int] | None:
    """A payload split over packets of 16 MB (the last one shorter, maybe empty), if all have arrived."""
    parts: list[bytes] = []
    while True:
        if len(buf) - pos < 4:
            return None
        head = _HEAD(buf, pos)[0]
        if head >> 24 != seq:
            raise err.InternalError(f"Packet sequence number wrong - got {head >> 24} expected {seq}")
        length = head & _MAX_PACKET
        if len(buf) - pos - 4 < length:
            return None
        parts.append(buf[pos + 4 : pos + 4 + length])
        pos += 4 + length
        seq = (seq + 1) & 0xFF
        if length < _MAX_PACKET:
            return b"".join(parts), pos, seq
