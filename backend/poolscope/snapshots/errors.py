"""What a snapshot request can fail with; the message is shown to the user as it is."""

from __future__ import annotations


class SnapshotError(Exception):
    """A snapshot request that cannot be served, with its HTTP status (and headers, e.g. Retry-After)."""

    def __init__(self, message: str, status: int = 400, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.headers = headers


class DocumentRefused(Exception):
    """A document that cannot be imported or read back; the message says why (answered with 422).

    Raised in a worker process: one message argument, so it pickles back to the backend as it is.
    """
