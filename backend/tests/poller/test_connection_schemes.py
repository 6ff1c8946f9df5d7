"""The DSN scheme registry (poller/connection.py): the product opens mysql:// and mariadb://; the
fixture replay of the development harness plugs in fixture:// from outside."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from poolscope.config import TargetConfig
from poolscope.dsn import DsnError
from poolscope.poller.connection import TargetConnection, open_connection, register_scheme
from poolscope_dev.replay import FixtureConnection
from tests import FIXTURES_ROOT


def test_live_schemes_get_the_live_connection() -> None:
    for dsn in ("mysql://u:p@127.0.0.1:3306/", "MariaDB://u:p@127.0.0.1:3306/"):
        assert type(open_connection(TargetConfig(name="db", dsn=dsn))) is TargetConnection


async def test_an_unknown_scheme_fails_on_connect_with_the_dsn_error() -> None:
    conn = open_connection(TargetConfig(name="db", dsn="postgres://u:p@127.0.0.1/"))
    assert type(conn) is TargetConnection
    with pytest.raises(DsnError, match="must start with mysql:// or mariadb://"):
        await conn.connect()


def test_fixture_scheme_is_what_the_harness_registered_with_its_root() -> None:
    conn = open_connection(TargetConfig(name="db", dsn="fixture://percona/8.4.10"))
    assert isinstance(conn, FixtureConnection) and conn.root == FIXTURES_ROOT


@pytest.mark.parametrize("scheme", ["", "fix-ture", "fixture://", "fïxture"])
def test_a_scheme_must_be_letters_and_digits(scheme: str) -> None:
    with pytest.raises(ValueError, match="letters and digits"):
        register_scheme(scheme, TargetConnection)


def _check(tmp_path: Path, *prefix: str) -> subprocess.CompletedProcess[str]:
    config = tmp_path / "fx.toml"
    config.write_text('[[targets]]\nname = "p"\ndsn = "fixture://percona/8.4.10"\n')
    return subprocess.run(
        [*prefix, "--config", str(config), "check"], capture_output=True, text=True, timeout=120, cwd=tmp_path
    )


def test_the_product_alone_does_not_replay_and_the_dev_cli_does(tmp_path: Path) -> None:
    alone = _check(tmp_path, sys.executable, "-m", "poolscope.cli")
    assert alone.returncode == 1
    assert "p: DOWN - dsn of target p: must start with mysql:// or mariadb://" in alone.stdout
    dev = _check(
        tmp_path, sys.executable, "-m", "poolscope_dev", "poolscope", "--fixtures", str(FIXTURES_ROOT), "--"
    )
    assert dev.returncode == 0, dev.stdout + dev.stderr
    assert "innodb_trx                 ok" in dev.stdout


def test_the_dev_cli_refuses_a_missing_fixtures_directory(tmp_path: Path) -> None:
    res = _check(
        tmp_path, sys.executable, "-m", "poolscope_dev", "poolscope", "--fixtures", str(tmp_path / "no"), "--"
    )
    assert res.returncode == 2 and res.stderr.startswith("error: no fixtures directory at")
