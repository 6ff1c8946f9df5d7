"""Models made again only when their values change: the per-target reuse of deriving a poll."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

ModelT = TypeVar("ModelT", bound=BaseModel)
K = TypeVar("K")
V = TypeVar("V")


class LastMade:
    """The last model of each kind derived for one target, handed out again while its values are
    the same: an idle server's figures repeat poll after poll, and validating a model costs more
    than comparing its values. Nothing edits these models once made (a state is read, encoded and
    stored as it is; tests/poller/test_derive_reuse.py), so a reused one is what a new one would be.

    Equal values make equal models: their fields are ints, floats, strings and models, which
    validation converts to the field's type (1, 1.0 and True make the same int field, and the same
    float field). A zero's sign is not compared (0.0 == -0.0): every float they are made of is a
    count, a rate over a counter's rise or a ratio of two such, none of which comes out as -0.0.
    """

    __slots__ = ("_last",)

    def __init__(self) -> None:
        self._last: dict[type[BaseModel], tuple[tuple[str, ...], tuple[Any, ...], Any]] = {}

    def get(self, model_type: type[ModelT], fields: tuple[str, ...], values: tuple[Any, ...]) -> ModelT:
        """`model_type(**dict(zip(fields, values)))`, or the one made last of the same fields and
        values. `fields` is a constant of the caller's: one call site's models are compared."""
        last = self._last.get(model_type)
        if last is not None and last[0] is fields and last[1] == values:
            model: ModelT = last[2]
            return model
        model = model_type(**dict(zip(fields, values, strict=True)))
        self._last[model_type] = (fields, values, model)
        return model

    def forget(self) -> None:
        self._last.clear()


_new = object.__new__
_set = object.__setattr__
_IMMUTABLE = (type(None), bool, int, float, str, tuple, frozenset)


def _build(model_type: type[ModelT], values: dict[str, Any], fields_set: set[str]) -> ModelT:
    """The model with this __dict__ (every field, in their order), as validation leaves it."""
    model: ModelT = _new(model_type)
    _set(model, "__dict__", values)
    _set(model, "__pydantic_fields_set__", fields_set)
    _set(model, "__pydantic_extra__", None)
    _set(model, "__pydantic_private__", None)
    return model


class Unvalidated(Generic[ModelT]):
    """`model_type(**values)` without validation, for the poller's own models made every poll from
    values it made itself, already of their fields' types (a float field given a float, a list
    field a list of that model): what validation would make of them, for a third of its cost.
    The lists and dicts given become the model's own, as
    validation's copies would: the caller passes ones nothing else changes. A field left out gets
    its default, which must be immutable (a default_factory's list would be shared).
    tests/poller/test_unvalidated.py compares each use with validated construction."""

    __slots__ = ("_defaults", "_fields", "_required", "_type")

    def __init__(self, model_type: type[ModelT]) -> None:
        # Skipping validation is only what validation would do for a plain model: one with
        # validators, extra fields or private attributes must be built the validating way.
        hooks = model_type.__pydantic_decorators__
        if (
            hooks.validators
            or hooks.field_validators
            or hooks.model_validators
            or hooks.root_validators
            or model_type.model_config.get("extra") == "allow"
            or model_type.__private_attributes__
        ):
            raise TypeError(f"{model_type.__name__} has validators, extra fields or private attributes")
        defaults: dict[str, Any] = {}
        for name, field in model_type.model_fields.items():
            default = _Required if field.is_required() else field.get_default(call_default_factory=True)
            if not isinstance(default, _IMMUTABLE):
                default = _Required  # required, or a mutable default: the caller must give it
            defaults[name] = default
        # In the fields' order (dict | keeps the left's order), as validation leaves __dict__.
        self._defaults = defaults
        self._fields = defaults.keys()
        self._required = {name for name, default in defaults.items() if default is _Required}
        self._type = model_type

    def maker(self, *names: str) -> Callable[..., ModelT]:
        """`self(**values)` for one call site that always gives these fields, as a function with
        exactly these keyword-only parameters: Python itself refuses a misspelt or missing one, so
        a call builds the model's dict in one literal, without the keyword dict, the merge and the
        check (a dozen statuses a poll)."""
        unknown, missing = sorted(set(names) - self._fields), sorted(self._required - set(names))
        if unknown or missing or len(set(names)) != len(names):
            raise TypeError(f"{self._type.__name__}: unknown {unknown}, missing {missing} in {names}")
        # The function's own names start with "_", which no pydantic field name does.
        scope: dict[str, Any] = {"_build": _build, "_type": self._type}
        items = []
        for index, name in enumerate(self._fields):
            if name in names:
                items.append(f"{name!r}: {name}")
            else:
                scope[f"_default{index}"] = self._defaults[name]
                items.append(f"{name!r}: _default{index}")
        source = (
            f"def make(*, {', '.join(names)}):\n"
            f"    return _build(_type, {{{', '.join(items)}}}, {{{', '.join(map(repr, names))}}})\n"
        )
        exec(source, scope)  # noqa: S102 - field names of a model class, not input
        make: Callable[..., ModelT] = scope["make"]
        return make

    def __call__(self, **values: Any) -> ModelT:
        # A misspelt or missing field would otherwise vanish from the JSON without a word.
        if not (self._required <= values.keys() <= self._fields):
            raise TypeError(
                f"{self._type.__name__}: unknown {sorted(values.keys() - self._fields)}, "
                f"missing {sorted(self._required - values.keys())}"
            )
        return _build(self._type, self._defaults | values, set(values))


class _Required:
    """Marks a field Unvalidated's caller must always give (its default is mutable)."""


class Generations(Generic[K, V]):
    """Values made from their key and never changed once made, shared by every caller that makes
    the same key (samples of the same series and value; summaries of the same figures), bounded
    in two generations: when the newer is full it becomes the older and the oldest is dropped,
    and a key found in the older moves back, so what is still in use survives the keys of values
    that keep changing (a plain clear made every steady value again).

    The hot path is the caller's own `newer.get(key)` (a dict's, in C); recall() on a miss, then
    keep() what it makes."""

    __slots__ = ("newer", "older", "size")

    def __init__(self, size: int) -> None:
        self.size = size
        self.newer: dict[K, V] = {}
        self.older: dict[K, V] = {}

    def recall(self, key: K) -> V | None:
        made = self.older.get(key)
        if made is not None:
            self.keep(key, made)
        return made

    def keep(self, key: K, made: V) -> V:
        self.newer[key] = made
        if len(self.newer) >= self.size:
            self.older, self.newer = self.newer, {}
        return made

    def clear(self) -> None:
        self.newer, self.older = {}, {}
