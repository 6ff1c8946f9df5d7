"""Whether Poolscope may change a variable with SET GLOBAL: only the settable ones of
poolscope/variables.py (dynamic, understood, and cheap to revert).

Anything else is refused before a connection is opened. A target can narrow this further with
`apply_variables`; it can never widen it.
"""

from __future__ import annotations

import re

from poolscope.config import TargetConfig
from poolscope.errors import DomainError, NotAllowed, NotConfigured
from poolscope.variables import SETTABLE

# Identifiers are spliced into SQL (a variable name cannot be a bound parameter), so besides
# being on the list they must also be plain lower-case words.
_IDENTIFIER = re.compile(r"[a-z][a-z0-9_]{0,63}")


def refused(target: TargetConfig, variable: str) -> DomainError | None:
    """The error refusing a change of `variable` on `target`, or None when it may be changed."""
    if not target.apply_enabled:
        return NotConfigured(f"applying is not configured for {target.name}: set admin_dsn on the target")
    if not _IDENTIFIER.fullmatch(variable) or variable not in SETTABLE:
        return NotAllowed("this variable is not on the allow-list of variables Poolscope may change")
    if target.apply_variables is not None and variable not in target.apply_variables:
        return NotAllowed(f"{variable} is not in apply_variables for {target.name}")
    return None


def refusal(target: TargetConfig, variable: str) -> str | None:
    """Why `variable` may not be changed on `target`, or None when it may."""
    error = refused(target, variable)
    return None if error is None else error.detail
