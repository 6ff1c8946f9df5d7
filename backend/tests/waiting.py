"""The tests' one bounded wait: for a server, a process, an alert or a store to reach a state."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


def wait_for(
    condition: Callable[[], Any], timeout_s: float, message: Callable[[], str] | str, every_s: float = 0.2
) -> Any:
    """The condition's first truthy value, asked every `every_s` for up to `timeout_s` (and once
    more at the deadline); else the test fails with `message`. A callable message is computed
    only then (a process's log, the state that was reached instead)."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(
                f"timed out after {timeout_s:g} s: {message() if callable(message) else message}"
            )
        time.sleep(every_s)
