"""Webhook delivery against loopback receivers: a whole-attempt deadline, and no URL token in any log line."""

from __future__ import annotations

import asyncio
import logging
import socket
import threading
import time
from collections.abc import AsyncIterator

import pytest
from sqlalchemy.ext.asyncio import create_async_engine

from poolscope.alerts.notifiers.webhook import ReceiverWorker
from poolscope.alerts.repository import AlertRepository
from poolscope.alerts.settings import WebhookReceiver
from poolscope.schemas import Alert, Delivery
from poolscope.store.migrate import upgrade_to_head
from tests.alerts.support import Receiver
from tests.waiting import await_for

TOKEN = "Tok3nInPath"
QUERY_TOKEN = "Tok3nInQuery"


class TricklingReceiver:
    """Answers 200 one byte every `gap_s`: each read is quick, the whole answer is not."""

    def __init__(self, body_bytes: int = 12, gap_s: float = 0.4) -> None:
        self.body_bytes, self.gap_s = body_bytes, gap_s
        self._stop = threading.Event()
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            with conn:
                conn.settimeout(5)
                request = b""
                while b"\r\n\r\n" not in request:
                    request += conn.recv(65536)
                head = f"HTTP/1.1 200 OK\r\nContent-Length: {self.body_bytes}\r\n\r\n".encode()
                conn.sendall(head)
                for _ in range(self.body_bytes):
                    if self._stop.wait(self.gap_s):
                        return
                    conn.sendall(b"x")

    def close(self) -> None:
        self._stop.set()
        self.thread.join(timeout=5)
        self.sock.close()


@pytest.fixture
async def repo(tmp_path) -> AsyncIterator[AlertRepository]:
    url = f"sqlite+aiosqlite:///{tmp_path / 'alerts.db'}"
    await asyncio.to_thread(upgrade_to_head, url)
    db = create_async_engine(url)
    yield AlertRepository(db)
    await db.dispose()


def alert() -> Alert:
    now = time.time()
    return Alert(
        id=1,
        fingerprint="f",
        target="db1",
        rule="target_down",
        severity="critical",
        status="firing",
        summary="db1: target down",
        description="d",
        started_at=now,
        fired_at=now,
        last_active_at=now,
    )


async def delivered(worker: ReceiverWorker, repo: AlertRepository, timeout_s: float = 20) -> Delivery:
    worker.enqueue(alert())
    try:
        rows = await await_for(
            lambda: repo.deliveries(receiver=worker.receiver.name), timeout_s, "no delivery logged"
        )
        return rows[0]  # type: ignore[no-any-return]
    finally:
        await worker.stop()


async def test_an_attempt_has_a_deadline_for_the_whole_answer(repo):
    receiver = TricklingReceiver()  # 12 bytes, 0.4 s apart: ~5 s in all, never 1.5 s without a byte
    try:
        config = WebhookReceiver(name="slow", url=f"{receiver.url}/hook", timeout_s=1.5, max_attempts=1)
        worker = ReceiverWorker(config, repo, "http://poolscope")
        worker.start()
        row = await delivered(worker, repo)
    finally:
        receiver.close()
    assert (row.outcome, row.error) == ("failed", "no complete answer within 1.5 s")


async def test_no_log_line_carries_the_urls_path_or_query(repo, caplog):
    caplog.set_level(logging.DEBUG)
    receiver = Receiver()
    try:
        url = f"{receiver.url}/{TOKEN}?token={QUERY_TOKEN}"
        ok = ReceiverWorker(WebhookReceiver(name="ok", url=url), repo, "http://poolscope")
        ok.start()
        assert (await delivered(ok, repo)).outcome == "delivered"
        dead = ReceiverWorker(
            WebhookReceiver(name="dead", url=url.replace(receiver.url, "http://127.0.0.1:9"), max_attempts=1),
            repo,
            "http://poolscope",
        )
        dead.start()
        assert (await delivered(dead, repo)).outcome == "failed"
    finally:
        receiver.close()
    assert "HTTP Request: POST http://127.0.0.1:" in caplog.text  # httpx did log the requests ...
    assert "gave up after 1 attempts" in caplog.text
    assert TOKEN not in caplog.text and QUERY_TOKEN not in caplog.text  # ... without the token
