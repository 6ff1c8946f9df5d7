"""What a request can fail with, in the domain's own words: plain exceptions whose message is shown
to the user as it is. api/errors.py is the one place that turns each kind into an HTTP answer."""

from __future__ import annotations


class DomainError(Exception):
    """A request that cannot be served; `detail` says why, in words a user can act on."""

    def __init__(self, detail: str, *, audit_id: int | None = None) -> None:
        super().__init__(detail)
        self.detail = detail
        # The audit entry of a change attempt that reached the server (and failed there).
        self.audit_id = audit_id


class NotConfigured(DomainError):
    """The feature is off for this target until configured (e.g. applying without admin_dsn)."""


class NotAllowed(DomainError):
    """Refused by policy whatever the server says (e.g. a variable off the allow-list)."""


class InvalidInput(DomainError):
    """The input itself is unacceptable: out of range, unknown, malformed, or not a valid document."""


class NotFound(DomainError):
    """The thing asked for does not exist (here, or any more)."""


class Conflict(DomainError):
    """Refused because of the current state (already that value, changed since, nothing to do yet)."""


class Unavailable(DomainError):
    """Poolscope cannot serve it right now (busy, starting, a worker died); worth retrying later."""

    def __init__(self, detail: str, *, retry_after_s: int | None = None) -> None:
        super().__init__(detail)
        self.retry_after_s = retry_after_s


class ServerFailed(DomainError):
    """The monitored server refused or could not be reached."""


class ServerTimeout(DomainError):
    """The monitored server did not answer in time."""
