"""Enable-the-pool snippets name only options the server's version has, with values it accepts.

The option lists per version are in tests/fixtures/server-options/options.json, each entry
citing its source (README.md there). A snippet line a version lacks stops mysqld at start-up.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from poolscope.enable_pool import pool_switch
from poolscope.poller.discovery import server_from_discovery

OPTIONS = json.loads(
    (Path(__file__).resolve().parents[1] / "fixtures" / "server-options" / "options.json").read_text()
)
_LINE = re.compile(r"^([A-Za-z_][\w-]*)\s*=\s*(\S+)")

# (flavor, version, has thread_pool_enabled, only the thread_pool plugin) -> the options.json entry
# that version answers to.
CASES = [
    ("mariadb", (10, 11, 19), False, False, "mariadb-10.11"),
    ("percona", (5, 7, 44), False, False, "percona-5.7"),
    ("percona", (8, 0, 36), False, False, "percona-8.0"),
    ("percona", (8, 4, 8), False, False, "percona-8.4"),
    ("percona", (8, 4, 10), False, False, "percona-8.4"),
    ("percona", (9, 7, 1), False, False, "percona-9.7"),
    ("percona", (9, 7, 2), False, False, "percona-9.7"),  # a 9.7.2 build that lists its built-in pool
    ("percona", (9, 7, 2), False, True, "percona-9.7-plugin"),  # one that does not: the plugin only
    ("alisql", (5, 6, 16), False, False, "alisql-5.6"),
    ("alisql", (8, 0, 36), False, False, "alisql-8.0"),
    ("mysql", (8, 0, 36), True, False, "alisql-8.0"),  # Alibaba Cloud RDS: MySQL with thread_pool_enabled
    ("mysql", (8, 0, 36), False, False, "mysql-enterprise-8.0"),
    ("mysql", (8, 4, 3), False, False, "mysql-enterprise-8.4"),
    ("mysql", (9, 7, 2), False, False, "mysql-enterprise-9.7"),
]


def snippet_options(snippet: str) -> list[tuple[str, str]]:
    lines = [line.split("#", 1)[0].strip() for line in snippet.splitlines()[1:]]
    parsed = [_LINE.match(line) for line in lines if line]
    assert all(parsed), snippet
    return [(m.group(1), m.group(2)) for m in parsed if m]


def _norm(option: str) -> str:
    # Option files accept '-' and '_' alike in option names.
    return option.replace("-", "_")


@pytest.mark.parametrize(("flavor", "version", "rds", "plugin_only", "entry"), CASES)
def test_each_snippet_names_only_what_that_version_has(flavor, version, rds, plugin_only, entry):
    switch = pool_switch(flavor, version, rds, plugin_only)
    assert switch is not None
    known = OPTIONS[entry]
    names = {_norm(o) for o in known["options"]}
    assert switch.snippet.startswith("[mysqld]\n")
    for option, value in snippet_options(switch.snippet):
        assert _norm(option) in names, f"{entry} has no {option}: {switch.snippet}"
        allowed = known["values"].get(_norm(option))
        if allowed is not None:
            assert value in allowed, f"{option}={value} is not one of {allowed} on {entry}"
    # The switch itself is an option of that version, set to an accepted value.
    assert _norm(switch.variable) in names


def test_percona_57_and_alisql_56_get_no_admin_interface_lines():
    for flavor, version in (("percona", (5, 7, 44)), ("alisql", (5, 6, 16))):
        switch = pool_switch(flavor, version, False)
        assert switch is not None
        options = {o for o, _ in snippet_options(switch.snippet)}
        assert not options & {"admin_address", "admin_port"}, switch.snippet
    percona57 = pool_switch("percona", (5, 7, 44), False)
    assert percona57 is not None and "extra_port" in percona57.snippet
    percona80 = pool_switch("percona", (8, 0, 36), False)
    assert (
        percona80 is not None and "extra_port" not in percona80.snippet and "admin_port" in percona80.snippet
    )


def test_mysql8_based_alisql_switches_with_thread_pool_enabled_not_thread_handling():
    switch = pool_switch("alisql", (8, 0, 36), False)
    assert switch is not None
    assert (switch.variable, switch.value, switch.restart) == ("thread_pool_enabled", "ON", False)
    assert "thread_handling" not in switch.snippet and "pool-of-threads" not in switch.snippet


@pytest.mark.parametrize(
    ("fixture_variables", "entry"),
    [
        ({"version": "5.7.44-48", "version_comment": "Percona Server (GPL), Release 48"}, "percona-5.7"),
        ({"version": "5.6.16-AliSQL", "version_comment": "Source distribution"}, "alisql-5.6"),
        (
            {"version": "8.0.36", "version_comment": "Source distribution", "thread_pool_enabled": "OFF"},
            "alisql-8.0",
        ),
        # Percona 9.7: the server's own variables tell which pool the build has.
        (
            {
                "version": "9.7.2-2",
                "version_comment": "Percona Server (GPL), Release '2'",
                "thread_pool_high_prio_mode": "transactions",
                "thread_pool_oversubscribe": "3",
            },
            "percona-9.7",
        ),
        (
            {
                "version": "9.7.2-2",
                "version_comment": "Percona Server (GPL), Release '2'",
                "thread_pool_size": "16",
            },
            "percona-9.7-plugin",
        ),
    ],
)
def test_the_pool_off_view_carries_the_snippet_of_that_version(fixture_variables, entry):
    server = server_from_discovery(
        [
            {"variable_name": k, "value": v}
            for k, v in {**fixture_variables, "thread_handling": "one-thread-per-connection"}.items()
        ],
        [],
    )
    assert not server.pool_enabled and server.enable_snippet
    names = {_norm(o) for o in OPTIONS[entry]["options"]}
    for option, value in snippet_options(server.enable_snippet):
        assert _norm(option) in names
        assert value in OPTIONS[entry]["values"].get(_norm(option), [value])
