"""A loopback TCP relay in front of a real MariaDB that can stall or cut one statement on demand.

It stands for a network path (or a server) that takes a statement and never answers: the one
thing a test cannot make the server do to an allow-listed SET GLOBAL, which waits on no lock
another session can hold. Everything else is the real server. Threads, so it serves the test's
event loop and a uvicorn app's alike; every thread ends at close().
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator

HOST = "127.0.0.1"


class StallRelay:
    def __init__(self, upstream_port: int) -> None:
        self.upstream_port = upstream_port
        self._listener = socket.create_server((HOST, 0))
        self._listener.settimeout(0.2)
        self.port = int(self._listener.getsockname()[1])
        self._lock = threading.Lock()
        self._rule: tuple[bytes, str, float] | None = None
        self._refusing = False
        self._closed = threading.Event()
        self._sockets: list[socket.socket] = []
        self._threads: list[threading.Thread] = []
        self.triggered = threading.Event()  # the armed rule met its packet
        self.hold_over = threading.Event()  # a held packet was forwarded, or its connection ended
        self._spawn(self._accept)

    def hold(self, marker: bytes, seconds: float) -> None:
        """The next client packet containing `marker` reaches the server `seconds` late."""
        self._arm((marker, "hold", seconds))

    def cut(self, marker: bytes) -> None:
        """The next client packet containing `marker` is dropped with its connection, and new
        connections are refused until restore()."""
        self._arm((marker, "cut", 0.0))

    def restore(self) -> None:
        with self._lock:
            self._refusing = False

    def _arm(self, rule: tuple[bytes, str, float]) -> None:
        with self._lock:
            self._rule = rule
        self.triggered.clear()
        self.hold_over.clear()

    def _spawn(self, fn: object, *args: object) -> None:
        thread = threading.Thread(target=fn, args=args, daemon=True)  # type: ignore[arg-type]
        self._threads.append(thread)
        thread.start()

    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                client, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with self._lock:
                refusing = self._refusing
            if refusing:
                client.close()
                continue
            try:
                upstream = socket.create_connection((HOST, self.upstream_port), timeout=5)
            except OSError:
                client.close()
                continue
            client.settimeout(None)
            upstream.settimeout(None)
            self._sockets += [client, upstream]
            self._spawn(self._pump, client, upstream, True)
            self._spawn(self._pump, upstream, client, False)

    def _take_rule(self, data: bytes) -> tuple[str, float] | None:
        with self._lock:
            if self._rule is None or self._rule[0] not in data:
                return None
            _, action, seconds = self._rule
            self._rule = None
            if action == "cut":
                self._refusing = True
        self.triggered.set()
        return action, seconds

    def _pump(self, src: socket.socket, dst: socket.socket, from_client: bool) -> None:
        held = False
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                rule = self._take_rule(data) if from_client else None
                if rule is not None and rule[0] == "cut":
                    break
                if rule is not None:
                    held = True
                    if self._closed.wait(rule[1]):
                        break
                dst.sendall(data)
                if held:
                    held = False
                    self.hold_over.set()
        except OSError:
            pass
        finally:
            if held:
                self.hold_over.set()
            for sock in (src, dst):
                _shut(sock)

    def close(self) -> None:
        self._closed.set()
        self._listener.close()
        for sock in self._sockets:
            _shut(sock)
        for thread in self._threads:
            thread.join(timeout=10)


def _shut(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    with contextlib.suppress(OSError):
        sock.close()


@contextlib.contextmanager
def stall_relay(upstream_port: int) -> Iterator[StallRelay]:
    relay = StallRelay(upstream_port)
    try:
        yield relay
    finally:
        relay.close()
