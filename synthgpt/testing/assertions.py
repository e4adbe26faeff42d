"""respx-style call assertions over a MockGPT's journal.

    synthgpt.called, synthgpt.call_count, synthgpt.last, synthgpt.calls
    synthgpt.assert_called_with(m.last_user(contains="weather"), model="gpt-4o")
    synthgpt.assert_all_rules_called()

A failed assertion says what was expected and lists what arrived, one line per call, so the reason for a
miss is visible without a debugger.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ..engine import MockGPT
from ..journal import CallRecord
from ..rules.matchers import Matcher, as_matcher

if TYPE_CHECKING:
    from ..journal import CallJournal
    from ..rules.rule import RuleSet

__all__ = ["CallAssertions", "CallList", "SynthGPTFixture", "describe_call", "describe_calls"]

_SHOWN = 20  # calls listed in a failure message; the rest are counted


class CallList(list[CallRecord]):
    """The calls made, oldest first, with respx's conveniences."""

    @property
    def called(self) -> bool:
        return bool(self)

    @property
    def call_count(self) -> int:
        return len(self)

    @property
    def last(self) -> CallRecord:
        if not self:
            raise AssertionError("no call arrived, so there is no last call")
        return self[-1]


def describe_call(record: CallRecord) -> str:
    return f"#{record.index} rule={record.rule!r} {record.request.summary()}"


def describe_calls(records: Iterable[CallRecord]) -> str:
    items = list(records)
    if not items:
        return "  (no call arrived)"
    lines = [f"  {describe_call(r)}" for r in items[-_SHOWN:]]
    if len(items) > _SHOWN:
        lines.insert(0, f"  … {len(items) - _SHOWN} earlier calls not shown")
    return "\n".join(lines)


class _Expectation:
    """A matcher over the request plus exact/glob checks of the record's rule, api and model."""

    def __init__(self, matcher: Matcher | Any | None, fields: dict[str, str]) -> None:
        unknown = sorted(set(fields) - {"rule", "api", "model"})
        if unknown:
            raise TypeError(f"unknown field(s) {', '.join(unknown)}: use rule=, api=, model= or a matcher")
        self.matcher = None if matcher is None else as_matcher(matcher)
        self.fields = fields

    def __call__(self, record: CallRecord) -> bool:
        for name, pattern in self.fields.items():
            if not fnmatch.fnmatchcase(str(getattr(record, name)), pattern):
                return False
        return self.matcher is None or self.matcher.match(record.request) is not None

    def __repr__(self) -> str:
        bits = [] if self.matcher is None else [repr(self.matcher)]
        bits += [f"{k}={v!r}" for k, v in self.fields.items()]
        return " & ".join(bits) or "any call"


class CallAssertions:
    """Mixed into an object with a `journal` and `rules` (a MockGPT)."""

    journal: CallJournal
    rules: RuleSet

    @property
    def calls(self) -> CallList:
        return CallList(self.journal.list())

    @property
    def called(self) -> bool:
        return len(self.journal) > 0

    @property
    def call_count(self) -> int:
        """Calls in the journal (it is bounded: `MockGPT(journal_size=…)`, 1000 by default)."""
        return len(self.journal)

    @property
    def last(self) -> CallRecord:
        # the newest record alone: the journal keeps its records packed, and each read rebuilds one
        return CallList(self.journal.query(offset=max(len(self.journal) - 1, 0))).last

    def assert_called(self) -> None:
        if not self.journal.list():
            raise AssertionError("expected at least one call, but no call arrived")

    def assert_not_called(self) -> None:
        calls = self.calls
        if calls:
            raise AssertionError(f"expected no call, but {len(calls)} arrived:\n{describe_calls(calls)}")

    def assert_call_count(self, n: int) -> None:
        calls = self.calls
        if len(calls) != n:
            raise AssertionError(f"expected {n} call(s), got {len(calls)}:\n{describe_calls(calls)}")

    def assert_called_once(self) -> CallRecord:
        self.assert_call_count(1)
        return self.calls[0]

    def assert_called_with(self, matcher: Matcher | Any | None = None, **fields: str) -> CallRecord:
        """The LAST call matches `matcher` (a synthgpt matcher or a callable on the ModelRequest) and the
        `rule=`/`api=`/`model=` patterns (fnmatch globs). Returns that call."""
        expect = _Expectation(matcher, fields)
        calls = self.calls
        if not calls:
            raise AssertionError(f"expected the last call to match {expect!r}, but no call arrived")
        if not expect(calls[-1]):
            raise AssertionError(
                f"expected the last call to match {expect!r}\n"
                f"but the last call was:\n  {describe_call(calls[-1])}\n"
                f"calls that arrived ({len(calls)}):\n{describe_calls(calls)}"
            )
        return calls[-1]

    def assert_any_call(self, matcher: Matcher | Any | None = None, **fields: str) -> CallRecord:
        """Some call matches; returns the first one that does."""
        expect = _Expectation(matcher, fields)
        calls = self.calls
        for record in calls:
            if expect(record):
                return record
        raise AssertionError(
            f"expected a call matching {expect!r}, but none did\n"
            f"calls that arrived ({len(calls)}):\n{describe_calls(calls)}"
        )

    def assert_all_rules_called(self) -> None:
        """Every rule answered at least once: a rule never used is usually a matcher that never matches."""
        missing = [r for r in self.rules if not r.called]
        if missing:
            lines = "\n".join(f"  - {r.name}: {r.matcher!r}" for r in missing)
            raise AssertionError(
                f"rules never called ({len(missing)} of {len(self.rules)}):\n{lines}\n"
                f"calls that arrived ({len(self.calls)}):\n{describe_calls(self.calls)}"
            )


class SynthGPTFixture(CallAssertions, MockGPT):
    """A MockGPT with the call assertions: what the `synthgpt` pytest fixture gives a test."""

    def __repr__(self) -> str:
        return "SynthGPTFixture" + super().__repr__().removeprefix("MockGPT")
