"""Matchers over the texts of a request: `last_user`, `system`, `any_message`, `tool_result`, `header`.

Each holds the data it was built from (which text, the test, the role or tool name) and tests the text in
place: no list of candidate texts is built per request, and a case-insensitive test lowers its needle once
and each text once per request (`derived.lowered`).
"""

from __future__ import annotations

import fnmatch
from typing import Any

from ..errors import RuleError
from ..linear_regex import compile_rule_regex
from ..model import ModelRequest
from .derived import last_user_message, lowered
from .matcher_base import NO_CAPTURES, Captures, Matcher

__all__ = ["Header", "TextMatcher", "TextTest"]


class TextTest:
    """One of contains / regex / equals / glob over a text; regex named groups become captures."""

    __slots__ = ("_needle", "case", "contains", "equals", "glob", "regex")

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
        # what the text is compared with, prepared once: lowered unless case-sensitive, stripped for equals
        needle = contains if contains is not None else equals.strip() if equals is not None else glob
        self._needle = needle if needle is None or case_sensitive else needle.lower()

    def test(self, text: str) -> Captures | None:
        needle = self._needle
        if needle is not None:
            if not self.case:
                text = lowered(text)
            if self.contains is not None:
                return NO_CAPTURES if needle in text else None
            if self.equals is not None:
                return NO_CAPTURES if text.strip() == needle else None
            return NO_CAPTURES if fnmatch.fnmatchcase(text, needle) else None
        if self.regex is not None:
            return self.regex.search(text)
        return NO_CAPTURES

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


TextSource = str
"""Which texts a TextMatcher tests: `last_user`, `system`, `any_message` or `tool_result`."""


class TextMatcher(Matcher):
    """A test over one kind of text of the request: the last user message, the system instructions, any
    message (of `role`), or the current turn's tool results (answering tool `name`), latest first."""

    __slots__ = ("name", "role", "source", "test")

    def __init__(self, source: TextSource, test: TextTest, *, role: str | None = None,
                 name: str | None = None) -> None:  # fmt: skip
        self.source = source
        self.test = test
        self.role = role
        self.name = name

    def match(self, request: ModelRequest) -> Captures | None:
        source, test = self.source, self.test.test
        if source == "last_user":
            text = last_user_message(request)
            return None if text is None else test(text)
        if source == "system":
            joined = request.system
            return test(joined) if joined else None
        if source == "any_message":
            role = self.role
            for m in request.messages:
                if role is None or m.role == role:
                    got = test(m.content)
                    if got is not None:
                        return got
            return None
        name = self.name  # tool_result
        for m in reversed(request.tool_results):
            if name is None or request.tool_result_name(m) == name:
                got = test(m.content)
                if got is not None:
                    return got
        return None

    def __repr__(self) -> str:
        test = repr(self.test)
        if self.source == "any_message" and self.role is not None:
            return f"any_message({', '.join(a for a in (test, f'role={self.role!r}') if a)})"
        if self.source == "tool_result":
            name = "" if self.name is None else repr(self.name)
            return f"tool_result({', '.join(x for x in (name, test) if x)})"
        return f"{self.source}({test})"

    @property
    def identity(self) -> tuple[Any, ...]:
        return (TextMatcher, self.source, self.test.identity, self.role, self.name)


class Header(Matcher):
    """A request header is present (equal to `value`, or matching `regex`; names are case-insensitive)."""

    __slots__ = ("lname", "name", "test", "value")

    def __init__(self, name: str, value: str | None = None, *, regex: str | None = None) -> None:
        given = value is not None or regex is not None  # `header("x", "")` matches an empty value only
        self.test = TextTest(equals=value, regex=regex, case_sensitive=True, what="header") if given else None
        self.name = name
        self.lname = name.lower()
        self.value = value

    def match(self, request: ModelRequest) -> Captures | None:
        v = request.header(self.lname)
        if v is None:
            return None
        return NO_CAPTURES if self.test is None else self.test.test(v)

    def __repr__(self) -> str:
        regex = None if self.test is None or self.test.regex is None else self.test.regex.pattern
        rep = f"header({self.name!r}" + (f", {self.value!r}" if self.value is not None else "")
        return rep + (f", regex={regex!r}" if regex is not None else "") + ")"

    @property
    def identity(self) -> tuple[Any, ...]:
        return (Header, self.lname, None if self.test is None else self.test.identity)
