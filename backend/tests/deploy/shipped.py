"""What the shipped package may not do: import the development harness or read the tests' files.

Used on the checkout's package (tests/deploy/test_shipped_package.py) and on the built wheel
(tests/deploy/test_wheel.py).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

HARNESS = ("poolscope_dev", "poolscope_bench", "tests")


def _is_harness(module: str) -> bool:
    return any(module == name or module.startswith(f"{name}.") for name in HARNESS)


def _docstrings(tree: ast.Module) -> set[int]:
    """ids of the docstring constants, which may name harness files in prose."""
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                out.add(id(body[0].value))
    return out


def harness_uses(sources: Iterable[tuple[str, str]]) -> list[str]:
    """`file:line what` for every import of the harness and every string naming a tests/ path."""
    found: list[str] = []
    for name, text in sources:
        tree = ast.parse(text, name)
        docstrings = _docstrings(tree)
        for node in ast.walk(tree):
            where = f"{name}:{getattr(node, 'lineno', 0)}"
            if isinstance(node, ast.Import):
                found += [f"{where} import {a.name}" for a in node.names if _is_harness(a.name)]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and _is_harness(node.module or ""):
                found.append(f"{where} from {node.module} import ...")
            elif (
                isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
            ):
                value = node.value
                # importlib.import_module("poolscope_dev..."), Path(...) / "tests" / "fixtures", "tests/..."
                if _is_harness(value) or value.startswith("tests/") or "/tests/" in value:
                    found.append(f"{where} string {value[:60]!r}")
    return found
