"""Models made again only when their values change: the per-target reuse of deriving a poll."""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel

ModelT = TypeVar("ModelT", bound=BaseModel)


class LastMade:
    """The last model of each kind derived for one target, handed out again while its values are
    the same: an idle server's figures repeat poll after poll, and validating a model costs more
    than comparing its values. Nothing edits these models once made (a state is read, encoded and
    stored as it is; tests/poller/test_derive_reuse.py), so a reused one is what a new one would be.
    """

    __slots__ = ("_last",)

    def __init__(self) -> None:
        self._last: dict[type[BaseModel], tuple[tuple[Any, ...], BaseModel]] = {}

    def get(self, model_type: type[ModelT], /, **values: Any) -> ModelT:
        """`model_type(**values)`, or the one made last when made of the same fields and values."""
        key = tuple(values.items())
        last = self._last.get(model_type)
        if last is not None and last[0] == key:
            return last[1]  # type: ignore[return-value]
        model = model_type(**values)
        self._last[model_type] = (key, model)
        return model

    def forget(self) -> None:
        self._last.clear()
