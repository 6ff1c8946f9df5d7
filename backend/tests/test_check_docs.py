"""scripts/check-docs.py (run by `make lint`) on a small git checkout: it names links to missing
files and headings, `docs/` paths that name no file, oversized pages and unlisted decision
records, and passes a tree where everything it names exists; the real repository passes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "check-docs.py"

# Paths spelled through D so that this file names no missing docs/ path itself.
D = "docs"
GOOD = {
    "README.md": f"# Tool\n\nSee [the guide]({D}/guide.md#two-words) and [a record]({D}/decisions/0001-x.md).\n"
    "```\n[not a link](nowhere.md)\n```\n[web](https://example.org/x.md)\n",
    f"{D}/guide.md": "# Guide\n\n## Two words\n\n![shot](images/a.png)\n",
    f"{D}/images/a.png": "",
    f"{D}/decisions/README.md": "| [0001](0001-x.md) | x |\n",
    f"{D}/decisions/0001-x.md": "# 0001: x\n",
    "app/main.py": f'"""Why: {D}/decisions/0001-x.md."""\nURL = "https://h/{D}/gone.md"\n',
}


def checkout(tmp: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (tmp / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp / name).write_text(text)
    subprocess.run(["git", "init", "-q", str(tmp)], check=True)
    subprocess.run(["git", "-C", str(tmp), "add", "-A"], check=True)
    return tmp


def run(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), str(root)], capture_output=True, text=True, timeout=60
    )


def test_a_tree_whose_links_and_paths_all_exist_passes(tmp_path):
    result = run(checkout(tmp_path, GOOD))
    assert result.returncode == 0, result.stderr


def test_every_kind_of_dangling_pointer_is_named(tmp_path):
    bad = {
        **GOOD,
        "README.md": GOOD["README.md"] + f"[gone]({D}/gone.md) [heading]({D}/guide.md#three-words)\n",
        "app/main.py": f"# the measurements: {D}/FLEET.md, section 9\n",
        f"{D}/decisions/0002-y.md": "# 0002: y\n",
        f"{D}/big.md": "x" * 40_001,
        f"{D}/reference/big.md": "x" * 90_000,
    }
    result = run(checkout(tmp_path, bad))
    assert result.returncode == 1
    lines = set(result.stderr.splitlines())
    assert lines == {
        f"README.md: link to {D}/gone.md: no such file",
        f"README.md: link to {D}/guide.md#three-words: no such heading",
        f"app/main.py:1: names {D}/FLEET.md, which does not exist",
        f"{D}/big.md: 40001 bytes, over 40000: split it",
        f"{D}/decisions/README.md: 0002-y.md is not listed",
    }


def test_the_repository_passes():
    result = run(ROOT)
    assert result.returncode == 0, result.stderr
