"""A MySQL conversation recorded at the socket and replayed to any client (pollprofile replay).

`Recorder` is a loopback proxy in front of a real server: for each client connection, in the
order they arrive, it keeps the server's greeting and then, for each packet the client sent,
every byte the server answered before the client's next packet. `replay_server` serves those
conversations back, the k-th connection the k-th conversation, without a server behind it: the
client reads the very bytes it read live, whatever library reads them (aiomysql, asyncmy...),
while no server shares this process's CPU. A replayed query must be the recorded one.

It runs in a process of its own (multiprocessing, spawn), so what it costs is not counted in
the measured process. Plain TCP only (no TLS), as the bench's sandboxes serve.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import pickle
import struct
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

COM_QUERY = 0x03
COM_QUIT = 0x01


@dataclass
class Conversation:
    greeting: bytes = b""
    # (the client's packet payload, every byte the server sent after it)
    exchanges: list[tuple[bytes, bytearray]] = field(default_factory=list)
    ended: bool = False  # the client closed it and the server's answers are all in


async def _read_packet(reader: asyncio.StreamReader) -> bytes | None:
    """One client packet, its header included (a command fits one packet: the bench sends no
    16 MB query)."""
    try:
        head = await reader.readexactly(4)
        return head + await reader.readexactly(struct.unpack("<I", head[:3] + b"\0")[0])
    except (asyncio.IncompleteReadError, ConnectionError):
        return None


class Recorder:
    """A proxy on 127.0.0.1 in front of host:port, in a thread of its own, recording every conversation."""

    def __init__(self, host: str, port: int) -> None:
        self.upstream = (host, port)
        self.conversations: list[Conversation] = []
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Recorder:
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("the recording proxy did not start")
        return self

    def __exit__(self, *exc: object) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        server = self._loop.run_until_complete(asyncio.start_server(self._serve, "127.0.0.1", 0))
        self.port = server.sockets[0].getsockname()[1]
        self._ready.set()
        try:
            self._loop.run_forever()
        finally:
            server.close()
            self._loop.close()

    async def _serve(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        conversation = Conversation()
        self.conversations.append(conversation)
        server_r, server_w = await asyncio.open_connection(*self.upstream)
        current = bytearray()

        async def from_server() -> None:
            nonlocal current
            while chunk := await server_r.read(1 << 16):
                current += chunk
                client_w.write(chunk)
                await client_w.drain()
            client_w.close()

        pump = asyncio.create_task(from_server())
        try:
            while (packet := await _read_packet(client_r)) is not None:
                # Whatever arrived before this packet answered the one before it (or is the greeting).
                if not conversation.exchanges:
                    conversation.greeting = bytes(current)
                current = bytearray()
                conversation.exchanges.append((packet[4:], current))
                server_w.write(packet)
                await server_w.drain()
        finally:
            server_w.close()
            await asyncio.gather(pump, return_exceptions=True)
            conversation.ended = True


async def _replay(conversations: list[Conversation], port_out: multiprocessing.Queue[object]) -> None:
    left = list(conversations)

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if not left:
            print("replay: a connection more than recorded", file=sys.stderr)
            writer.close()
            return
        conversation = left.pop(0)
        writer.write(conversation.greeting)
        for sent, answer in conversation.exchanges:
            packet = await _read_packet(reader)
            if packet is None:
                break
            payload = packet[4:]
            if payload[:1] == bytes([COM_QUERY]) and payload != sent:
                print(f"replay: another query than recorded: {payload[1:200]!r}", file=sys.stderr)
                break
            if payload[:1] == bytes([COM_QUIT]):
                break
            writer.write(answer)
            await writer.drain()
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port_out.put(server.sockets[0].getsockname()[1])
    async with server:
        await server.serve_forever()


def _replay_main(path: str, port_out: multiprocessing.Queue[object]) -> None:
    conversations = pickle.loads(Path(path).read_bytes())
    asyncio.run(_replay(conversations, port_out))


@contextmanager
def replay_server(conversations: list[Conversation], workdir: Path) -> Iterator[int]:
    """A process serving the conversations on 127.0.0.1; gives its port, stops it on the way out."""
    path = workdir / "conversations.pickle"
    path.write_bytes(pickle.dumps(conversations))
    context = multiprocessing.get_context("spawn")
    ports: multiprocessing.Queue[object] = context.Queue()
    process = context.Process(target=_replay_main, args=(str(path), ports), daemon=True)
    process.start()
    try:
        port = ports.get(timeout=30)
        assert isinstance(port, int)
        yield port
    finally:
        process.terminate()
        process.join(10)
        if process.is_alive():
            process.kill()
            process.join()
