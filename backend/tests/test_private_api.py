"""The product uses other libraries through their public API only (docs/decisions/0100-poll-wire-path.md).

A private name (one leading underscore) that the product reads, imports or overrides must be one
the product defines itself; pydantic's `__pydantic_*__` internals are not touched at all. A
library's private members change without notice between releases, so reaching inside one is
what pinning cannot make safe.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import re
from pathlib import Path

import poolscope

PACKAGE = Path(poolscope.__file__).parent
PYDANTIC_INTERNAL = re.compile(r"^__pydantic_\w+__$")
# Public API spelt with an underscore: SQLAlchemy's Row._mapping (its documented accessor,
# underscored so it cannot clash with a column's name) and os._exit.
PUBLIC_UNDERSCORED = {"_mapping", "_exit"}


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _sources() -> dict[Path, ast.Module]:
    return {path: ast.parse(path.read_text(), str(path)) for path in sorted(PACKAGE.rglob("*.py"))}


def _defined_here(trees: dict[Path, ast.Module]) -> set[str]:
    """Every private name the product defines: functions, classes, attributes it assigns,
    parameters, slots."""
    names: set[str] = set()
    for tree in trees.values():
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(node.name)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                names.add(node.attr)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
            elif isinstance(node, ast.arg):
                names.add(node.arg)
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and _private(node.value):
                names.add(node.value)  # __slots__ entries, setattr/getattr names of our own
    return names


def test_no_private_member_of_another_library_is_read_or_imported() -> None:
    trees = _sources()
    ours = _defined_here(trees) | PUBLIC_UNDERSCORED
    found: list[str] = []
    for path, tree in trees.items():
        where = path.relative_to(PACKAGE.parent)
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute):
                if PYDANTIC_INTERNAL.match(node.attr):
                    found.append(f"{where}:{node.lineno} .{node.attr} (pydantic's internals)")
                elif _private(node.attr) and node.attr not in ours:
                    found.append(f"{where}:{node.lineno} .{node.attr}")
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                if not node.module.startswith("poolscope"):
                    private = [a.name for a in node.names if _private(a.name)]
                    parts = [p for p in node.module.split(".") if _private(p)]
                    if private or parts:
                        found.append(f"{where}:{node.lineno} from {node.module} import {private or '...'}")
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if any(_private(p) for p in alias.name.split(".")):
                        found.append(f"{where}:{node.lineno} import {alias.name}")
    assert not found, "private members of other libraries:\n" + "\n".join(found)


def test_no_class_overrides_a_private_member_of_another_library() -> None:
    found: list[str] = []
    for module_info in pkgutil.walk_packages([str(PACKAGE)], "poolscope."):
        module = importlib.import_module(module_info.name)
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ != module.__name__:
                continue
            foreign = [b for b in cls.__mro__[1:] if not b.__module__.startswith("poolscope")]
            for name, member in vars(cls).items():
                # What the class body defines (not what a metaclass adds, such as ABC's _abc_impl).
                defined = getattr(inspect.unwrap(member), "__qualname__", "").startswith(
                    f"{cls.__qualname__}."
                )
                if _private(name) and defined and any(name in vars(base) for base in foreign):
                    found.append(f"{module.__name__}.{cls.__qualname__}.{name}")
    assert not found, "private members of other libraries overridden:\n" + "\n".join(found)
