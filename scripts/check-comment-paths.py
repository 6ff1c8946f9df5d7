#!/usr/bin/env python3
"""Fails when a comment or docstring names a repository file that does not exist (run by `make lint`).

A word in a comment counts as a path when it contains a "/" and ends in a known extension, starts
with a top-level directory of the repository ("docs/", "e2e/", ...), or is a bare document name
(FINDINGS.md). A path is found relative to the commenting file's directory or any directory above
it, or to backend/ or the package (backend/poolscope/); a bare name anywhere in the repository.
Paths outside the repository (/etc/...), build output and files of other projects cited as sources
are in IGNORED_*.
"""

from __future__ import annotations

import ast
import io
import re
import subprocess
import sys
import tokenize
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

ROOT = Path(__file__).resolve().parent.parent
SCANNED = ("backend/", "frontend/src/", "e2e/", "scripts/", "Makefile")
EXTENSIONS = [
    "py",
    "md",
    "ts",
    "tsx",
    "js",
    "mjs",
    "cjs",
    "json",
    "sh",
    "toml",
    "yml",
    "yaml",
    "css",
    "html",
    "sql",
    "ini",
    "lock",
    "txt",
    "cfg",
    "conf",
    "service",
    "mako",
]
# Paths that name things outside the repository, or files a user makes from a sample.
IGNORED_PREFIXES = (
    "/etc/",
    "/usr/",
    "/var/",
    "/tmp/",
    "/proc/",
    "/sys/",
    "/dev/",
    "/run/",
    "/api/",
    "~/",
)
IGNORED_NAMES = frozenset(
    {
        "poolscope.toml",  # the user's config, made from poolscope.example.toml
        "frontend/dist",  # build output (`make build`)
        "docs/threadpool.md",  # percona/psmysql-docs, cited as a source
        "docs/performance/threadpool.md",  # the same, branch 5.7
    }
)
_WORD_EDGE = "\"'`()[],;:!?*<>"
_NOT_CONCRETE = re.compile(r"[<>{}*$|\\]|\.\.\.")
_URL = re.compile(r"[a-z][a-z0-9+.-]*://\S*", re.IGNORECASE)
_EXT = re.compile(r"\.(?:" + "|".join(EXTENSIONS) + r")$")


def repository_files(root: Path) -> tuple[set[str], set[str], set[str]]:
    """Tracked files, their directories, and their base names."""
    out = subprocess.run(
        ["git", "ls-files"], cwd=root, check=True, capture_output=True, text=True
    ).stdout
    files = set(out.split("\n")) - {""}
    dirs = {str(p) for f in files for p in PurePosixPath(f).parents if str(p) != "."}
    return files, dirs, {PurePosixPath(f).name for f in files}


def python_comments(text: str) -> Iterator[tuple[int, str]]:
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.COMMENT:
                yield tok.start[0], tok.string
    except (tokenize.TokenError, SyntaxError):
        return
    for node in ast.walk(ast.parse(text)):
        if isinstance(
            node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef
        ):
            doc = ast.get_docstring(node, clean=False)
            if doc and node.body:
                first = node.body[0].lineno
                for i, line in enumerate(doc.splitlines()):
                    yield first + i, line


def c_comments(text: str) -> Iterator[tuple[int, str]]:
    """// and /* */ comments of TypeScript / JavaScript / CSS, skipping string literals."""
    i, line, n = 0, 1, len(text)
    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
        elif c in "'\"`":
            j = i + 1
            while j < n and text[j] != c and not (c != "`" and text[j] == "\n"):
                j += 2 if text[j] == "\\" else 1
            line += text.count("\n", i, j)
            i = j
        elif text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            yield line, text[i:end]
            i = end
            continue
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end
            for k, part in enumerate(text[i:end].split("\n")):
                yield line + k, part
            line += text.count("\n", i, end)
            i = end + 2
            continue
        i += 1


def hash_comments(text: str) -> Iterator[tuple[int, str]]:
    """# comments of shell, Makefile, TOML, YAML: a # at a line start or after a blank."""
    for number, line in enumerate(text.splitlines(), 1):
        match = re.search(r"(?:^|\s)#", line)
        if match and not line.lstrip().startswith("#!"):
            yield number, line[match.end() :]


def comments(path: Path) -> Iterator[tuple[int, str]]:
    text = path.read_text(encoding="utf-8", errors="replace")
    suffix = path.suffix
    if suffix == ".py":
        yield from python_comments(text)
    elif suffix in (".ts", ".tsx", ".js", ".mjs", ".cjs", ".css"):
        yield from c_comments(text)
    elif (
        suffix in (".sh", ".toml", ".yml", ".yaml", ".cfg", ".ini", ".conf")
        or path.name == "Makefile"
    ):
        yield from hash_comments(text)


def candidates(comment: str, top_dirs: set[str]) -> Iterator[str]:
    for word in _URL.sub(" ", comment).split():
        while word != (stripped := word.strip(_WORD_EDGE).rstrip(".")):
            word = stripped
        word = re.sub(r":\d+(?:-\d+)?$", "", word)  # file.py:12
        word = word.split("#", 1)[0]  # docs/API.md#anchor
        if not word or _NOT_CONCRETE.search(word) or word.startswith(("-", "@")):
            continue
        if word.startswith(IGNORED_PREFIXES) or word in IGNORED_NAMES:
            continue
        if not re.fullmatch(r"[\w./-]+", word) or word.startswith("."):
            continue
        if "/" in word.rstrip("/"):
            if _EXT.search(word) or word.split("/", 1)[0] in top_dirs:
                yield word
        elif word.endswith(".md"):
            yield word


def found(
    word: str, source: str, files: set[str], dirs: set[str], names: set[str]
) -> bool:
    if "/" not in word.rstrip("/"):
        return word in names or word.rstrip("/") in dirs
    word = word.lstrip("/")
    here = PurePosixPath(source).parent
    bases = [
        here,
        *here.parents,
        PurePosixPath("backend"),
        PurePosixPath("backend/poolscope"),
    ]
    for base in bases:
        path = str(base / word.rstrip("/")) if str(base) != "." else word.rstrip("/")
        path = str(PurePosixPath(path))
        if path in files or path in dirs:
            return True
    return False


def main(root: Path = ROOT) -> int:
    files, dirs, names = repository_files(root)
    top_dirs = {d for d in dirs if "/" not in d}
    scanned = sorted(
        f for f in files if f.startswith(SCANNED) and "/node_modules/" not in f
    )
    missing: list[str] = []
    for source in scanned:
        path = root / source
        if not path.is_file():
            continue
        for line, comment in comments(path):
            for word in candidates(comment, top_dirs):
                if not found(word, source, files, dirs, names):
                    missing.append(f"{source}:{line}: {word}")
    for entry in missing:
        print(entry)
    if missing:
        print(
            f"{len(missing)} comment path(s) name no file in the repository",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    # An argument names another checkout to check (the tests use one).
    sys.exit(main(Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else ROOT))
