"""Match predicates over a ModelRequest. They combine with `&`, `|` and `~`; a match yields captures.

`match(request)` returns None for no match, or a dict of captures (possibly empty). Regex named groups
become captures; `&` merges both sides' captures, `|` keeps the first side that matched.

This module is the DSL: one function per matcher. The matchers themselves are values
(`matcher_base.py`: the base and combinators; `predicates.py`: fields and counts; `text_matchers.py`:
texts and headers), each known by the data it was built from.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal, get_args

from ..errors import RuleError
from ..model import ModelRequest
from .derived import tool_rounds as tool_rounds
from .matcher_base import NO_CAPTURES as NO_CAPTURES
from .matcher_base import All, Always, Any_, Matcher, Not, Where
from .matcher_base import Captures as Captures
from .matcher_base import as_matcher as as_matcher
from .predicates import (
    Api,
    Count,
    HasToolResult,
    HasTools,
    Model,
    PreviousToolCall,
    ToolChoiceIs,
    ToolNamed,
    WantsReasoning,
    WantsSchema,
)
from .text_matchers import Header, TextMatcher, TextTest

__all__ = [
    "All",
    "Always",
    "Any_",
    "Matcher",
    "Model",
    "Not",
    "always",
    "any_message",
    "api",
    "as_matcher",
    "has_tool_result",
    "has_tools",
    "header",
    "last_user",
    "model",
    "previous_tool_call",
    "round",
    "system",
    "tool_choice",
    "tool_named",
    "tool_result",
    "turn",
    "wants_reasoning",
    "wants_schema",
    "where",
]


def where(fn: Callable[[ModelRequest], Any]) -> Matcher:
    return Where(fn)


def always() -> Matcher:
    return Always()


def last_user(
    contains: str | None = None,
    *,
    regex: str | None = None,
    equals: str | None = None,
    glob: str | None = None,
    case_sensitive: bool = False,
) -> Matcher:
    """The last user message. No argument: there is a user message."""
    t = _text_test("last_user", contains, regex, equals, glob, case_sensitive)
    return TextMatcher("last_user", t)


def system(
    contains: str | None = None,
    *,
    regex: str | None = None,
    equals: str | None = None,
    glob: str | None = None,
    case_sensitive: bool = False,
) -> Matcher:
    """The system/developer instructions, joined."""
    t = TextTest(
        contains=contains, regex=regex, equals=equals, glob=glob, case_sensitive=case_sensitive, what="system"
    )
    return TextMatcher("system", t)


def any_message(
    contains: str | None = None,
    *,
    regex: str | None = None,
    equals: str | None = None,
    glob: str | None = None,
    role: str | None = None,
    case_sensitive: bool = False,
) -> Matcher:
    """Any message (of `role`, if given); the first that passes supplies the captures."""
    if role is not None and role not in _ROLES:
        from ..errors import UnknownNameError

        raise UnknownNameError("message role", role, _ROLES)
    t = _text_test("any_message", contains, regex, equals, glob, case_sensitive)
    return TextMatcher("any_message", t, role=role)


_ROLES = ("system", "developer", "user", "assistant", "tool")


def _text_test(
    what: str, contains: str | None, regex: str | None, equals: str | None, glob: str | None, case: bool
) -> TextTest:
    return TextTest(contains=contains, regex=regex, equals=equals, glob=glob, case_sensitive=case, what=what)


def model(pattern: str) -> Matcher:
    """The model name, exactly or as a glob (`gpt-4o*`)."""
    return Model(pattern)


ApiName = Literal[
    "chat", "responses", "messages", "embeddings", "gemini", "ollama", "cohere", "bedrock", "python"
]
_APIS: tuple[ApiName, ...] = get_args(ApiName)


def api(*kinds: ApiName) -> Matcher:
    if not kinds:
        raise RuleError(f"api: name at least one of {', '.join(map(repr, _APIS))}")
    for k in kinds:
        if k not in _APIS:
            from ..errors import UnknownNameError

            raise UnknownNameError("api", k, _APIS)
    return Api(tuple(kinds))


def has_tools(*names: str) -> Matcher:
    """Tools are declared (all of `names`, if given)."""
    return HasTools(tuple(names))


def tool_named(name: str) -> Matcher:
    """A tool of this name (glob allowed) is declared."""
    return ToolNamed(name)


def tool_choice(mode: str, name: str | None = None) -> Matcher:
    if mode not in ("auto", "none", "required", "named"):
        from ..errors import UnknownNameError

        raise UnknownNameError("tool_choice mode", mode, ("auto", "none", "required", "named"))
    return ToolChoiceIs(mode, name)


def has_tool_result(name: str | None = None, *, last: bool = False) -> Matcher:
    """A tool result in the current turn (answering tool `name`, if given; the last message, if `last`)."""
    return HasToolResult(name, last)


def previous_tool_call(name: str | None = None) -> Matcher:
    """The assistant's latest message in the current turn called a tool (named `name`, if given)."""
    return PreviousToolCall(name)


