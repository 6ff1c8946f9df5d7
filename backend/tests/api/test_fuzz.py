"""Schemathesis over the OpenAPI document: a real backend polling a real MariaDB, fuzzed as a
viewer and as an operator. Whatever the request, the answer is never a server error.

The backend has its own sandbox MariaDB (with the admin credential configured): an operator's
fuzzed applies and reverts must reach the real apply path, and must not change the server the
other tests share.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import hypothesis
import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, Phase

from poolscope.auth.passwords import hash_password
from poolscope.config import Settings, TargetConfig, UserConfig
from poolscope_dev.sandbox import ADMIN_USER, MONITOR_PASSWORD, MONITOR_USER, MariaDBSandbox, free_port
from tests.served import login, uvicorn_app
from tests.waiting import wait_for

pytestmark = pytest.mark.live  # its own MariaDB sandbox (tests/conftest.py lanes)

PASSWORDS = {"fuzz-viewer": "viewer-fuzz-pw", "fuzz-operator": "operator-fuzz-pw"}
# Examples per operation and role: enough to reach every parameter's edge cases (the explicit
# phase adds the schema's own examples), few enough for a 2-core CI run.
EXAMPLES = 30


@pytest.fixture(scope="module")
def fuzz_backend(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    sandbox = MariaDBSandbox(
        tmp_path_factory.mktemp("fuzz-mariadb"),
        thread_handling="pool-of-threads",
        thread_pool_size=2,
        exact_stats=True,
    )
    sandbox.start()
    store = tmp_path_factory.mktemp("fuzz-store") / "store.db"
    settings = Settings(
        poll_interval_s=1.0,
        store_url=f"sqlite+aiosqlite:///{store}",
        users=[
            UserConfig(
                name="fuzz-viewer", role="viewer", password_hash=hash_password(PASSWORDS["fuzz-viewer"])
            ),
            UserConfig(
                name="fuzz-operator", role="operator", password_hash=hash_password(PASSWORDS["fuzz-operator"])
            ),
        ],
        targets=[
            TargetConfig(name="live", dsn=sandbox.dsn(MONITOR_USER), admin_dsn=sandbox.dsn(ADMIN_USER)),
            TargetConfig(name="gone", dsn=f"mysql://u:{MONITOR_PASSWORD}@127.0.0.1:{free_port()}/"),
        ],
    )
    try:
        with uvicorn_app(settings) as base:
            _wait_for_first_poll(base)
            yield base
    finally:
        sandbox.destroy()


def _wait_for_first_poll(base: str) -> None:
    def polled() -> bool:
        try:
            return _login(base, "fuzz-viewer").get(f"{base}/api/targets/live/state", timeout=5).ok
        except (httpx.TransportError, requests.RequestException):
            return False  # not listening yet

    wait_for(polled, 30, "the fuzzed backend never polled its target", every_s=0.3)


def _login(base: str, user: str) -> requests.Session:
    session = requests.Session()  # schemathesis's client
    with httpx.Client(base_url=base, timeout=10) as client:
        session.headers.update(login(client, user, PASSWORDS[user]))
    return session


@pytest.fixture(scope="module")
def sessions(fuzz_backend: str) -> dict[str, requests.Session]:
    return {user: _login(fuzz_backend, user) for user in PASSWORDS}


def test_no_server_errors(fuzz_backend: str, sessions: dict[str, requests.Session]) -> None:
    # Logging out would end the fuzzing session halfway, and the live channel is a stream that
    # never ends: both have tests of their own (tests/auth, tests/api/test_live_channel.py).
    # /readyz takes no input and answers 503 by design while no target answers
    # (tests/deploy/test_probes.py).
    schema = schemathesis.openapi.from_url(f"{fuzz_backend}/api/openapi.json").exclude(
        path=["/api/auth/logout", "/api/live", "/readyz"]
    )
    errors: list[str] = []
    operations = 0
    for result in schema.get_all_operations():
        operation = result.ok()
        operations += 1

        @hypothesis.given(case=operation.as_strategy())
        @hypothesis.settings(
            max_examples=EXAMPLES,
            deadline=None,
            phases=[Phase.explicit, Phase.generate],
            suppress_health_check=list(HealthCheck),
            derandomize=True,
            database=None,
        )
        def fuzz(case: schemathesis.Case) -> None:
            # The viewer first: its mutations are refused, so the operator then meets the same state.
            for user in ("fuzz-viewer", "fuzz-operator"):
                response = case.call(session=sessions[user], timeout=30)
                where = f"{user}: {case.method} {case.formatted_path}"
                if response.status_code >= 500:
                    errors.append(f"{where} -> {response.status_code}: {response.text[:300]}")
                elif response.status_code == 401 and not case.path.startswith("/api/auth/"):
                    # A fuzzed request must never end the fixture's session: it would hide the rest.
                    errors.append(f"{where} ended the session: {response.text[:300]}")

        fuzz()
    assert operations >= 20, f"only {operations} operations in the OpenAPI document"
    assert not errors, "\n".join(sorted(set(errors))[:40])
