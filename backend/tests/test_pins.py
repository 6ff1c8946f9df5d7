"""Every library the product imports is pinned in pyproject.toml and in requirements.lock.

A library that came along with another one (starlette with FastAPI, PyMySQL with aiomysql)
would otherwise install at whatever version is current when the wheel is installed.
"""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
import tomllib
from pathlib import Path

import poolscope

BACKEND = Path(poolscope.__file__).parent.parent


def _name(requirement: str) -> str:
    return re.split(r"[\[=<>~! ;]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def _imported() -> set[str]:
    modules: set[str] = set()
    for path in (BACKEND / "poolscope").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                modules |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                modules.add(node.module.split(".")[0])
    return {m for m in modules if m not in sys.stdlib_module_names and m != "poolscope"}


def test_every_imported_library_is_pinned() -> None:
    project = tomllib.loads((BACKEND / "pyproject.toml").read_text())["project"]
    pins = {_name(r): r for r in project["dependencies"]}
    locked = {_name(line) for line in (BACKEND / "requirements.lock").read_text().split() if "==" in line}
    distributions = importlib.metadata.packages_distributions()
    unpinned = []
    for module in sorted(_imported()):
        for distribution in distributions[module]:
            name = _name(distribution)
            if "==" not in pins.get(name, "") or name not in locked:
                unpinned.append(f"{module} ({distribution})")
    assert not unpinned, f"imported but not pinned in pyproject.toml and requirements.lock: {unpinned}"
    assert all("==" in r for r in project["dependencies"]), "every dependency pinned"
