"""The tests' one bounded wait: for a server, a process, an alert or a store to reach a state."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


def wait_for(
    read: Callable[[], Any],
    timeout_s: float,
    message: Callable[[Any], str] | str,
    every_s: float = 0.2,
    until: Callable[[Any], object] = bool,
) -> Any:
    """The first value read that `until` accepts (by default: a truthy one), read every `every_s`
    for up to `timeout_s` (and once more at the deadline); else the test fails with `message`. A
    callable message is computed only then, from the last value read (the state reached instead,
    or a process's log)."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = read()
        if until(value):
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(
                f"timed out after {timeout_s:g} s: {message(value) if callable(message) else message}"
            )
        time.sleep(every_s)
