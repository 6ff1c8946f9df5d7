"""The container, really built and run: podman (Debian's) builds the Dockerfile and the MariaDB
image from a base image made of Debian's packages (scripts/podman-base-image.sh), and
podman-compose runs docker-compose.yml. The Dockerfile's `dist` stage (the UI and the wheel) is
this run's `make dist` (tests/deploy/conftest.py), given as a build context of that name, so the
UI is built once per run; everything after it is the Dockerfile's own. The dashboard answers on the published loopback port,
the target is up (polled on its extra_port), the healthcheck passes, and Poolscope runs as its
non-root user.

When this machine cannot run containers the test still builds the images, then skips and says
why. Set POOLSCOPE_SKIP_CONTAINER_TEST=1 to skip it altogether (it needs root)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
import yaml

from poolscope_dev.sandbox import free_port
from tests.deploy.support import ROOT, get_json, require_tool, status_of
from tests.served import login
from tests.waiting import wait_for

pytestmark = pytest.mark.slow

IMAGE = "localhost/poolscope:latest"
# podman-compose 1.0.3 passes no --format: docker format keeps HEALTHCHECK (OCI drops it).
ENV = {
    **os.environ,
    "CONTAINERS_CONF": str(Path(__file__).with_name("containers.conf")),
    "BUILDAH_FORMAT": "docker",
}
ADMIN_PASSWORD = "container-test-admin-pw"


def _run(args: list[str], timeout: float, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        args, cwd=ROOT, env={**ENV, **env}, capture_output=True, text=True, timeout=timeout, check=False
    )


def _checked(args: list[str], timeout: float, **env: str) -> str:
    result = _run(args, timeout, **env)
    assert result.returncode == 0, (
        f"{' '.join(args)} failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    )
    return result.stdout


def _cannot_run_containers() -> str | None:
    """Why podman cannot run a container here, or None when it can (a 30 s probe)."""
    probe = _run(["podman", "run", "--rm", "--network", "none", "debian:bookworm-slim", "true"], 60)
    if probe.returncode == 0:
        return None
    return f"`podman run` failed (exit {probe.returncode}): {probe.stderr.strip()[-500:]}"


@pytest.fixture(scope="module")
def images(request: pytest.FixtureRequest) -> dict[str, float]:
    """Build the base image (cached), then the compose file's images; how long each step took."""
    if os.environ.get("POOLSCOPE_SKIP_CONTAINER_TEST") == "1":
        pytest.skip("POOLSCOPE_SKIP_CONTAINER_TEST=1")
    if os.geteuid() != 0:
        pytest.skip("building the base image needs root (debootstrap, rootful podman); this user is not")
    for tool in ("podman", "podman-compose", "debootstrap", "runc"):
        require_tool(tool)
    dist: Path = request.getfixturevalue("dist")
    took = {}
    started = time.monotonic()
    _checked(["bash", "scripts/podman-base-image.sh"], 900)
    took["base image"] = time.monotonic() - started
    started = time.monotonic()
    # docker-compose.yml's `poolscope` service (build: ., image: IMAGE), with the wheel made here.
    _checked(
        ["podman", "build", "--format", "docker", "--build-context", f"dist={dist.parent}", "-t", IMAGE, "."],
        1800,
    )
    took["poolscope image"] = time.monotonic() - started
    started = time.monotonic()
    _checked(["podman-compose", "build", "mariadb", "prometheus"], 1800)
    took["compose build"] = time.monotonic() - started
    print("container test build times (s):", {k: round(v) for k, v in took.items()})
    return took


def test_image_is_non_root_with_a_healthcheck(images: dict[str, float]) -> None:
    image = json.loads(_checked(["podman", "image", "inspect", IMAGE], 60))[0]
    config = image["Config"]
    assert config["User"] == "poolscope"
    assert "/healthz" in " ".join(image["Healthcheck"]["Test"])
    assert config["Cmd"] == ["poolscope", "serve", "--host", "0.0.0.0"]
    assert "POOLSCOPE_CONFIG=/etc/poolscope/poolscope.toml" in config["Env"]


@dataclass
class Stack:
    project: str
    env: dict[str, str]  # ports and the admin password, as docker-compose.yml reads them
    started: float

    def url(self, port: str) -> str:
        return f"http://127.0.0.1:{self.env[port]}"

    def compose(self, *args: str, timeout: float = 300) -> str:
        return _checked(["podman-compose", "-p", self.project, *args], timeout, **self.env)


