"""The tests' one bounded wait: for a server, a process, an alert or a store to reach a state.

`wait_for` in a plain test, `await_for` inside the event loop (its reads may be coroutines). Time
that the code under test waits for on purpose (a schedule, a lease, a guard's window) is not waited
for here: those services take a clock (tests/clock.py), and the test advances it.
"""

from __future__ import annotations

import asyncio
import inspect
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
            raise AssertionError(_timed_out(timeout_s, message, value))
        time.sleep(every_s)


async def await_for(
    read: Callable[[], Any],
    timeout_s: float,
    message: Callable[[Any], str] | str,
    every_s: float = 0.02,
    until: Callable[[Any], object] = bool,
) -> Any:
    """`wait_for` without blocking the event loop: `read` may return a value or a coroutine."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = read()
        if inspect.isawaitable(value):
            value = await value
        if until(value):
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(_timed_out(timeout_s, message, value))
        await asyncio.sleep(every_s)


def _timed_out(timeout_s: float, message: Callable[[Any], str] | str, value: Any) -> str:
    return f"timed out after {timeout_s:g} s: {message(value) if callable(message) else message}"
