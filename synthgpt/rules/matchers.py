"""Match predicates over a ModelRequest. They combine with `&`, `|` and `~`; a match yields captures.

`match(request)` returns None for no match, or a dict of captures (possibly empty). Regex named groups
become captures; `&` merges both sides' captures, `|` keeps the first side that matched.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Literal, get_args

from ..errors import RuleError
from ..linear_regex import compile_rule_regex
from ..model import ModelRequest

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

Captures = dict[str, str]


class Matcher:
    """Base of every matcher. Subclasses implement `match` and `__repr__` (the expression that built them)."""

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
        requests; lint and `/v1/models` read these, never the repr. Matchers built from data override it;
        the rest are known by the expression that built them."""
        return (type(self), repr(self))

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
        caps: Captures = {}
        for p in self.parts:
            got = p.match(request)
            if got is None:
                return None
            caps.update(got)
        return caps

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
        return {} if self.inner.match(request) is None else None

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
        return {} if got else None

    def __repr__(self) -> str:
        return f"where({getattr(self.fn, '__qualname__', None) or repr(self.fn)})"

    @property
    def identity(self) -> tuple[Any, ...]:
        return (Where, self.fn)  # the function itself: two lambdas of one name are two matchers


def where(fn: Callable[[ModelRequest], Any]) -> Matcher:
    return Where(fn)


class Always(Matcher):
    """Every request."""

    __slots__ = ()

    def match(self, request: ModelRequest) -> Captures | None:
        return {}

    def __repr__(self) -> str:
        return "always()"

    @property
    def identity(self) -> tuple[Any, ...]:
        return (Always,)


def always() -> Matcher:
    return Always()


class TextTest:
    """One of contains / regex / equals / glob over a text; regex named groups become captures."""

    __slots__ = ("case", "contains", "equals", "glob", "regex")

    def __init__(
        self,
        *,
        contains: str | None = None,
        regex: str | None = None,
        equals: str | None = None,
        glob: str | None = None,
        case_sensitive: bool = False,
        what: str = "text",
    ) -> None:
        named = (("contains", contains), ("regex", regex), ("equals", equals), ("glob", glob))
        given = [n for n, v in named if v]
        if len(given) > 1:
            raise RuleError(f"{what}: give one of contains=, regex=, equals=, glob=; got {', '.join(given)}")
        self.case = case_sensitive
        self.contains = contains
        self.equals = equals
        self.glob = glob
        self.regex = None if regex is None else compile_rule_regex(regex, ignore_case=not case_sensitive,
                                                                   what=what)  # fmt: skip

    def test(self, text: str) -> Captures | None:
        if self.contains is not None:
            if self.case:
                return {} if self.contains in text else None
            return {} if self.contains.lower() in text.lower() else None
        if self.equals is not None:
            a, b = (text, self.equals) if self.case else (text.lower(), self.equals.lower())
            return {} if a.strip() == b.strip() else None
        if self.glob is not None:
            if self.case:
                ok = fnmatch.fnmatchcase(text, self.glob)
            else:
                ok = fnmatch.fnmatchcase(text.lower(), self.glob.lower())
            return {} if ok else None
        if self.regex is not None:
            return self.regex.search(text)
        return {}

    def __repr__(self) -> str:
        case = "case_sensitive=True" if self.case else ""
        for name in ("contains", "equals", "glob"):
            v = getattr(self, name)
            if v is not None:
                return f"{name}={v!r}" + (f", {case}" if case else "")
        if self.regex is not None:
            return f"regex={self.regex.pattern!r}" + (f", {case}" if case else "")
        return case

    @property
    def identity(self) -> tuple[Any, ...]:
        regex = None if self.regex is None else self.regex.pattern
        return (self.contains, self.equals, self.glob, regex, self.case)


class _TextMatcher(Matcher):
    __slots__ = ("fname", "getter", "test")

    def __init__(self, fname: str, getter: Callable[[ModelRequest], list[str]], test: TextTest) -> None:
        self.fname = fname
        self.getter = getter
        self.test = test

    def match(self, request: ModelRequest) -> Captures | None:
        for text in self.getter(request):
            got = self.test.test(text)
            if got is not None:
                return got
        return None

    def __repr__(self) -> str:
        return f"{self.fname}({self.test!r})"

    @property
    def identity(self) -> tuple[Any, ...]:
        return (_TextMatcher, self.fname, self.test.identity)


