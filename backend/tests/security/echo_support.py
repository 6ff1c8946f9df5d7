"""Helpers for the credential-echo fuzz: marked secrets, a log recorder, a logged-in SSE reader, a GET walker."""

from __future__ import annotations

import io
import logging
import threading
import time
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import httpx


@dataclass(frozen=True)
class Secret:
    """A password built around markers: plain ASCII words that survive JSON, URL and HTML escaping.

    Finding any marker anywhere means (part of) the password leaked, however it was encoded.
    """

    tag: str

    @property
    def markers(self) -> list[str]:
        return [f"Qz{self.tag}{part}" for part in "abcdefg"]

    @property
    def password(self) -> str:
        a, b, c, d, e, f, g = self.markers
        # Every character a URL parser trips on, a %-sign that is not an escape, and non-latin-1
        # characters (aiomysql encodes passwords as latin-1).
        return f"{a}/{b}?{c}#{d}@{e}%{f}:{g}-\u00fc\u20ac\U0001f511"


def leaks(text: str, markers: Iterable[str]) -> list[str]:
    return [m for m in markers if m in text]


class LogRecorder(logging.Handler):
    """Every log line of the process (all loggers, DEBUG and up), formatted as a log file would show it."""

    def __init__(self) -> None:
        super().__init__(level=logging.DEBUG)
        self.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
        self.lines: list[str] = []
        self._root_level = logging.WARNING

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))

    def __enter__(self) -> LogRecorder:
        root = logging.getLogger()
        self._root_level = root.level
        root.addHandler(self)
        root.setLevel(logging.DEBUG)
        return self

    def __exit__(self, *exc: object) -> None:
        root = logging.getLogger()
        root.removeHandler(self)
        root.setLevel(self._root_level)


class LiveReader:
    """Reads /api/live with a session's headers in a thread; keeps every raw line (bounded in time)."""

    def __init__(self, base_url: str, headers: dict[str, str], max_s: float = 180) -> None:
        self.lines: list[str] = []
        self._stop = threading.Event()
        self._args = (base_url, headers, time.monotonic() + max_s)
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        base_url, headers, deadline = self._args
        try:
            with (
                httpx.Client(base_url=base_url, headers=headers, timeout=httpx.Timeout(10, read=30)) as c,
                c.stream("GET", "/api/live") as response,
            ):
                for line in response.iter_lines():
                    self.lines.append(line)
                    if self._stop.is_set() or time.monotonic() > deadline:
                        return
        except httpx.HTTPError:
            pass  # the server goes away at the end

    def events(self, kind: str) -> int:
        return sum(1 for line in self.lines if line == f"event: {kind}")

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=35)


@dataclass
class Answer:
    what: str
    status: int
    text: str


@dataclass
class Walker:
    """GETs every path of the OpenAPI document with every value its parameters can take here."""

    client: httpx.Client
    path_values: dict[str, list[str]]
    query_values: dict[str, str]
    answers: list[Answer] = field(default_factory=list)

    def walk(self, doc: dict[str, Any], skip: set[str]) -> list[Answer]:
        for template, ops in doc["paths"].items():
            if "get" not in ops or template in skip:
                continue
            params = ops["get"].get("parameters", [])
            query = {
                p["name"]: self.query_values[p["name"]]
                for p in params
                if p["in"] == "query" and p["name"] in self.query_values
            }
            for path in self._expand(template, [p["name"] for p in params if p["in"] == "path"]):
                self.get(path, query)
        return self.answers

    def _expand(self, template: str, names: list[str]) -> list[str]:
        paths = [template]
        for name in names:
            paths = [p.replace("{" + name + "}", v) for p in paths for v in self.path_values[name]]
        return paths

    def get(self, path: str, query: dict[str, Any] | None = None) -> Answer:
        response = self.client.get(path, params=query)
        answer = Answer(f"GET {path}", response.status_code, readable(response))
        self.answers.append(answer)
        return answer


def readable(response: httpx.Response) -> str:
    """The body as text; a zip archive is opened and every member read."""
    if response.content[:2] == b"PK":
        with zipfile.ZipFile(io.BytesIO(response.content)) as archive:
            return "\n".join(archive.read(n).decode("utf-8", "replace") for n in archive.namelist())
    return response.content.decode("utf-8", "replace") + "\n" + str(dict(response.headers))
