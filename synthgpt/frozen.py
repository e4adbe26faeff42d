"""Read-only dicts and lists: what the dict and list fields of synthgpt's frozen models hold; and the
slot setters that build a frozen dataclass for values already checked (`field_setters`).

`synthgpt.model` re-exports these names, where they were first defined.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import fields
from typing import Any

__all__ = ["FrozenDict", "FrozenList", "deep_freeze", "field_setters"]


def _read_only(self: object, *args: object, **kwargs: object) -> None:
    raise TypeError(
        f"this {type(self).__name__} is read-only: it is part of a frozen synthgpt model "
        "(change a copy: dict(x), list(x))"
    )


class FrozenDict(dict[str, Any]):
    """A dict that refuses to change: what dict fields of outputs hold, so no caller can alter a record.

    Still a `dict` for reading, `json.dumps`, pydantic and equality with plain dicts.
    """

    __slots__ = ()
    __setitem__ = __delitem__ = __ior__ = _read_only  # type: ignore[assignment]
    clear = pop = popitem = setdefault = update = _read_only  # type: ignore[assignment]

    def __reduce__(self) -> tuple[Any, ...]:  # copy, deepcopy and pickle rebuild it whole
        return (FrozenDict, (dict(self),))


class FrozenList(list[Any]):
    """A list that refuses to change (see FrozenDict); it still equals the plain list it was made from."""

    __slots__ = ()
    __setitem__ = __delitem__ = __iadd__ = __imul__ = _read_only  # type: ignore[assignment]
    append = extend = insert = pop = remove = clear = sort = reverse = _read_only

    def __reduce__(self) -> tuple[Any, ...]:
        return (FrozenList, (list(self),))


def deep_freeze(value: Any) -> Any:
    """`value` with every dict and list inside it, at any depth, copied into a FrozenDict / FrozenList."""
    if isinstance(value, Mapping):
        return FrozenDict({k: deep_freeze(v) for k, v in value.items()})
    if isinstance(value, list | tuple):
        return FrozenList(deep_freeze(v) for v in value)
    return value


def field_setters(cls: type, *names: str) -> tuple[Callable[[Any, Any], None], ...]:
    """The slot setters of a frozen slotted dataclass's fields, given in field order: `cls.__new__` and
    these build an instance as its `__init__` does, for values its caller already holds (a frozen
    dataclass's `__init__` sets each field through `object.__setattr__`: a record of ten fields cost ~2 µs
    that way, ~0.7 µs through its slots). No defaults, no `__post_init__`: every field is given. The names
    must be every field, in order, so a field added to the class fails here at import."""
    if tuple(f.name for f in fields(cls)) != names or not getattr(cls, "__slots__", None):
        raise AssertionError(f"frozen.field_setters: {cls.__name__}'s fields changed; update its setters")
    return tuple(getattr(cls, name).__set__ for name in names)
