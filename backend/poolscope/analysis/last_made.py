"""Models made again only when their values change: the per-target reuse of deriving a poll."""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel

ModelT = TypeVar("ModelT", bound=BaseModel)


def value_types(values: tuple[Any, ...]) -> tuple[type, ...]:
    """Compared besides the values: 1 == 1.0 == True, but a model keeps each as given.

    A zero's sign is not compared (0.0 == -0.0): every float these models are made of is a count,
    a rate over a counter's rise or a ratio of two such, none of which comes out as -0.0.
    """
    return tuple(map(type, values))


class LastMade:
    """The last model of each kind derived for one target, handed out again while its values are
    the same: an idle server's figures repeat poll after poll, and validating a model costs more
    than comparing its values. Nothing edits these models once made (a state is read, encoded and
    stored as it is; tests/poller/test_derive_reuse.py), so a reused one is what a new one would be.
    """

    __slots__ = ("_last",)

    def __init__(self) -> None:
        self._last: dict[type[BaseModel], tuple[tuple[str, ...], tuple[Any, ...], tuple[type, ...], Any]] = {}

    def get(self, model_type: type[ModelT], /, **values: Any) -> ModelT:
        """`model_type(**values)`, or the one made last when made of the same fields and values."""
        names, made_of = tuple(values), tuple(values.values())
        last = self._last.get(model_type)
        if last is not None and last[1] == made_of and last[0] == names:
            types = value_types(made_of)
            if last[2] == types:
                model: ModelT = last[3]
                return model
        model = model_type(**values)
        self._last[model_type] = (names, made_of, value_types(made_of), model)
        return model

    def forget(self) -> None:
        self._last.clear()
