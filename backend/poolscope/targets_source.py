"""Targets from files: `targets_file` and `targets_dir` merged with the config's [[targets]],
re-read on change without a restart.

A file holds a list of targets with the fields of [[targets]]: TOML as `[[targets]]` tables (or
one target's keys at the top), YAML as a list, a mapping with a `targets` list, or one target's
mapping. A change that does not validate is logged, naming the file, and changes nothing; error
texts never quote the file's content (a DSN may hold a password). An empty file (or one holding only
comments) is such a change too: a file caught half-written by a tool that does not replace it
atomically must not stop every target. "No targets" is said explicitly: `targets: []` (YAML),
`[]`, or `targets = []` (TOML). Write the file atomically: a temporary file beside it, then rename.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import tomllib
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml
from pydantic import ValidationError

from poolscope.config import TargetConfig

if TYPE_CHECKING:
    from poolscope.config import Settings

log = logging.getLogger(__name__)

SUFFIXES = (".toml", ".yaml", ".yml")
MAX_FILE_BYTES = 8 * 1024 * 1024
MAX_DIR_FILES = 10_000
WATCH_INTERVAL_S = 2.0

Listener = Callable[[list[TargetConfig]], Awaitable[None] | None]
# (path, mtime_ns, size) of every file read, in order: a change in any of them means re-read.
Fingerprint = tuple[tuple[str, int, int], ...]


class TargetsError(ValueError):
    """A targets file or directory that cannot be used; the text names the file."""


def files_of(settings: Settings) -> list[Path]:
    """targets_file, then targets_dir's snippets by name (hidden files and other suffixes skipped)."""
    files: list[Path] = []
    if settings.targets_file is not None:
        files.append(settings.targets_file)
    if settings.targets_dir is not None:
        folder = settings.targets_dir
        if not folder.is_dir():
            raise TargetsError(f"targets_dir {folder} is not a directory")
        snippets = sorted(
            p for p in folder.iterdir() if p.suffix in SUFFIXES and not p.name.startswith(".") and p.is_file()
        )
        if len(snippets) > MAX_DIR_FILES:
            raise TargetsError(f"targets_dir {folder}: more than {MAX_DIR_FILES} files")
        files.extend(snippets)
    return files


def fingerprint(settings: Settings) -> Fingerprint:
    out = []
    try:
        paths = files_of(settings)
    except (TargetsError, OSError):
        return (("<unlistable>", 0, 0),)
    for path in paths:
        try:
            st = path.stat()
            out.append((str(path), st.st_mtime_ns, st.st_size))
        except OSError:
            out.append((str(path), -1, -1))
    return tuple(out)


def _parse(path: Path) -> Any:
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise TargetsError(f"{path}: larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB")
        raw = path.read_bytes()
    except OSError as exc:
        raise TargetsError(f"{path}: cannot be read ({exc.strerror})") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise TargetsError(f"{path}: not UTF-8 text") from None
    if path.suffix == ".toml":
        try:
            return tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            # tomllib's message is the problem and its position, never the line itself.
            raise TargetsError(f"{path}: not valid TOML: {exc}") from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        # A YAML error quotes the offending line, which may be a DSN: give the position only.
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        raise TargetsError(f"{path}: not valid YAML{where}") from None


def _items(path: Path, data: Any) -> list[Any]:
    if data is None or data == {}:
        raise TargetsError(
            f"{path}: empty (no targets would be polled); for no targets write an explicit empty list"
            " (`targets: []`, `[]`, or `targets = []` in TOML), and write the file atomically"
            " (a temporary file, then rename)"
        )
    if isinstance(data, list):
        return data
    if isinstance(data, dict):
        if "targets" in data:
            if set(data) != {"targets"} or not isinstance(data["targets"], list):
                raise TargetsError(f"{path}: expected only a list of targets under `targets`")
            return list(data["targets"])
        return [data]  # one target's fields
    raise TargetsError(f"{path}: expected a list of targets")


def targets_of(path: Path) -> list[TargetConfig]:
    """The file's targets, validated like [[targets]]."""
    out = []
    for index, item in enumerate(_items(path, _parse(path)), start=1):
        if not isinstance(item, dict):
            raise TargetsError(f"{path}: target {index} is not a table/mapping")
        try:
            out.append(TargetConfig.model_validate(item))
        except ValidationError as exc:
            given = item.get("name")
            name = given[:64] if isinstance(given, str) else f"#{index}"
            problems = "; ".join(
                f"{'.'.join(str(p) for p in err['loc']) or 'target'}: {err['msg']}"
                for err in exc.errors(include_url=False, include_context=False, include_input=False)
            )
            raise TargetsError(f"{path}: target {name}: {problems}") from None
    return out


def load(settings: Settings) -> list[TargetConfig]:
    """The config's [[targets]] then every file's, checked for duplicate names across all."""
    targets = list(settings.inline_targets)
    where = {t.name: "the config's [[targets]]" for t in targets}
    for path in files_of(settings):
        for target in targets_of(path):
            if target.name in where:
                raise TargetsError(f"{path}: target {target.name} is also defined in {where[target.name]}")
            where[target.name] = str(path)
            targets.append(target)
    return targets


class TargetsWatcher:
    """Re-reads the targets files when their mtime or size changes (every `interval_s`):
    a valid change replaces settings.targets and tells each listener the new list."""

    def __init__(
        self,
        settings: Settings,
        on_change: Listener | None = None,
        interval_s: float = WATCH_INTERVAL_S,
        *,
        quiet: bool = False,
    ) -> None:
        """`quiet`: a poller of a fleet, whose API process says the same (logged once per change)."""
        self.level = logging.DEBUG if quiet else logging.WARNING
        self.settings = settings
        self.interval_s = interval_s
        self.listeners: list[Listener] = [on_change] if on_change is not None else []
        # None: the first check reads the files once, catching a change made while starting.
        self._seen: Fingerprint | None = None
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="targets-watcher")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _run(self) -> None:
        while True:
            try:
                await self.check()
            except Exception:
                log.exception("targets reload failed")
            await asyncio.sleep(self.interval_s)

    async def check(self) -> bool:
        """Re-read if any file changed; True when settings.targets was replaced."""
        seen = await asyncio.to_thread(fingerprint, self.settings)
        if seen == self._seen:
            return False
        self._seen = seen
        try:
            targets = await asyncio.to_thread(load, self.settings)
        except TargetsError as exc:
            log.log(
                self.level,
                "targets not reloaded, keeping the %d current: %s",
                len(self.settings.targets),
                exc,
            )
            return False
        if targets == self.settings.targets:
            return False
        before = {t.name for t in self.settings.targets}
        after = {t.name for t in targets}
        self.settings.targets = targets
        log.log(
            logging.INFO if self.level > logging.DEBUG else logging.DEBUG,
            "targets reloaded: %d (added %s; removed %s)",
            len(targets),
            ", ".join(sorted(after - before)) or "none",
            ", ".join(sorted(before - after)) or "none",
        )
        for listener in self.listeners:
            result = listener(targets)
            if inspect.isawaitable(result):
                await result
        return True


def watched(settings: Settings) -> bool:
    return settings.targets_file is not None or settings.targets_dir is not None
