"""One RE2 pass per request over the last user message, for the rules that need a text or regex in it.

With thousands of rules of the form `last_user: {contains: …}` or `{regex: …}` (alone, as a part of an
`all`, or an `any` of them), a request that none of them matches asked every one: ~4 µs per
case-insensitive regex (no literal to rule RE2 out) and ~2 µs per text, 48 ms per request for
bench/rule_scale.py's 20,000 rules (7 ms with the index). Here each distinct
such test is added to an RE2 set when the rules are compiled, and one `Match` per set per request tells
which of them pass; a rule whose test did not pass is not asked. The answer is the one asking every rule
gives: each set runs its tests exactly as the rule would (the same translated pattern and case option for
a regex; for a text, the same bytes: the needle, lowered unless case-sensitive, searched as a byte string
in the text's UTF-8, lowered likewise).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..model import ModelRequest
from .derived import last_user_message, lowered
from .matcher_base import All, Any_, Matcher
from .text_matchers import TextMatcher, TextTest

if TYPE_CHECKING:
    from .rule import Rule

__all__ = ["MAX_INDEXED_BYTES", "MIN_INDEXED", "TextIndex"]

MIN_INDEXED = 16
"""Fewer such rules are asked one by one: a set's pass costs about what a few tests do."""
MAX_INDEXED_BYTES = 16 * 1024
"""A text or pattern longer than this is not indexed (its rule is asked one by one): RE2 compiles a set
within a memory budget that a test of a few hundred kB goes past, failing the whole set."""

_UTF8 = ("utf-8", "surrogatepass")


def _required_tests(matcher: Matcher) -> list[TextTest] | None:
    """Last-user tests the sets can run, one of which every request `matcher` matches passes; None when
    the matcher has no such tests (exact types only: a subclass may match differently)."""
    kind = type(matcher)
    if kind is All:  # every part holds: any one part's tests will do
        return next((t for t in map(_required_tests, matcher.parts) if t is not None), None)  # type: ignore[attr-defined]
    if kind is Any_:  # one part holds: each part needs tests, and any of them may be the one
        found: list[TextTest] = []
        for part in matcher.parts:  # type: ignore[attr-defined]
            tests = _required_tests(part)
            if tests is None:
                return None
            found.extend(tests)
        return found or None
    if kind is not TextMatcher or matcher.source != "last_user":  # type: ignore[attr-defined]
        return None
    test: TextTest = matcher.test  # type: ignore[attr-defined]
    if test.contains:  # (an empty text is in every message)
        return [test]
    if test.contains is None and test.equals is None and test.glob is None and test.regex is not None:
        return [test]
    return None


def _too_long(test: TextTest) -> bool:
    """Whether a test is past what the index takes (`MAX_INDEXED_BYTES`)."""
    if test.contains:
        return len(test.contains.encode(*_UTF8)) > MAX_INDEXED_BYTES
    return test.regex is not None and len(test.regex.compiled_pattern) > MAX_INDEXED_BYTES


class _Set:
    """One RE2 set and the test ids of its patterns."""

    def __init__(self, options: Any) -> None:
        import re2  # type: ignore[import-untyped]  # (no stubs published with the wheel)

        self.set = re2.Set.SearchSet(options)
        self.ids: list[int] = []

    def add(self, pattern: bytes, test_id: int) -> None:
        self.set.Add(pattern)
        self.ids.append(test_id)

    def compile(self) -> bool:
        """Compile the set; False (and the set left empty) when RE2 cannot hold it in its memory budget,
        which a text of a few hundred kB goes past: its tests are then not indexed."""
        import re2

        try:
            self.set.Compile()
        except re2.error:
            self.ids = []
            return False
        return True

    def passing(self, text: bytes, into: set[int]) -> None:
        if self.ids:
            ids = self.ids
            into.update(ids[i] for i in self.set.Match(text) or ())  # (None when nothing matched)


class TextIndex:
    """The last-user tests of a rule list, in four RE2 sets (see the module docstring)."""

    __slots__ = ("_sets", "needs")

    def __init__(self, rules: Sequence[Rule]) -> None:
        import re2

        def options(*, literal: bool, case_sensitive: bool = True) -> Any:
            o = re2.Options()
            o.log_errors = False
            o.case_sensitive = case_sensitive
            if literal:  # a needle's bytes as they are: Latin-1 reads one byte as one character
                o.literal = True
                o.encoding = re2.Options.Encoding.LATIN1
            return o

        exact, folded = _Set(options(literal=True)), _Set(options(literal=True))
        regex_cs, regex_ci = _Set(options(literal=False)), _Set(options(literal=False, case_sensitive=False))
        needs: list[frozenset[int] | None] = []
        ids: dict[tuple[Any, ...], int] = {}  # one pattern per distinct test, however many rules hold it
        for rule in rules:
            tests = _required_tests(rule.matcher)
            if tests is None:
                needs.append(None)
                continue
            if any(_too_long(t) for t in tests):
                needs.append(None)
                continue
            mine = set()
            for test in tests:
                key = test.identity
                test_id = ids.get(key)
                if test_id is None:
                    test_id = ids[key] = len(ids)
                    if test.contains:
                        needle = test.contains if test.case else test.contains.lower()
                        (exact if test.case else folded).add(needle.encode(*_UTF8), test_id)
                    else:
                        assert test.regex is not None
                        (regex_cs if test.case else regex_ci).add(test.regex.compiled_pattern, test_id)
                mine.add(test_id)
            needs.append(frozenset(mine))
        unindexed: set[int] = set()
        for s in (exact, folded, regex_cs, regex_ci):
            held = s.ids
            if held and not s.compile():
                unindexed.update(held)
        if unindexed:  # a rule with a test no set holds is asked whatever the text
            needs = [None if n is not None and not n.isdisjoint(unindexed) else n for n in needs]
        self._sets = (exact, folded, regex_cs, regex_ci)
        self.needs: tuple[frozenset[int] | None, ...] = tuple(needs)
        """Per rule: the ids of the tests one of which it needs to pass, or None (asked whatever the
        text)."""

    @property
    def size(self) -> int:
        return sum(len(s.ids) for s in self._sets)

    def passing(self, request: ModelRequest) -> set[int]:
        """The ids of the tests the request's last user message passes (none without a user message)."""
        found: set[int] = set()
        text = last_user_message(request)
        if text is None:
            return found
        exact, folded, regex_cs, regex_ci = self._sets
        raw = text.encode(*_UTF8)
        exact.passing(raw, found)
        if folded.ids:
            folded.passing(lowered(text).encode(*_UTF8), found)
        regex_cs.passing(raw, found)
        regex_ci.passing(raw, found)
        return found
