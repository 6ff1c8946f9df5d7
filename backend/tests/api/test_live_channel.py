"""The live channel: each event is encoded once for every client, the number of clients is capped, and
a stream ends when its session does."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator

import httpx
import pytest

from poolscope.api import live as live_api
from poolscope.store import live as live_module
from poolscope.store.live import LiveHub
from tests.alerts.states import calm, pending_change, stalled
from tests.perimeter.helpers import VIEWER_PW, settings_for
from tests.served import login, ready_app
from tests.waiting import wait_for


async def test_an_event_is_encoded_once_and_shared_by_every_client(monkeypatch):
    calls = []

    def counting_encode(event):  # type: ignore[no-untyped-def]
        calls.append(event)
        return real_encode(event)

    real_encode = live_module.encode
    monkeypatch.setattr(live_module, "encode", counting_encode)
    hub = LiveHub()
    clients = [hub.open_client(limit=10) for _ in range(5)]
    async with hub.subscribe() as engine_queue:
        hub.publish(stalled(100))
        hub.publish(calm(101))
        assert engine_queue.get_nowait().ts == 100  # in-process subscribers still get the objects
    assert len(calls) == 2
    frames = [[c.queue.get_nowait() for _ in range(2)] for c in clients if c is not None]
    assert len(frames) == 5
    for first, second in frames:
        assert first is frames[0][0] and second is frames[0][1]
        assert first.data is frames[0][0].data
    assert frames[0][0].data.startswith(b"event: poll\ndata: {") and frames[0][0].data.endswith(b"\n\n")
    assert frames[0][0].target == "db1" and frames[0][0].kind == "poll"


def test_no_encoding_without_clients(monkeypatch):
    monkeypatch.setattr(live_module, "encode", lambda event: pytest.fail("encoded for nobody"))
    LiveHub().publish(calm(1))


def test_a_client_gets_only_what_it_asked_for_and_no_poll_pushes_out_an_alert(monkeypatch):
    hub = LiveHub()
    alerts = hub.open_client(limit=10, kinds=frozenset({"alert"}))
    other = hub.open_client(limit=10, kinds=frozenset({"poll"}), target="db2")
    assert alerts is not None and other is not None
    assert hub.poll_targets() == {"db2"}
    # Nobody wants db1's polls (calm() is db1's): not even encoded.
    monkeypatch.setattr(live_module, "encode", lambda event: pytest.fail(f"encoded for nobody: {event}"))
    hub.publish(calm(1.0))
    monkeypatch.undo()
    hub.publish(pending_change("db1", 1.0, "f1"))
    for i in range(live_module.SUBSCRIBER_BUFFER * 3):  # a fleet's polls, many more than a queue holds
        hub.publish(calm(10.0 + i))
    hub.publish(pending_change("db3", 2.0, "f2"))
    got = [alerts.queue.get_nowait() for _ in range(alerts.queue.qsize())]
    assert [(f.kind, f.target) for f in got] == [("alert", "db1"), ("alert", "db3")]
    assert other.queue.empty()  # db1's polls and the alert changes are not for it
    # An unfiltered client wants every target's polls.
    everything = hub.open_client(limit=10)
    assert everything is not None and hub.poll_targets() is None
    everything.close()
    alerts.close()
    other.close()
    assert hub.poll_targets() == set()


def test_client_places_are_capped_and_given_back():
    hub = LiveHub()
    first, second = hub.open_client(limit=2), hub.open_client(limit=2)
    assert first is not None and second is not None
    assert hub.open_client(limit=2) is None
    first.close()
    first.close()  # idempotent
    assert hub.client_count == 1 and hub.open_client(limit=2) is not None


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Iterator[str]:
    settings = settings_for(tmp_path_factory.mktemp("live"), users=[], live_max_subscribers=2)
    with ready_app(settings) as url:
        yield url


@contextlib.contextmanager
def stream(client: httpx.Client) -> Iterator[httpx.Response]:
    # Only the status is looked at: reading through a throw-away iterator would close the stream.
    with client.stream("GET", "/api/live") as response:
        yield response


def test_beyond_the_cap_the_live_channel_answers_503(base):
    with httpx.Client(base_url=base, timeout=10) as client:
        with stream(client) as one, stream(client) as two:
            assert one.status_code == two.status_code == 200
            with stream(client) as three:
                assert three.status_code == 503
                assert three.headers["Retry-After"] == "10"
                three.read()
                assert "live channel is full" in three.json()["detail"]

        # Both places are given back when the clients go away.
        def both_open() -> bool:
            with stream(client) as again, stream(client) as also:
                return again.status_code == also.status_code == 200

        wait_for(both_open, 15, "the places of closed streams were not given back")


def test_a_logout_ends_an_open_stream(tmp_path, monkeypatch):
    monkeypatch.setattr(live_api, "SESSION_RECHECK_S", 0.3)
    settings = settings_for(
        tmp_path, poll_interval_s=0.5, targets=[{"name": "db1", "dsn": "fixture://mariadb/10.11"}]
    )
    with ready_app(settings) as base, httpx.Client(base_url=base, timeout=10) as client:
        login(client, "vi", VIEWER_PW)
        with client.stream("GET", "/api/live") as response:
            assert response.status_code == 200
            lines = response.iter_lines()
            assert any(line == "event: poll" for line in lines)  # polls arrive while logged in
            with httpx.Client(base_url=base, timeout=10, headers=client.headers) as same_session:
                assert same_session.post("/api/auth/logout").status_code == 204
            logged_out = time.monotonic()
            for _ in lines:  # ends when the server ends the stream
                assert time.monotonic() - logged_out < 10, "the stream outlived its session"
