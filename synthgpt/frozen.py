"""Read-only dicts and lists: what the dict and list fields of synthgpt's frozen models hold.

`synthgpt.model` re-exports these names, where they were first defined.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["FrozenDict", "FrozenList", "deep_freeze"]


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