def last_user(
    contains: str | None = None,
    *,
    regex: str | None = None,
    equals: str | None = None,
    glob: str | None = None,
    case_sensitive: bool = False,
) -> Matcher:
    """The last user message. No argument: there is a user message."""
    t = TextTest(contains=contains, regex=regex, equals=equals, glob=glob, case_sensitive=case_sensitive,
                 what="last_user")
    return _TextMatcher("last_user", lambda r: [r.last_user] if r.turn else [], t)


def system(
    contains: str | None = None,
    *,
    regex: str | None = None,
    equals: str | None = None,
    glob: str | None = None,
    case_sensitive: bool = False,
) -> Matcher:
    """The system/developer instructions, joined."""
    t = TextTest(contains=contains, regex=regex, equals=equals, glob=glob, case_sensitive=case_sensitive,
                 what="system")
    return _TextMatcher("system", lambda r: [r.system] if r.system else [], t)


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
    t = TextTest(contains=contains, regex=regex, equals=equals, glob=glob, case_sensitive=case_sensitive,
                 what="any_message")
    m = _TextMatcher(
        "any_message", lambda r: [x.content for x in r.messages if role is None or x.role == role], t
    )
    if role is None:
        return m
    args = ", ".join(a for a in (repr(t), f"role={role!r}") if a)
    return _Named(m, f"any_message({args})")


_ROLES = ("system", "developer", "user", "assistant", "tool")


class _Field(Matcher):
    """A matcher over one derived value, with a readable repr."""

    __slots__ = ("pred", "text")

    def __init__(self, text: str, pred: Callable[[ModelRequest], bool]) -> None:
        self.text = text
        self.pred = pred

    def match(self, request: ModelRequest) -> Captures | None:
        return {} if self.pred(request) else None

    def __repr__(self) -> str:
        return self.text


class Model(Matcher):
    """The model name, exactly or as a glob (`gpt-4o*`, then `glob` is true)."""

    __slots__ = ("glob", "pattern")

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self.glob = any(c in pattern for c in "*?[")

    def match(self, request: ModelRequest) -> Captures | None:
        if self.glob:
            return {} if fnmatch.fnmatchcase(request.model, self.pattern) else None
        return {} if request.model == self.pattern else None

    def __repr__(self) -> str:
        return f"model({self.pattern!r})"

    @property
    def identity(self) -> tuple[Any, ...]:
        return (Model, self.pattern)


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
    return _Field(f"api({', '.join(map(repr, kinds))})", lambda r: r.api in kinds)


def has_tools(*names: str) -> Matcher:
    """Tools are declared (all of `names`, if given)."""
    if names:
        return _Field(
            f"has_tools({', '.join(map(repr, names))})",
            lambda r: all(r.tool(n) is not None for n in names),
        )
    return _Field("has_tools()", lambda r: bool(r.tools))


def tool_named(name: str) -> Matcher:
    """A tool of this name (glob allowed) is declared."""
    return _Field(f"tool_named({name!r})", lambda r: any(fnmatch.fnmatchcase(t.name, name) for t in r.tools))


def tool_choice(mode: str, name: str | None = None) -> Matcher:
    if mode not in ("auto", "none", "required", "named"):
        from ..errors import UnknownNameError

        raise UnknownNameError("tool_choice mode", mode, ("auto", "none", "required", "named"))
    return _Field(
        f"tool_choice({mode!r}{'' if name is None else f', {name!r}'})",
        lambda r: r.tool_choice.mode == mode and (name is None or r.tool_choice.name == name),
    )


def has_tool_result(name: str | None = None, *, last: bool = False) -> Matcher:
    """A tool result in the current turn (answering tool `name`, if given; the last message, if `last`)."""

    def pred(r: ModelRequest) -> bool:
        results = r.tool_results
        if last:
            results = (r.messages[-1],) if r.ends_with_tool_result else ()
        if name is None:
            return bool(results)
        return any(r.tool_result_name(m) == name for m in results)

    args = [repr(name)] if name else []
    if last:
        args.append("last=True")
    return _Field(f"has_tool_result({', '.join(args)})", pred)


