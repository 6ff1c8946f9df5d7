"""`make dist` gives a wheel that, installed alone in a fresh venv, serves the dashboard and the API.

The wheel is built as a user builds it (`make dist`, once per run: tests/deploy/conftest.py),
installed into a new venv (dependencies from the package index, pinned by requirements.lock as
constraints), and `poolscope serve` runs from a temporary directory with no checkout on sys.path,
against the real sandbox MariaDB.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import httpx
import pytest

from poolscope import __version__
from poolscope_dev.sandbox import free_port
from tests.deploy.shipped import harness_uses
from tests.deploy.support import ROOT, background
from tests.waiting import wait_for

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def venv(dist: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    wheels = list(dist.glob("poolscope-*.whl"))
    assert len(wheels) == 1, f"make dist made {wheels}"
    home = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", str(home)], check=True, timeout=120)
    subprocess.run(
        [
            str(home / "bin" / "pip"),
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "-c",
            str(ROOT / "backend" / "requirements.lock"),
            str(wheels[0]),
        ],
        check=True,
        timeout=600,
        env=_clean_env(),
    )
    return home


def _clean_env() -> dict[str, str]:
    """This environment less anything that would put the checkout on sys.path."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "POOLSCOPE_CONFIG")}
    env["PYTHONNOUSERSITE"] = "1"
    return env


def test_dist_holds_the_ui_and_the_migrations(dist: Path) -> None:
    (sdist,) = dist.glob("poolscope-*.tar.gz")
    wheel = next(dist.glob("poolscope-*.whl"))
    assert wheel.name == f"poolscope-{__version__}-py3-none-any.whl"
    assert sdist.name == f"poolscope-{__version__}.tar.gz"
    names = zipfile.ZipFile(wheel).namelist()
    assert "poolscope/ui/index.html" in names
    assert any(re.fullmatch(r"poolscope/ui/assets/index-[\w-]+\.js", n) for n in names)
    assert "poolscope/migrations/env.py" in names
    assert any(n.startswith("poolscope/migrations/versions/0001_") for n in names)
    with tarfile.open(sdist) as tar:
        members = tar.getnames()
    assert f"poolscope-{__version__}/poolscope/ui/index.html" in members


def test_dist_holds_no_development_harness(dist: Path) -> None:
    """Sandboxes, load, replay and benchmarks stay in backend/dev: not in the wheel or sdist."""
    wheel = zipfile.ZipFile(next(dist.glob("poolscope-*.whl")))
    with tarfile.open(next(dist.glob("poolscope-*.tar.gz"))) as tar:
        members = [m.split("/", 1)[-1] for m in tar.getnames()]
    for names in (wheel.namelist(), members):
        tops = {n.split("/", 1)[0] for n in names if n.endswith(".py") and "/" in n}
        assert tops == {"poolscope"}, tops
        assert not [n for n in names if n.startswith(("poolscope/devtools", "poolscope/bench", "poolscope_"))]
    modules = [n for n in wheel.namelist() if n.endswith(".py")]
    assert len(modules) > 50
    # The migrations are Alembic's scripts, not imported by the package; they are checked too.
    assert harness_uses((n, wheel.read(n).decode()) for n in modules) == []


def test_installed_wheel_serves_the_dashboard_and_the_api(
    venv: Path, monitor_dsn: str, tmp_path: Path
) -> None:
    bin_dir = venv / "bin"
    run_dir = tmp_path / "run"  # neither the checkout nor anything of it
    run_dir.mkdir()
    env = _clean_env()

    where = subprocess.run(
        [str(bin_dir / "python"), "-c", "import poolscope, sys; print(poolscope.__file__)"],
        cwd=run_dir,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert where.startswith(str(venv)), f"poolscope imported from {where}, not the venv"
    assert not Path(where).is_relative_to(ROOT)

    version = subprocess.run(
        [str(bin_dir / "poolscope"), "--version"], capture_output=True, text=True, check=True, env=env
    ).stdout.strip()
    assert version == f"poolscope {__version__}"

    port = free_port()
    config = run_dir / "x.toml"
    config.write_text(
        f'store_url = "sqlite+aiosqlite:///{run_dir / "store.db"}"\n'
        "poll_interval_s = 0.5\n\n"
        "[[targets]]\n"
        'name = "db1"\n'
        f'dsn = "{monitor_dsn}"\n'
    )
    base = f"http://127.0.0.1:{port}"
    args = [str(bin_dir / "poolscope"), "--config", str(config), "serve", "--port", str(port)]
    with background(args, tmp_path / "serve.log", cwd=run_dir, env=env) as server:

        def ready() -> dict | None:
            assert server.proc.poll() is None, f"poolscope serve exited:\n{server.tail()}"
            try:
                response = httpx.get(f"{base}/readyz", timeout=5)
            except httpx.TransportError:
                return None
            return response.json() if response.status_code == 200 else None

        readiness = wait_for(ready, 60, lambda _: f"never ready:\n{server.tail()}")
        assert readiness == {"ready": True, "store": "ok", "targets": {"db1": "up"}}

        page = httpx.get(f"{base}/", timeout=5)
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
        assert '<div id="root">' in page.text
        script = re.search(r'src="(/assets/[^"]+\.js)"', page.text)
        assert script, page.text
        asset = httpx.get(f"{base}{script.group(1)}", timeout=5)
        assert asset.status_code == 200 and "javascript" in asset.headers["content-type"]
        # A deep link gets the app too (the SPA routes it).
        assert '<div id="root">' in httpx.get(f"{base}/targets/db1", timeout=5).text

        health = httpx.get(f"{base}/api/health", timeout=5).json()
        assert health == {"status": "ok", "version": __version__}
        targets = httpx.get(f"{base}/api/targets", timeout=5).json()
        assert [(t["name"], t["status"]) for t in targets] == [("db1", "up")]
        metrics = httpx.get(f"{base}/metrics", timeout=5).text
        assert f'poolscope_build_info{{version="{__version__}"}} 1' in metrics
        assert 'poolscope_target_up{target="db1"} 1' in metrics
        # The store was created by the packaged migrations.
        assert (run_dir / "store.db").is_file()
