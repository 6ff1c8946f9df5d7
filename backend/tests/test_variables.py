"""poolscope/variables.py is the one list of server variables: the poll, the apply allow-list and the
UI's order come from it, and every name the flavor table and the rules use is on it."""

from __future__ import annotations

import dataclasses
import re
import subprocess
import sys
from pathlib import Path

from poolscope.actions.allowlist import refused
from poolscope.config import TargetConfig
from poolscope.enable_pool import RDS_SWITCH
from poolscope.flavors import SPECS, VariableSpec
from poolscope.poller.discovery import discovery_statements, server_from_discovery
from poolscope.recommend import flavors as recommend_flavors
from poolscope.variables import NAMES, SETTABLE, VARIABLES

REPO = Path(__file__).resolve().parents[2]


def _flavor_names() -> set[str]:
    names: set[str] = set()
    for spec in SPECS.values():
        for field in dataclasses.fields(spec):
            value = getattr(spec, field.name)
            if isinstance(value, VariableSpec):
                names.add(value.name)
        names |= {v.name for v in spec.extra.values()}
        if spec.admin_port_var:
            names.add(spec.admin_port_var)
    return names


def test_each_variable_once() -> None:
    assert len(NAMES) == len(set(NAMES)) == len(VARIABLES)


def test_every_name_the_flavor_table_and_the_rules_use_is_polled() -> None:
    used = _flavor_names() | {s.name for s in recommend_flavors._SERVER_WIDE.values()} | {RDS_SWITCH}
    assert used - set(NAMES) == set()


def test_the_poll_reads_the_list() -> None:
    (show, _tables) = discovery_statements()
    assert re.findall(r"'(\w+)'", show) == ["version_comment", "admin_address", "performance_schema", *NAMES]
    rows = [{"variable_name": n, "value": "1"} for n in ("version", "thread_pool_size", "not_on_the_list")]
    server = server_from_discovery(rows, [])
    # Polled from then on with one SELECT of @@GLOBAL values, in the list's order.
    assert server.known_variables == [n for n in NAMES if n in ("version", "thread_pool_size")]


def test_the_allow_list_is_the_settable_variables() -> None:
    target = TargetConfig(name="db1", dsn="mysql://mon@127.0.0.1/", admin_dsn="mysql://adm@127.0.0.1/")
    allowed = {name for name in NAMES if refused(target, name) is None}
    assert allowed == SETTABLE
    assert {"thread_pool_size", "max_connections"} <= allowed
    assert not {"version", "thread_handling", "innodb_buffer_pool_size"} & allowed


def test_the_uis_order_is_generated_from_the_list() -> None:
    script = REPO / "scripts" / "gen-variables.py"
    check = subprocess.run(
        [sys.executable, str(script), "--check"], capture_output=True, text=True, timeout=60
    )
    assert check.returncode == 0, check.stderr
    text = (REPO / "frontend" / "src" / "api" / "variables.gen.ts").read_text()
    assert re.findall(r"^  '(\w+)',$", text, re.M) == list(NAMES)