def turn(eq: int | None = None, *, min: int | None = None, max: int | None = None) -> Matcher:
    """The 1-based user turn being answered (the count of user messages)."""
    return _count_matcher("turn", eq, min, max)


def _count_matcher(fname: str, eq: int | None, min: int | None, max: int | None) -> Matcher:
    """A matcher on a count of the request: exactly `eq`, or within `min`..`max`; every argument checked
    when built, so `{turn: {min: 2, max: 1}}` is an error in the rule file, not a rule that never matches."""
    from .._validation import whole as _whole

    if eq is None and min is None and max is None:
        raise RuleError(f"{fname}: give eq, min= or max=")
    for what, v in (("eq", eq), ("min", min), ("max", max)):
        if v is not None:
            _whole(f"{fname}: {what}", v, lo=0)
    if eq is not None and (min is not None or max is not None):
        raise RuleError(f"{fname}: give eq or min=/max=, not both")
    if min is not None and max is not None and min > max:
        raise RuleError(f"{fname}: min must be <= max, got min={min} and max={max}")
    return Count(fname, eq, min, max)


def header(name: str, value: str | None = None, *, regex: str | None = None) -> Matcher:
    """A request header is present (equal to `value`, or matching `regex`; names are case-insensitive)."""
    return Header(name, value, regex=regex)


def wants_schema(name: str | None = None) -> Matcher:
    """Structured output is requested (a json_schema named `name`, if given; json_object counts too)."""
    return WantsSchema(name)


def wants_reasoning() -> Matcher:
    return WantsReasoning()


# -- turn-aware matchers for agent loops (added with the rule-file loader) --


def tool_round(eq: int | None = None, *, min: int | None = None, max: int | None = None) -> Matcher:
    """The tool round of the current turn: 0 before any tool call, n after n rounds of tool calls.

    Parallel calls are one round. The DSL and rule files call it `round`. (`tool_rounds(request)`, the
    count itself, is a helper for templates and scripts, not a matcher, so not in `__all__`.)
    """
    return _count_matcher("round", eq, min, max)


def tool_result(
    name: str | None = None,
    contains: str | None = None,
    *,
    regex: str | None = None,
    equals: str | None = None,
    glob: str | None = None,
    case_sensitive: bool = False,
) -> Matcher:
    """A tool result of the current turn (answering tool `name`, if given) whose content passes the
    test; the latest such result is tested first, and regex named groups become captures."""
    t = _text_test("tool_result", contains, regex, equals, glob, case_sensitive)
    return TextMatcher("tool_result", t, name=name)


# The DSL calls the matcher `round`, but a module-level `round` would shadow the builtin for every function
# here. So the function is `tool_round`, and `matchers.round` (attribute access, `from … import round`,
# `import *`, rule files) is resolved on demand; type checkers see a plain alias.
if TYPE_CHECKING:
    round = tool_round
else:

    def __getattr__(name: str) -> Any:
        if name == "round":
            return tool_round
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# `canonical(digest)` lives with the canonical form it digests (`synthgpt record` writes these matchers);
# imported last, as it builds on the Matcher above
from .canonical import canonical  # noqa: E402

__all__ += ["canonical"]
