"""Login limits that hand nobody a lockout: backoff per address and name, a cap per failing address,
a slowdown (never a refusal) per name; on a running backend reached from several loopback
addresses, and on a test clock for the backoff's growth."""

from __future__ import annotations

import re
from collections.abc import Iterator

import httpx
import pytest

from poolscope.auth.login_limits import FREE_FAILURES, MAX_BACKOFF_S, SLOWDOWN_S, LoginLimits
from poolscope.auth.passwords import hash_password
from poolscope.config import Settings, UserConfig
from tests.clock import FakeClock
from tests.served import ready_app

OPERATOR_PW = "limits-operator-pw"


@pytest.fixture(scope="module")
def backend(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    settings = Settings(
        store_url=f"sqlite+aiosqlite:///{tmp_path_factory.mktemp('limits') / 'store.db'}",
        users=[UserConfig(name="op", role="operator", password_hash=hash_password(OPERATOR_PW))],
        metrics_token="limits-metrics-token",
    )
    with ready_app(settings) as base:
        yield base


def from_address(base: str, address: str) -> httpx.Client:
    """A client whose connections come from `address` (any 127.0.0.0/8 address is this host)."""
    return httpx.Client(base_url=base, timeout=30, transport=httpx.HTTPTransport(local_address=address))


def attempt(client: httpx.Client, password: str) -> httpx.Response:
    """A login as op, refused or not: what these tests count."""
    return client.post("/api/auth/login", json={"username": "op", "password": password})


def metric(base: str, name: str, **labels: str) -> float:
    text = httpx.get(f"{base}/metrics", headers={"Authorization": "Bearer limits-metrics-token"}).text
    wanted = ",".join(f'{k}="{v}"' for k, v in labels.items())
    line = re.search(rf"^{name}{{{wanted}}} (\S+)$" if labels else rf"^{name} (\S+)$", text, flags=re.M)
    assert line is not None, f"{name} {labels} not in /metrics"
    return float(line.group(1))


def test_the_right_password_logs_in_after_12_wrong_tries_from_another_address(backend: str) -> None:
    with from_address(backend, "127.0.0.2") as guesser, from_address(backend, "127.0.0.3") as user:
        codes = [attempt(guesser, f"guess-{i}").status_code for i in range(12)]
        # The guessing address waits longer after each wrong password past the free ones ...
        assert codes[:FREE_FAILURES] == [401] * FREE_FAILURES and 429 in codes[FREE_FAILURES:]
        refused = attempt(guesser, OPERATOR_PW)
        assert refused.status_code == 429 and int(refused.headers["Retry-After"]) >= 1
        # Read while that wait runs (at least the second Retry-After says): the pair leaves the
        # gauge when its backoff ends, which a loaded machine reached before the end of the test.
        assert metric(backend, "poolscope_login_backoff_pairs") >= 1
        # ... while the user, from an address that has not failed, logs in.
        answer = attempt(user, OPERATOR_PW)
        assert answer.status_code == 200, answer.text
    assert metric(backend, "poolscope_login_attempts_total", outcome="wrong") >= FREE_FAILURES
    assert metric(backend, "poolscope_login_attempts_total", outcome="ok") >= 1
    assert metric(backend, "poolscope_limit_refusals_total", limit="login_backoff") >= 1


def test_a_name_under_attack_from_many_addresses_is_slowed_never_refused(backend: str) -> None:
    guessers = [from_address(backend, f"127.0.1.{i}") for i in range(1, 5)]
    try:
        # 12 wrong passwords from four addresses: more than login_attempts_per_minute (10) for "op".
        codes = [attempt(g, f"spray-{i}").status_code for i in range(FREE_FAILURES) for g in guessers]
        assert codes == [401] * 12
        assert metric(backend, "poolscope_login_names_slowed") >= 1
        slowed_before = metric(backend, "poolscope_login_slowed_total")
        with from_address(backend, "127.0.1.9") as user:
            answer = attempt(user, OPERATOR_PW)
        assert answer.status_code == 200, answer.text
        assert answer.elapsed.total_seconds() >= SLOWDOWN_S * 0.9
        assert metric(backend, "poolscope_login_slowed_total") == slowed_before + 1
    finally:
        for g in guessers:
            g.close()


async def test_backoff_doubles_up_to_its_cap_and_ends_with_the_right_password() -> None:
    clock = FakeClock()
    limits = LoginLimits(per_name=10, per_address=30, clock=clock)

    def wrong() -> None:
        assert limits.refusal("a", "op") is None
        limits.failed("a", "op")

    for _ in range(FREE_FAILURES):
        wrong()
    waits = []
    for _ in range(12):
        refused = limits.refusal("a", "op")
        assert refused is not None and refused[0] == "login_backoff"
        waits.append(refused[1])
        await clock.advance(refused[1])
        wrong()
    assert waits[:5] == [1, 2, 4, 8, 16] and max(waits) == MAX_BACKOFF_S
    assert limits.refusal("b", "op") is None  # another address is not held back
    limits.succeeded("b", "op")
    await clock.advance(MAX_BACKOFF_S)
    assert limits.refusal("a", "op") is None
    limits.succeeded("a", "op")
    assert limits.refusal("a", "op") is None  # the right password ended the backoff
    limits.abandoned("a", "op")


def test_one_try_at_a_time_per_address_and_name_and_a_cap_per_failing_address() -> None:
    clock = FakeClock()
    limits = LoginLimits(per_name=10, per_address=4, clock=clock)
    assert limits.refusal("a", "op") is None
    assert limits.refusal("a", "op") == ("login_in_flight", 1.0)  # the first is still being checked
    limits.failed("a", "op")
    for name in ("n1", "n2", "n3"):
        assert limits.refusal("a", name) is None
        limits.failed("a", name)
    refused = limits.refusal("a", "n4")
    assert refused is not None and refused[0] == "login_address"
    assert limits.refusal("clean", "n4") is None  # an address that has not failed passes
    assert limits.refused == {"login_in_flight": 1, "login_address": 1}
