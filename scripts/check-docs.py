"""Fail when the documentation points nowhere (run by `make lint`; `check-docs.py [ROOT]`).

- Every relative link in a tracked Markdown file leads to a file that exists, and a `#anchor`
  to a heading of that file (GitHub's anchors).
- Every `docs/...` path named anywhere else in the tree (a comment citing a decision record, a
  help text) exists.
- No page in docs/ is over 40 kB, except the generated reference.
- Every decision record is listed in docs/decisions/README.md.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path, PurePosixPath

MAX_PAGE = 40_000
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^(```|~~~).*?^\1", re.MULTILINE | re.DOTALL)
DOCS_PATH = re.compile(r"(?<![\w/.-])docs/[\w.-]+(?:/[\w.-]+)*")


def anchors(markdown: str) -> set[str]:
    """The anchors GitHub gives a page's headings."""
    seen: dict[str, int] = {}
    for line in FENCE.sub("", markdown).splitlines():
        if not line.startswith("#"):
            continue
        text = line.lstrip("#").strip().lower()
        slug = re.sub(r"[^\w\- ]", "", text).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        if count:
            seen[f"{slug}-{count}"] = 1
    return set(seen)


def main(root: Path) -> int:
    tracked = subprocess.run(
        ["git", "ls-files"], cwd=root, check=True, capture_output=True, text=True
    ).stdout
    files = [f for f in tracked.splitlines() if (root / f).is_file()]
    problems: list[str] = []
    for name in files:
        path = root / name
        if name.endswith(".md"):
            text = path.read_text(encoding="utf-8")
            for target in LINK.findall(FENCE.sub("", text)):
                if re.match(r"[a-z][a-z0-9+.-]*:", target):
                    continue
                file, _, anchor = target.partition("#")
                dest = (path.parent / file).resolve() if file else path
                if not dest.exists():
                    problems.append(f"{name}: link to {target}: no such file")
                elif (
                    anchor
                    and dest.suffix == ".md"
                    and anchor not in anchors(dest.read_text(encoding="utf-8"))
                ):
                    problems.append(f"{name}: link to {target}: no such heading")
            if (
                name.startswith("docs/")
                and not name.startswith("docs/reference/")
                and len(text.encode()) > MAX_PAGE
            ):
                problems.append(
                    f"{name}: {len(text.encode())} bytes, over {MAX_PAGE}: split it"
                )
        elif (
            path.suffix not in (".png", ".json", ".lock") and "node_modules" not in name
        ):
            try:
                text = path.read_text(encoding="utf-8")
            except UnicodeDecodeError:
                continue
            for number, line in enumerate(text.splitlines(), 1):
                for cited in DOCS_PATH.findall(line):
                    cited = cited.rstrip(".")
                    if not (root / PurePosixPath(cited)).exists():
                        problems.append(
                            f"{name}:{number}: names {cited}, which does not exist"
                        )
    decisions = root / "docs" / "decisions"
    index = (
        (decisions / "README.md").read_text(encoding="utf-8")
        if decisions.is_dir()
        else ""
    )
    for record in sorted(decisions.glob("[0-9]*.md")):
        if f"]({record.name})" not in index:
            problems.append(f"docs/decisions/README.md: {record.name} is not listed")
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(
        main(
            Path(sys.argv[1])
            if len(sys.argv) > 1
            else Path(__file__).resolve().parent.parent
        )
    )
