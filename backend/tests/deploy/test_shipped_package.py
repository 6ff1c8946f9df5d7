"""The shipped package (backend/poolscope) stands alone: no harness imports, no tests/ reads."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import poolscope
from tests.deploy.shipped import harness_uses

PACKAGE = Path(poolscope.__file__).resolve().parent


def test_no_module_of_the_package_imports_the_harness_or_names_tests() -> None:
    modules = sorted(PACKAGE.rglob("*.py"))
    assert len(modules) > 50, "walked the wrong directory"
    uses = harness_uses((str(p.relative_to(PACKAGE.parent)), p.read_text()) for p in modules)
    assert uses == []


def test_the_checker_sees_an_import_a_lazy_import_and_a_tests_path() -> None:
    text = textwrap.dedent(
        '''
        """Docstrings may name tests/fixtures in prose."""
        import poolscope_dev.replay
        from poolscope_bench import cli
        def f():
            from tests import FIXTURES_ROOT
            return importlib.import_module("poolscope_dev.sandbox"), Path(x) / "tests/fixtures"
        '''
    )
    uses = harness_uses([("m.py", text)])
    assert [u.split(" ", 1)[0] for u in uses] == ["m.py:3", "m.py:4", "m.py:6", "m.py:7", "m.py:7"]


def test_importing_the_whole_product_loads_no_harness_module() -> None:
    """Run in a fresh interpreter: the test process itself has the harness loaded (conftest.py)."""
    code = textwrap.dedent(
        """
        import pkgutil, importlib, sys
        import poolscope
        for m in pkgutil.walk_packages(poolscope.__path__, "poolscope."):
            importlib.import_module(m.name)
        bad = sorted(n for n in sys.modules if n.split(".")[0] in ("poolscope_dev", "poolscope_bench", "tests"))
        print(len(sys.modules), bad)
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd="/")
    assert out.returncode == 0, out.stderr
    count, bad = out.stdout.split(" ", 1)
    assert int(count) > 100 and bad.strip() == "[]"
