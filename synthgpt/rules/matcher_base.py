"""The Matcher base and its combinators (`&`, `|`, `~`), `where` and `always`.

A matcher is a value: `identity` (its type and the data it was built from) drives `==` and `hash`, and
the rule-file lint, `/v1/models` and the dispatch index read its data, never its repr. `match(request)`
returns None for no match, or the captures (possibly none). A match without captures returns the shared
`NO_CAPTURES`, which nobody may change: the dispatch copies the answering rule's captures once.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

from ..errors import RuleError
from ..model import ModelRequest

__all__ = ["NO_CAPTURES", "All", "Always", "Any_", "Captures", "Matcher", "Not", "Where", "as_matcher"]

Captures = dict[str, str]
NO_CAPTURES: Captures = MappingProxyType({})  # type: ignore[assignment]  # read-only: shared by every match
"""What a match without captures returns: no dict is made per predicate per request."""


class Matcher:
    """Base of every matcher. Subclasses implement `match`, `identity` and `__repr__` (the expression that
    built them)."""

    __slots__ = ()

    def match(self, request: ModelRequest) -> Captures | None:
        raise NotImplementedError  # pragma: no cover - abstract

    def __call__(self, request: ModelRequest | Mapping[str, Any]) -> bool:
        """Whether the request (or a plain dict of one, as `ModelRequest.from_dict` takes) matches."""
        if not isinstance(request, ModelRequest):
            request = ModelRequest.from_dict(request)
        return self.match(request) is not None

    def __and__(self, other: Any) -> Matcher:
        return All(self, as_matcher(other))

    def __rand__(self, other: Any) -> Matcher:
        return All(as_matcher(other), self)

    def __or__(self, other: Any) -> Matcher:
        return Any_(self, as_matcher(other))

    def __ror__(self, other: Any) -> Matcher:
        return Any_(as_matcher(other), self)

    def __invert__(self) -> Matcher:
        return Not(self)

    @property
    def identity(self) -> tuple[Any, ...]:
        """The matcher as a value: its type and what it was built from. Equal identities match the same
        requests. The built-in matchers all give their data; a subclass that does not override this is
        known by its object alone (two instances are two matchers)."""
        return (type(self), id(self))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Matcher) and self.identity == other.identity

    def __hash__(self) -> int:
        return hash(self.identity)


def as_matcher(value: Any) -> Matcher:
    if isinstance(value, Matcher):
        return value
    if callable(value):
        return Where(value)
    raise RuleError(f"a matcher must be a Matcher or a callable taking the request, got {value!r}")


class All(Matcher):
    __slots__ = ("parts",)
    parts: tuple[Matcher, ...]

    def __init__(self, *parts: Matcher) -> None:
        flat: list[Matcher] = []
        for p in parts:
            flat.extend(p.parts if isinstance(p, All) else [p])
        self.parts = tuple(flat)

    def match(self, request: ModelRequest) -> Captures | None:
        caps: Captures | None = None  # a dict only once some part captured something
        for p in self.parts:
            got = p.match(request)
            if got is None:
                return None
            if got:
                if caps is None:
                    caps = {}
                caps.update(got)
        return NO_CAPTURES if caps is None else caps

    def __repr__(self) -> str:
        return " & ".join(f"({p!r})" if isinstance(p, Any_) else repr(p) for p in self.parts)

    @property
    def identity(self) -> tuple[Any, ...]:
        return (All, tuple(p.identity for p in self.parts))


class Any_(Matcher):
    __slots__ = ("parts",)
    parts: tuple[Matcher, ...]

    def __init__(self, *parts: Matcher) -> None:
        flat: list[Matcher] = []
        for p in parts:
            flat.extend(p.parts if isinstance(p, Any_) else [p])
        self.parts = tuple(flat)

    def match(self, request: ModelRequest) -> Captures | None:
        for p in self.parts:
            got = p.match(request)
            if got is not None:
                return got
        return None

    def __repr__(self) -> str:
        return " | ".join(map(repr, self.parts))

    @property
    def identity(self) -> tuple[Any, ...]:
        return (Any_, tuple(p.identity for p in self.parts))


class Not(Matcher):
    __slots__ = ("inner",)

    def __init__(self, inner: Matcher) -> None:
        self.inner = inner

    def match(self, request: ModelRequest) -> Captures | None:
        return NO_CAPTURES if self.inner.match(request) is None else None

    def __repr__(self) -> str:
        inner = repr(self.inner)
        return f"~({inner})" if isinstance(self.inner, All | Any_) else f"~{inner}"

    @property
    def identity(self) -> tuple[Any, ...]:
        return (Not, self.inner.identity)


class Where(Matcher):
    """Any callable: truthy => match; a Mapping result also supplies captures."""

    __slots__ = ("fn",)

    def __init__(self, fn: Callable[[ModelRequest], Any]) -> None:
        self.fn = fn

    def match(self, request: ModelRequest) -> Captures | None:
        got = self.fn(request)
        if isinstance(got, Mapping):
            return {str(k): str(v) for k, v in got.items()}
        return NO_CAPTURES if got else None

    def __repr__(self) -> str:
        return f"where({getattr(self.fn, '__qualname__', None) or repr(self.fn)})"

    @property
    def identity(self) -> tuple[Any, ...]:
        return (Where, self.fn)  # the function itself: two lambdas of one name are two matchers


class Always(Matcher):
    """Every request."""

    __slots__ = ()

    def match(self, request: ModelRequest) -> Captures | None:
        return NO_CAPTURES

    def __repr__(self) -> str:
        return "always()"

    @property
    def identity(self) -> tuple[Any, ...]:
        return (Always,)
