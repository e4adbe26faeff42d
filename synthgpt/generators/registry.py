"""Every generator by name: the rule-file loader, templates and docs read this one table.

The table is filled by `@registered()` on the public functions of `synthgpt.generators` (the `g.integer`
a Python rule calls is the `integer` a rule file or a template names), so a generator is added in one
place, its documentation is its function's docstring, and this module imports no generator: a leaf that
`template.py` may read without an import cycle.

`answer` and `error` are deliberately absent: they wrap a generator with delivery details rather than
draw a value, and rule files say the same thing with a rule's own `stream:`, `error:` and `output:` keys.
Registering them would also make any one-key mapping `{error: …}` in a rule file's data read as a call.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from ..errors import UnknownNameError

if TYPE_CHECKING:
    from .core import Generator

__all__ = ["REGISTRY", "lookup", "registered"]

REGISTRY: dict[str, Callable[..., Generator[Any]]] = {}
"""Name -> the public function that builds the generator; in name order once `synthgpt.generators` is
imported (every module reading it imports that package first)."""

F = TypeVar("F", bound=Callable[..., Any])


def registered(*aliases: str) -> Callable[[F], F]:
    """Register the decorated public function under its own name and `aliases`."""

    def register(fn: F) -> F:
        for name in (fn.__name__, *aliases):
            if name in REGISTRY:
                raise RuntimeError(f"generator {name!r} registered twice")
            REGISTRY[name] = fn
        return fn

    return register


def sort_registry() -> None:
    """Put the table in name order (what the docs, the schema and the typo hints read)."""
    items = sorted(REGISTRY.items())
    REGISTRY.clear()
    REGISTRY.update(items)


def lookup(name: str) -> Callable[..., Generator[Any]]:
    try:
        return REGISTRY[name]
    except KeyError:
        raise UnknownNameError("generator", name, REGISTRY) from None
