"""/healthz and /readyz on a real app polling a real MariaDB, and /metrics' build info and stall gauge."""

from __future__ import annotations

import time

import httpx

from poolscope import __version__
from poolscope.api.probes import _target_status
from poolscope.api.prometheus import Exposition, _target_metrics
from poolscope.auth.passwords import hash_password
from poolscope.config import Settings, TargetConfig, UserConfig
from poolscope_dev.sandbox import MONITOR_PASSWORD, free_port
from tests.alerts.states import group, info, state
from tests.deploy.support import status_of
from tests.served import login, uvicorn_app
from tests.waiting import wait_for


def _settings(tmp_path, targets: list[TargetConfig]) -> Settings:
    return Settings(
        poll_interval_s=0.5, store_url=f"sqlite+aiosqlite:///{tmp_path / 'store.db'}", targets=targets
    )


def _settled(base: str, names: set[str], client: httpx.Client | None = None) -> httpx.Response:
    """/readyz once every target has been polled at least once (bounded wait)."""

    def polled() -> httpx.Response | None:
        try:
            response = (client or httpx).get(f"{base}/readyz", timeout=5)
        except httpx.TransportError:
            return None
        return (
            None if any(v.startswith("starting") for v in response.json()["targets"].values()) else response
        )

    response: httpx.Response = wait_for(polled, 30, "the targets were never polled")
    assert set(response.json()["targets"]) == names
    return response


def test_ready_when_one_target_answers(tmp_path, monitor_dsn):
    gone = f"mysql://u:{MONITOR_PASSWORD}@127.0.0.1:{free_port()}/"
    settings = _settings(
        tmp_path, [TargetConfig(name="live", dsn=monitor_dsn), TargetConfig(name="gone", dsn=gone)]
    )
    with uvicorn_app(settings) as base:
        response = _settled(base, {"live", "gone"})
        assert response.status_code == 200, response.text
        body = response.json()
        assert body["ready"] is True and body["store"] == "ok"
        assert body["targets"]["live"] == "up"
        assert body["targets"]["gone"].startswith("down: ")
        assert MONITOR_PASSWORD not in response.text
        health = httpx.get(f"{base}/healthz", timeout=5)
        assert health.status_code == 200 and health.json() == {"status": "ok", "version": __version__}


def test_not_ready_while_no_target_answers(tmp_path):
    gone = f"mysql://u:{MONITOR_PASSWORD}@127.0.0.1:{free_port()}/"
    with uvicorn_app(_settings(tmp_path, [TargetConfig(name="gone", dsn=gone)])) as base:
        response = _settled(base, {"gone"})
        assert response.status_code == 503
        assert response.json()["ready"] is False and response.json()["store"] == "ok"
        assert "cannot connect" in response.json()["targets"]["gone"]
        assert MONITOR_PASSWORD not in response.text
        # Alive all the same: liveness does not depend on the targets.
        assert httpx.get(f"{base}/healthz", timeout=5).status_code == 200


def test_without_a_session_readyz_says_only_ready_or_not(tmp_path, monitor_dsn):
    gone = f"mysql://u:{MONITOR_PASSWORD}@127.0.0.1:{free_port()}/"
    settings = _settings(
        tmp_path, [TargetConfig(name="live", dsn=monitor_dsn), TargetConfig(name="gone", dsn=gone)]
    )
    settings.users = [UserConfig(name="vi", role="viewer", password_hash=hash_password("probe-viewer-pw"))]
    with uvicorn_app(settings) as base:
        wait_for(lambda: status_of(f"{base}/healthz") == 200, 30, "never served")
        with httpx.Client(base_url=base, timeout=5) as client:
            login(client, "vi", "probe-viewer-pw")
            detailed = _settled(base, {"live", "gone"}, client)
            assert detailed.status_code == 200 and detailed.json()["targets"]["live"] == "up"
        anonymous = httpx.get(f"{base}/readyz", timeout=5)
        # Ready, but not which targets exist nor why one is down (reads need a login here).
        assert anonymous.status_code == 200 and anonymous.json() == {"ready": True}
        assert httpx.get(f"{base}/healthz", timeout=5).status_code == 200


def test_not_ready_without_targets(tmp_path):
    with uvicorn_app(_settings(tmp_path, [])) as base:
        response = _settled(base, set())
        assert response.status_code == 503
        assert response.json() == {
            "ready": False,
            "store": "ok",
            "targets": {},
            "reason": "no targets configured",
        }


def test_stale_state_from_before_a_restart_is_not_ready():
    settings = Settings(poll_interval_s=1.0, poll_timeout_s=5.0)
    assert _target_status(info(time.time() - 1), settings) == "up"
    assert _target_status(info(time.time() - 60), settings).startswith("stale: ")
    assert _target_status(None, settings).startswith("starting")


def test_stalled_gauge_leaves_out_the_instantaneous_server_flag():
    now = time.time()
    groups = [
        group(0, stall_reason="stalls_counter"),
        group(1, stall_reason="no_dequeue"),
        group(2, stall_reason="server_flag", is_stalled=True),
        group(3),
    ]
    out = Exposition()
    out.add("poolscope_build_info", 1, version=__version__)
    _target_metrics(out, info(now), state(now, groups), [])
    text = out.render()
    assert f'poolscope_build_info{{version="{__version__}"}} 1' in text
    for gid, value in ((0, 1), (1, 1), (2, 0), (3, 0)):
        assert f'poolscope_tp_group_stalled{{target="db1",group="{gid}"}} {value}' in text
