"""The matchers over one field or count of a request: `model`, `api`, tools, tool choice and results,
`turn`, `round`, structured output and reasoning. Each is a value (its data is its identity) whose repr is
the expression that built it."""

from __future__ import annotations

import fnmatch
from collections.abc import Callable
from typing import Any, ClassVar

from ..model import ModelRequest
from .derived import tool_rounds
from .matcher_base import NO_CAPTURES, Captures, Matcher

__all__ = [
    "Api",
    "Count",
    "HasToolResult",
    "HasTools",
    "Model",
    "PreviousToolCall",
    "ToolChoiceIs",
    "ToolNamed",
    "WantsReasoning",
    "WantsSchema",
]


def _args(*shown: str | None) -> str:
    return ", ".join(a for a in shown if a)


class Model(Matcher):
    """The model name, exactly or as a glob (`gpt-4o*`, then `glob` is true)."""

    __slots__ = ("glob", "pattern")

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self.glob = any(c in pattern for c in "*?[")

    def match(self, request: ModelRequest) -> Captures | None:
        if self.glob:
            return NO_CAPTURES if fnmatch.fnmatchcase(request.model, self.pattern) else None
        return NO_CAPTURES if request.model == self.pattern else None

    def __repr__(self) -> str:
        return f"model({self.pattern!r})"

    @property
    def identity(self) -> tuple[Any, ...]:
        return (Model, self.pattern)


class Api(Matcher):
    """The API the request came through is one of `kinds`."""

    __slots__ = ("kinds",)

    def __init__(self, kinds: tuple[str, ...]) -> None:
        self.kinds = kinds

    def match(self, request: ModelRequest) -> Captures | None:
        return NO_CAPTURES if request.api in self.kinds else None

    def __repr__(self) -> str:
        return f"api({', '.join(map(repr, self.kinds))})"

    @property
    def identity(self) -> tuple[Any, ...]:
        return (Api, frozenset(self.kinds))


class HasTools(Matcher):
    """Tools are declared (all of `names`, if any)."""

    __slots__ = ("names",)

    def __init__(self, names: tuple[str, ...]) -> None:
        self.names = names

    def match(self, request: ModelRequest) -> Captures | None:
        names = self.names
        ok = all(request.tool(n) is not None for n in names) if names else bool(request.tools)
        return NO_CAPTURES if ok else None

    def __repr__(self) -> str:
        return f"has_tools({', '.join(map(repr, self.names))})"

    @property
    def identity(self) -> tuple[Any, ...]:
        return (HasTools, frozenset(self.names))


class ToolNamed(Matcher):
    """A tool of this name (glob allowed) is declared."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def match(self, request: ModelRequest) -> Captures | None:
        name = self.name
        return NO_CAPTURES if any(fnmatch.fnmatchcase(t.name, name) for t in request.tools) else None

    def __repr__(self) -> str:
        return f"tool_named({self.name!r})"

    @property
    def identity(self) -> tuple[Any, ...]:
        return (ToolNamed, self.name)


class ToolChoiceIs(Matcher):
    """The request's tool choice is `mode` (and names tool `name`, if given)."""

    __slots__ = ("mode", "name")

    def __init__(self, mode: str, name: str | None) -> None:
        self.mode = mode
        self.name = name

    def match(self, request: ModelRequest) -> Captures | None:
        choice = request.tool_choice
        ok = choice.mode == self.mode and (self.name is None or choice.name == self.name)
        return NO_CAPTURES if ok else None

    def __repr__(self) -> str:
        return f"tool_choice({self.mode!r}{'' if self.name is None else f', {self.name!r}'})"

    @property
    def identity(self) -> tuple[Any, ...]:
        return (ToolChoiceIs, self.mode, self.name)


class HasToolResult(Matcher):
    """A tool result in the current turn (answering tool `name`, if given; the last message, if `last`)."""

    __slots__ = ("last", "name")

    def __init__(self, name: str | None, last: bool) -> None:
        self.name = name
        self.last = last

    def match(self, request: ModelRequest) -> Captures | None:
        if self.last:
            if not request.ends_with_tool_result:
                return None
            results: tuple[Any, ...] = (request.messages[-1],)
        else:
            results = request.tool_results
        if self.name is None:
            return NO_CAPTURES if results else None
        name = self.name
        return NO_CAPTURES if any(request.tool_result_name(m) == name for m in results) else None

    def __repr__(self) -> str:
        shown = _args(repr(self.name) if self.name else None, "last=True" if self.last else None)
        return f"has_tool_result({shown})"

    @property
    def identity(self) -> tuple[Any, ...]:
        return (HasToolResult, self.name, self.last)


class PreviousToolCall(Matcher):
    """The assistant's latest message in the current turn called a tool (named `name`, if given)."""

    __slots__ = ("name",)

    def __init__(self, name: str | None) -> None:
        self.name = name

    def match(self, request: ModelRequest) -> Captures | None:
        for m in reversed(request.current_turn):
            if m.role == "assistant" and m.tool_calls:
                ok = self.name is None or any(tc.name == self.name for tc in m.tool_calls)
                return NO_CAPTURES if ok else None
        return None

    def __repr__(self) -> str:
        return f"previous_tool_call({'' if self.name is None else repr(self.name)})"

    @property
    def identity(self) -> tuple[Any, ...]:
        return (PreviousToolCall, self.name)


def _user_turn(request: ModelRequest) -> int:
    return request.turn


class Count(Matcher):
    """A count of the request (`turn`: user messages; `round`: the current turn's tool rounds) is `eq`, or
    within `min`..`max`. Checked when built (`matchers._count_matcher`)."""

    __slots__ = ("eq", "max", "min", "what")

    COUNTS: ClassVar[dict[str, Callable[[ModelRequest], int]]] = {"turn": _user_turn, "round": tool_rounds}

    def __init__(self, what: str, eq: int | None, min: int | None, max: int | None) -> None:
        self.what = what
        self.eq = eq
        self.min = min
        self.max = max

    def match(self, request: ModelRequest) -> Captures | None:
        n = self.COUNTS[self.what](request)
        eq, lo, hi = self.eq, self.min, self.max
        ok = (eq is None or n == eq) and (lo is None or n >= lo) and (hi is None or n <= hi)
        return NO_CAPTURES if ok else None

    def __repr__(self) -> str:
        bits = [str(self.eq)] if self.eq is not None else []
        bits += [f"min={self.min}"] if self.min is not None else []
        bits += [f"max={self.max}"] if self.max is not None else []
        return f"{self.what}({', '.join(bits)})"

    @property
    def identity(self) -> tuple[Any, ...]:
        return (Count, self.what, self.eq, self.min, self.max)


class WantsSchema(Matcher):
    """Structured output is requested (a json_schema named `name`, if given; json_object counts too)."""

    __slots__ = ("name",)

    def __init__(self, name: str | None) -> None:
        self.name = name

    def match(self, request: ModelRequest) -> Captures | None:
        rs = request.response_schema
        return NO_CAPTURES if rs is not None and (self.name is None or rs.name == self.name) else None

    def __repr__(self) -> str:
        return f"wants_schema({'' if self.name is None else repr(self.name)})"

    @property
    def identity(self) -> tuple[Any, ...]:
        return (WantsSchema, self.name)


class WantsReasoning(Matcher):
    """The request asks for reasoning."""

    __slots__ = ()

    def match(self, request: ModelRequest) -> Captures | None:
        return NO_CAPTURES if request.reasoning is not None else None

    def __repr__(self) -> str:
        return "wants_reasoning()"

    @property
    def identity(self) -> tuple[Any, ...]:
        return (WantsReasoning,)
