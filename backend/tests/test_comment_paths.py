"""scripts/check-comment-paths.py (run by `make lint`) on a small git checkout: it names the comment
pointers to missing files, in Python comments and docstrings, TypeScript and Makefile comments, and
passes over code, URLs and files that exist; the real repository passes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "check-comment-paths.py"

FILES = {
    "backend/poolscope/alerts/engine.py": '"""The engine (see store/live.py and docs/GONE.md)."""\n'
    "# relative to here: rules/x.py; to the package: api/deps.py\n"
    'PATH = "backend/poolscope/nowhere.py"  # code, not a comment\n',
    "backend/poolscope/alerts/rules/x.py": "# frontend/src/lost.ts is not there\n",
    "backend/poolscope/api/deps.py": "",
    "backend/poolscope/store/live.py": "",
    "frontend/src/a.ts": 'const url = "http://example.org/b/c.ts"; // see backend/poolscope/store/live.py\n'
    "/* and e2e/missing.spec.ts */\n",
    "Makefile": "lint:\n\ttrue  # scripts/gone.sh, http://h/x/y.sh, /etc/mysql/my.cnf\n",
}


def run(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), str(root)], capture_output=True, text=True, timeout=60
    )


def test_missing_pointers_are_listed_and_everything_else_passes(tmp_path):
    for name, text in FILES.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run(["git", "add", "-A"], cwd=tmp_path, check=True)
    result = run(tmp_path)
    assert result.returncode == 1, result
    assert sorted(result.stdout.split("\n")) == [
        "",
        "Makefile:2: scripts/gone.sh",
        "backend/poolscope/alerts/engine.py:1: docs/GONE.md",
        "backend/poolscope/alerts/rules/x.py:1: frontend/src/lost.ts",
        "frontend/src/a.ts:2: e2e/missing.spec.ts",
    ]


def test_the_repository_has_no_pointer_to_a_missing_file():
    result = run(ROOT)
    assert result.returncode == 0, result.stdout