def previous_tool_call(name: str | None = None) -> Matcher:
    """The assistant's latest message in the current turn called a tool (named `name`, if given)."""

    def pred(r: ModelRequest) -> bool:
        for m in reversed(r.current_turn):
            if m.role == "assistant" and m.tool_calls:
                return name is None or any(tc.name == name for tc in m.tool_calls)
        return False

    return _Field(f"previous_tool_call({'' if name is None else repr(name)})", pred)


def turn(eq: int | None = None, *, min: int | None = None, max: int | None = None) -> Matcher:
    """The 1-based user turn being answered (the count of user messages)."""
    return _count_matcher("turn", lambda r: r.turn, eq, min, max)


def _count_matcher(
    fname: str, count: Callable[[ModelRequest], int], eq: int | None, min: int | None, max: int | None
) -> Matcher:
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

    def pred(r: ModelRequest) -> bool:
        n = count(r)
        return (eq is None or n == eq) and (min is None or n >= min) and (max is None or n <= max)

    bits = [str(eq)] if eq is not None else []
    bits += [f"min={min}"] if min is not None else []
    bits += [f"max={max}"] if max is not None else []
    return _Field(f"{fname}({', '.join(bits)})", pred)


def header(name: str, value: str | None = None, *, regex: str | None = None) -> Matcher:
    """A request header is present (equal to `value`, or matching `regex`; names are case-insensitive)."""
    given = value is not None or regex is not None  # `header("x", "")` matches an empty value only
    t = TextTest(equals=value, regex=regex, case_sensitive=True, what="header") if given else None
    lname = name.lower()

    def pred(r: ModelRequest) -> Captures | None:
        v = r.header(lname)
        if v is None:
            return None
        return {} if t is None else t.test(v)

    m = Where(pred)
    rep = f"header({name!r}" + (f", {value!r}" if value is not None else "")
    rep += (f", regex={regex!r}" if regex is not None else "") + ")"
    return _Named(m, rep)


class _Named(Matcher):
    __slots__ = ("inner", "text")

    def __init__(self, inner: Matcher, text: str) -> None:
        self.inner = inner
        self.text = text

    def match(self, request: ModelRequest) -> Captures | None:
        return self.inner.match(request)

    def __repr__(self) -> str:
        return self.text


def wants_schema(name: str | None = None) -> Matcher:
    """Structured output is requested (a json_schema named `name`, if given; json_object counts too)."""
    return _Field(
        f"wants_schema({'' if name is None else repr(name)})",
        lambda r: r.response_schema is not None and (name is None or r.response_schema.name == name),
    )


def wants_reasoning() -> Matcher:
    return _Field("wants_reasoning()", lambda r: r.reasoning is not None)


# -- turn-aware matchers for agent loops (added with the rule-file loader) --


def tool_rounds(request: ModelRequest) -> int:
    """How many times the assistant called tools in the current turn; parallel calls are one round.

    A helper for `round(…)`, templates and scripts, not a matcher (so not in `__all__`)."""
    rounds = 0
    in_round = False
    for m in request.current_turn:
        calls = m.role == "assistant" and bool(m.tool_calls)
        if calls and not in_round:
            rounds += 1
        in_round = calls or (in_round and m.role == "assistant")
    return rounds


def tool_round(eq: int | None = None, *, min: int | None = None, max: int | None = None) -> Matcher:
    """The tool round of the current turn: 0 before any tool call, n after n rounds of tool calls.

    Parallel calls are one round. The DSL and rule files call it `round`.
    """
    return _count_matcher("round", tool_rounds, eq, min, max)


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
    t = TextTest(contains=contains, regex=regex, equals=equals, glob=glob, case_sensitive=case_sensitive,
                 what="tool_result")

    def texts(r: ModelRequest) -> list[str]:
        return [m.content for m in reversed(r.tool_results) if name is None or r.tool_result_name(m) == name]

    test = repr(t)
    args = ", ".join(x for x in (repr(name) if name is not None else "", test) if x)
    return _Named(_TextMatcher("tool_result", texts, t), f"tool_result({args})")


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
