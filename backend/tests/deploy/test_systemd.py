"""deploy/systemd/poolscope.service: systemd accepts it, it is hardened, and its pre-flight
(`poolscope check`) stops a start on a broken config but not on a target that is down.

This machine has no systemd as PID 1, so the unit is verified offline (systemd-analyze) and its
pre-flight command is run as systemd would run it."""

from __future__ import annotations

import configparser
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from poolscope_dev.sandbox import MONITOR_PASSWORD, free_port
from tests.deploy.support import DEPLOY

UNIT = DEPLOY / "systemd" / "poolscope.service"
INSTALLED = "/opt/poolscope/bin/poolscope"
POOLSCOPE = str(Path(sys.executable).with_name("poolscope"))


def _service() -> dict[str, list[str]]:
    """[Service] settings; a key given twice (SystemCallFilter) keeps every value."""
    values: dict[str, list[str]] = {}
    section = None
    for line in UNIT.read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("["):
            section = line
            continue
        if section == "[Service]":
            key, value = line.split("=", 1)
            values.setdefault(key, []).append(value)
    return values


def _local_unit(tmp_path: Path) -> Path:
    """The unit with this checkout's poolscope in place of the one the README installs."""
    unit = tmp_path / "poolscope.service"
    unit.write_text(UNIT.read_text().replace(INSTALLED, POOLSCOPE))
    return unit


def _analyze() -> str:
    path = shutil.which("systemd-analyze")
    if path is None:
        pytest.skip("systemd-analyze is not installed (Debian's systemd package has it)")
    return path


def test_unit_verifies(tmp_path: Path) -> None:
    result = subprocess.run(
        [_analyze(), "verify", str(_local_unit(tmp_path))], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0 and not result.stderr.strip(), result.stderr


def test_unit_is_hardened(tmp_path: Path) -> None:
    service = _service()
    for key, value in {
        "DynamicUser": "yes",
        "ProtectSystem": "strict",
        "StateDirectory": "poolscope",
        "WorkingDirectory": "/var/lib/poolscope",
        "NoNewPrivileges": "yes",
        "CapabilityBoundingSet": "",
        "PrivateTmp": "yes",
        "ProtectHome": "yes",
    }.items():
        assert service.get(key) == [value], f"{key}={service.get(key)}"
    result = subprocess.run(
        [_analyze(), "security", "--offline=true", str(_local_unit(tmp_path))],
        capture_output=True,
        text=True,
        timeout=60,
    )
    match = re.search(r"Overall exposure level for poolscope.service: ([0-9.]+) (\w+)", result.stdout)
    assert match, result.stdout + result.stderr
    # systemd's scale: 0 = fully locked down, 10 = none of it; "OK" is below 2.
    assert float(match.group(1)) < 2.0 and match.group(2) == "OK", match.group(0)


def _pre_flight(config: Path) -> subprocess.CompletedProcess[str]:
    """ExecStartPre as systemd runs it: `$$` is a literal `$`, the environment from the unit."""
    (command,) = _service()["ExecStartPre"]
    args = shlex.split(command.replace("$$", "$").replace(INSTALLED, POOLSCOPE))
    env = {**os.environ, "POOLSCOPE_CONFIG": str(config)}
    return subprocess.run(args, capture_output=True, text=True, timeout=120, env=env)


def test_pre_flight_passes_with_the_target_up(tmp_path: Path, monitor_dsn: str) -> None:
    config = tmp_path / "poolscope.toml"
    config.write_text(f'[[targets]]\nname = "db1"\ndsn = "{monitor_dsn}"\n')
    result = _pre_flight(config)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "db1: up - mariadb" in result.stdout
    assert MONITOR_PASSWORD not in result.stdout + result.stderr


def test_pre_flight_lets_the_service_start_with_a_target_down(tmp_path: Path) -> None:
    config = tmp_path / "poolscope.toml"
    config.write_text(f'[[targets]]\nname = "db1"\ndsn = "mysql://u:pw@127.0.0.1:{free_port()}/"\n')
    result = _pre_flight(config)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "db1: DOWN" in result.stdout


def test_pre_flight_stops_the_start_on_an_invalid_config(tmp_path: Path) -> None:
    config = tmp_path / "poolscope.toml"
    config.write_text("poll_interval_s = 0\n")
    result = _pre_flight(config)
    assert result.returncode != 0
    assert "invalid configuration" in result.stderr and "poll_interval_s" in result.stderr
    config.unlink()
    assert _pre_flight(config).returncode != 0  # a missing file too


def test_unit_parses_as_ini() -> None:
    # systemd's own parser accepted it above; this keeps the [Install] section honest too.
    parser = configparser.ConfigParser(strict=False, interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read_string(UNIT.read_text())
    assert parser["Install"]["WantedBy"] == "multi-user.target"