@pytest.fixture(scope="module")
def stack(images: dict[str, float]) -> Iterator[Stack]:
    reason = _cannot_run_containers()
    if reason:
        pytest.skip(f"the images were built, but this machine cannot run containers: {reason}")
    ports = {name: str(free_port()) for name in ("POOLSCOPE_PORT", "MARIADB_PORT", "PROMETHEUS_PORT")}
    running = Stack(
        f"poolscopetest{os.getpid()}", {**ports, "POOLSCOPE_ADMIN_PASSWORD": ADMIN_PASSWORD}, time.monotonic()
    )
    try:
        running.compose("up", "-d", "poolscope", timeout=600)
        yield running
    finally:
        _run(["podman-compose", "-p", running.project, "down", "-t", "1"], 300, **running.env)
        _run(["podman", "network", "rm", "-f", f"{running.project}_default"], 60)
        for volume in ("mariadb-data", "poolscope-data", "prometheus-data"):
            _run(["podman", "volume", "rm", "-f", f"{running.project}_{volume}"], 60)


def _logs(project: str) -> str:
    return _run(["podman", "logs", "--tail", "30", f"{project}_poolscope_1"], 60).stderr


def test_compose_stack_serves_the_dashboard_with_the_target_up(stack: Stack) -> None:
    base, project = stack.url("POOLSCOPE_PORT"), stack.project

    def dashboard() -> str | None:
        try:
            page = httpx.get(f"{base}/", timeout=5)
        except httpx.TransportError:
            return None
        return page.text if page.status_code == 200 else None

    html = wait_for(dashboard, 180, lambda _: f"the dashboard never answered:\n{_logs(project)}")
    assert '<div id="root">' in html
    script = re.search(r'src="(/assets/[^"]+\.js)"', html)
    assert script and status_of(f"{base}{script.group(1)}") == 200

    # MariaDB initialises its datadir on the first start: the target comes up after that.
    wait_for(
        lambda: status_of(f"{base}/readyz") == 200,
        180,
        lambda _: (
            f"the target never came up: {httpx.get(f'{base}/readyz', timeout=5).text}\n{_logs(project)}"
        ),
    )
    print(f"container test: stack up and ready {time.monotonic() - stack.started:.0f} s after `up`")

    with httpx.Client(base_url=base, timeout=10) as client:
        login(client, "admin", ADMIN_PASSWORD)
        assert client.get("/readyz").json()["targets"] == {"mariadb": "up"}
        (target,) = client.get("/api/targets").json()
        assert target["status"] == "up" and target["server"]["pool_enabled"] is True
        assert target["connection"]["port_kind"] == "extra_port" and target["connection"]["port"] == 3307
        # /metrics says nothing from numbers older than two intervals (api/prometheus.py): a scrape
        # while the loaded machine's polls lag may miss target_up, a later one must have it.
        wait_for(
            lambda: 'poolscope_target_up{target="mariadb"} 1' in client.get("/metrics").text,
            30,
            lambda _: f"/metrics never said the target is up:\n{client.get('/metrics').text}",
        )

    health = _run(["podman", "healthcheck", "run", f"{project}_poolscope_1"], 60)
    assert health.returncode == 0, f"healthcheck: {health.stdout} {health.stderr}"
    uid = _checked(["podman", "exec", f"{project}_poolscope_1", "id", "-u"], 60).strip()
    assert uid == "10001"
    mariadb_health = _run(["podman", "healthcheck", "run", f"{project}_mariadb_1"], 60)
    assert mariadb_health.returncode == 0, (
        f"mariadb healthcheck: {mariadb_health.stdout} {mariadb_health.stderr}"
    )


def test_compose_prometheus_profile_scrapes_poolscope(stack: Stack) -> None:
    """The `prometheus` service (a profile for Docker; named explicitly for podman-compose 1.0.3)."""
    stack.compose("up", "-d", "prometheus")
    base = stack.url("PROMETHEUS_PORT")

    def scraped() -> list | None:
        body = get_json(f"{base}/api/v1/query", query='poolscope_tp_group_threads{target="mariadb"}')
        return body["data"]["result"] if body else None

    series = wait_for(scraped, 120, "the compose Prometheus never scraped Poolscope")
    assert {s["metric"]["group"] for s in series} == {"0", "1"}  # thread_pool_size=2
    rules = get_json(f"{base}/api/v1/rules")["data"]["groups"]
    assert {r["name"] for g in rules for r in g["rules"]} >= {"group_stalled", "target_down"}


def test_compose_restarts_every_service_unless_stopped_on_purpose():
    """Started before its store, `serve` waits for it; killed or crashed, it must come back."""
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    assert {name: s.get("restart") for name, s in compose["services"].items()} == dict.fromkeys(
        compose["services"], "unless-stopped"
    )
