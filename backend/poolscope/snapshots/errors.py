"""What a snapshot import or report can be refused with; the message is shown to the user as it is."""

from __future__ import annotations

from poolscope.errors import InvalidInput


class DocumentRefused(InvalidInput):
    """A document that cannot be imported or read back; the message says why (answered with 422).

    Raised in a worker process: one message argument, so it pickles back to the backend as it is.
    """
