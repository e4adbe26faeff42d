"""Rules pair a matcher with an answer; a RuleSet picks the first rule that matches."""

from __future__ import annotations

import hashlib
import threading
from collections import deque
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Self, SupportsIndex

from ..errors import NoRuleMatched, RuleError, StateUnavailable, UnknownRuleError
from ..frozen import field_setters
from ..generators.core import Generator, Just, lift
from ..generators.reply import Answer
from ..journal import PackedRecord, record_bytes, unpack
from ..model import Choice, ErrorSpec, ModelRequest, StreamPlan, coerce_spec
from ..profiles import ModelProfile, as_profiles
from .dispatch import Dispatch
from .matchers import Captures, Matcher, as_matcher
from .trace import RuleVerdict, trace_rules

if TYPE_CHECKING:
    from ..journal import CallRecord
    from ..state.base import CallCounter

__all__ = ["Resolved", "Rule", "RuleSet", "UnknownRuleError"]

_KEEP_CALLS = 100  # per-rule history kept for `.calls` / `.last`
edits = 0
"""Bumped whenever a built rule's `matcher` or `times` is set: compiled rule lists (`Dispatch`) follow."""
KEEP_CALLS_BYTES = 16 * 1024 * 1024
"""And at most this much of them (`journal.record_bytes`; the newest call is kept whatever its size): a
hundred answers of megabytes each must not take a server's memory into the GB."""


class Rule:
    """`Rule(name, matcher, answer)`.

    `answer` is a generator (or a plain value: a string, a dict, a Choice, …). `stream` sets the stream
    plan (pacing, faults), `error` answers with an HTTP error instead. `times` limits how many calls the
    rule answers; after that it no longer matches, so the next rule takes over (the one place where
    answers depend on call order). `reasoning="auto"` adds a seeded reasoning part when the request asks
    for reasoning and the answer has none; `True` adds it even when the request does not ask (a model
    that always thinks); `False` never does.
    """

    def __init__(
        self,
        name: str,
        matcher: Matcher | Any,
        answer: Any = None,
        *,
        stream: StreamPlan | dict[str, Any] | None = None,
        error: ErrorSpec | dict[str, Any] | None = None,
        times: int | None = None,
        reasoning: bool | str = "auto",
        source: str | None = None,
    ) -> None:
        if not isinstance(name, str) or not name:
            raise RuleError("a rule needs a non-empty name")
        if answer is None and error is None and not _has_deltas(stream):
            raise RuleError(f"rule {name!r}: give an answer (a generator or a value) or an error")
        if isinstance(answer, Matcher):
            raise RuleError(
                f"rule {name!r}: the answer {answer!r} is a matcher; the order is Rule(name, matcher, answer)"
            )
        if times is not None and times < 1:
            raise RuleError(f"rule {name!r}: times must be >= 1, got {times}")
        if reasoning not in ("auto", True, False):
            raise RuleError(f"rule {name!r}: reasoning must be 'auto', True or False, got {reasoning!r}")
        self.name = name
        self.matcher = as_matcher(matcher)
        self.generator: Generator[Any] = lift(answer) if answer is not None else Just(None)
        self.stream = coerce_spec(StreamPlan, stream, f"rule {name!r}: stream")
        self.error = coerce_spec(ErrorSpec, error, f"rule {name!r}: error")
        self.times = times
        self.reasoning = reasoning
        self.source = source
        """Where the rule was defined (`file:line:col` for rule files)."""
        self._lock = threading.Lock()
        self._count = 0
        self._calls: deque[CallRecord | PackedRecord] = deque()
        self._sizes: deque[int] = deque()
        self._bytes = 0

    @property
    def matcher(self) -> Matcher:
        return self._matcher

    @matcher.setter
    def matcher(self, matcher: Matcher) -> None:
        _edited(self)
        self._matcher = matcher

    @property
    def times(self) -> int | None:
        return self._times

    @times.setter
    def times(self, times: int | None) -> None:
        _edited(self)
        self._times = times

    def adds_reasoning(self, request: ModelRequest) -> bool:
        """Whether an answer without reasoning gets a seeded reasoning part first (errors never do)."""
        return self.reasoning is True or (self.reasoning == "auto" and request.reasoning is not None)

    # -- respx-style call stats --
    @property
    def call_count(self) -> int:
        return self._count

    @property
    def called(self) -> bool:
        return self._count > 0

    @property
    def calls(self) -> list[CallRecord]:
        with self._lock:
            kept = list(self._calls)
        return [unpack(c) for c in kept]

    @property
    def last(self) -> CallRecord | None:
        with self._lock:
            kept = self._calls[-1] if self._calls else None
        return None if kept is None else unpack(kept)

    def _claim(self) -> int | None:
        """Count one call if the rule still has calls left: the 0-based index of this call, else None."""
        with self._lock:
            if self.times is not None and self._count >= self.times:
                return None
            self._count += 1
            return self._count - 1

    def _note(self) -> None:
        """Count one call a shared counter granted (`synthgpt.state`): this process's `call_count`."""
        with self._lock:
            self._count += 1

    def _release(self) -> None:
        """Give back a claimed call whose draw failed: it answered nothing, so it neither counts nor uses
        up a `times` slot. (Under concurrent calls to one rule, a call that overlapped the failed one may
        then share its `call_index` with the next call.)"""
        with self._lock:
            self._count = max(0, self._count - 1)

    def _record(self, record: CallRecord | PackedRecord, size: int = -1) -> None:
        """Keep `record` (live, or packed as the journal keeps it) in this rule's history; `size` is its
        `record_bytes` when the journal worked it out."""
        if size < 0:
            size = record_bytes(record)
        with self._lock:
            calls, sizes = self._calls, self._sizes
            calls.append(record)
            sizes.append(size)
            self._bytes += size
            while len(calls) > _KEEP_CALLS or (self._bytes > KEEP_CALLS_BYTES and len(calls) > 1):
                calls.popleft()
                self._bytes -= sizes.popleft()

    def reset(self) -> None:
        with self._lock:
            self._count = 0
            self._calls.clear()
            self._sizes.clear()
            self._bytes = 0

    def __repr__(self) -> str:
        bits = [repr(self.name), repr(self.matcher), repr(self.generator)]
        # stream/error as dicts of their non-default fields: the form Rule accepts back
        if self.stream is not None:
            bits.append(f"stream={self.stream.model_dump(exclude_defaults=True)!r}")
        if self.error is not None:
            bits.append(f"error={self.error.model_dump(exclude_defaults=True)!r}")
        if self.times is not None:
            bits.append(f"times={self.times}")
        if self.reasoning != "auto":
            bits.append(f"reasoning={self.reasoning!r}")
        return f"Rule({', '.join(bits)})"


def _edited(rule: Rule) -> None:
    global edits
    if "_times" in rule.__dict__:  # a change after the rule was built, not its construction
        edits += 1


@dataclass(frozen=True, slots=True)
class Resolved:
    rule: Rule
    captures: dict[str, str]
    call_index: int
    unshared: StateUnavailable | None = None
    """Set when the shared counter could not be reached and `call_index` is this process's own count:
    the answer may go out only if the draw never reads it (see `MockGPT.resolve`)."""
    order_free: bool = False
    """No rule with `times` at or before this one: which rule answers did not depend on earlier calls."""


_new = object.__new__
_rule, _captures, _call_index, _unshared, _order_free = field_setters(
    Resolved, "rule", "captures", "call_index", "unshared", "order_free"
)


def _resolved(
    rule: Rule, captures: dict[str, str], call_index: int, unshared: StateUnavailable | None, order_free: bool
) -> Resolved:
    """`Resolved(…)` with every field given, built through its slots (`frozen.field_setters`)."""
    resolved: Resolved = _new(Resolved)
    _rule(resolved, rule)
    _captures(resolved, captures)
    _call_index(resolved, call_index)
    _unshared(resolved, unshared)
    _order_free(resolved, order_free)
    return resolved


class _RuleList(list[Rule]):
    """`RuleSet.rules`: a public list, so it may be changed directly; each change bumps `version`, which
    tells the RuleSet to compile its search again."""

    version = 0

    def _changed(self) -> None:
        self.version += 1

    def append(self, rule: Rule) -> None:
        super().append(rule)
        self._changed()

    def extend(self, rules: Iterable[Rule]) -> None:
        super().extend(rules)
        self._changed()

    def insert(self, index: SupportsIndex, rule: Rule) -> None:
        super().insert(index, rule)
        self._changed()

    def pop(self, index: SupportsIndex = -1) -> Rule:
        self._changed()
        return super().pop(index)

    def remove(self, rule: Rule) -> None:
        super().remove(rule)
        self._changed()

    def clear(self) -> None:
        super().clear()
        self._changed()

    def sort(self, *args: Any, **kwargs: Any) -> None:
        super().sort(*args, **kwargs)
        self._changed()

    def reverse(self) -> None:
        super().reverse()
        self._changed()

    def __setitem__(self, index: Any, value: Any) -> None:
        super().__setitem__(index, value)
        self._changed()

    def __delitem__(self, index: Any) -> None:
        super().__delitem__(index)
        self._changed()

    def __iadd__(self, rules: Iterable[Rule]) -> Self:  # type: ignore[override,misc]
        self.extend(rules)
        return self

    def __imul__(self, n: SupportsIndex) -> Self:
        result = super().__imul__(n)
        self._changed()
        return result


class RuleSet:
    """An ordered list of rules: the first whose matcher matches (and has calls left) answers."""

    def __init__(
        self, rules: Iterable[Rule] = (), *, models: Sequence[str | ModelProfile | Mapping[str, Any]] = ()
    ) -> None:
        self._rules = _RuleList()
        self._compiled: tuple[int, int, Dispatch] | None = None
        self.models, self.profiles = as_profiles(models)
        """Model names the rules serve (empty: any model is accepted), and the profiles among them
        (`ModelProfile`: context window, maximum output, reasoning by default)."""
        self._fingerprint: str | None = None
        self._names: set[str] = set()
        for r in rules:
            self.add(r)

    def add(self, rule: Rule) -> None:
        if not isinstance(rule, Rule):
            raise RuleError(f"a RuleSet holds Rule objects, got {type(rule).__name__}")
        names = self._names
        if len(names) != len(self.rules):  # `rules` is a public list: someone changed it directly
            names = self._names = {r.name for r in self.rules}
        if rule.name in names:  # a set, not a scan: adding n rules was quadratic (20,000 rules: ~20 s)
            raise RuleError(f"two rules are named {rule.name!r}; rule names must be unique")
        self.rules.append(rule)
        self._fingerprint = None
        names.add(rule.name)

    @property
    def rules(self) -> list[Rule]:
        """The rules in order (a list that may be changed in place)."""
        return self._rules

    @rules.setter
    def rules(self, rules: Iterable[Rule]) -> None:
        self._rules = _RuleList(rules)
        self._fingerprint = None

    def compiled(self) -> Dispatch:
        """The rules compiled for the search, compiled again after any change to them."""
        compiled = self._compiled
        if compiled is None or compiled[0] != self._rules.version or compiled[1] != edits:
            compiled = self._compiled = (self._rules.version, edits, Dispatch(self._rules))
        return compiled[2]

    def __iter__(self) -> Iterator[Rule]:
        return iter(self.rules)

    def __len__(self) -> int:
        return len(self.rules)

    def __getitem__(self, key: str | int) -> Rule:
        """A rule by name, or by position."""
        if isinstance(key, int):
            return self.rules[key]
        for r in self.rules:
            if r.name == key:
                return r
        raise UnknownRuleError(key, [r.name for r in self.rules])

    @property
    def fingerprint(self) -> str:
        """What identifies these rules across processes: a hash of every rule as written (its repr), so
        replicas loading the same rule files share call counts (`synthgpt.state`), wherever the files lie."""
        fp = self._fingerprint
        if fp is None:
            text = "\n".join(repr(r) for r in self.rules)
            fp = self._fingerprint = hashlib.sha256(text.encode()).hexdigest()[:16]
        return fp

    def matching(self, request: ModelRequest) -> Iterator[tuple[Rule, Captures, bool]]:
        """The rules `request` matches, in order, with their captures and whether the answer is free of
        call order there (no `times` rule at or before: `Dispatch.order_free`). Read-only: no call is
        claimed. The compiled search (`rules/dispatch.py`) every look-up of the answering rule goes by."""
        dispatch = self.compiled()
        passing: set[int] | None = None  # the last-user tests the request passes, once asked
        for at, rule, match, test in dispatch.candidates(request.api, request.model):
            if test is not None:
                if passing is None:
                    passing = dispatch.text_index.passing(request)  # type: ignore[union-attr]
                if passing.isdisjoint(test):
                    continue
            caps = match(request)
            if caps is not None:
                yield rule, caps, dispatch.order_free[at]

    def resolve(self, request: ModelRequest, counter: CallCounter | None = None) -> Resolved:
        """The first matching rule with calls left; `counter` counts the calls when given (shared state),
        else each rule counts its own."""
        for rule, caps, order_free in self.matching(request):
            unshared: StateUnavailable | None = None
            if counter is None:
                index = rule._claim()
            else:
                try:
                    index = counter.claim(self.fingerprint, rule)
                except StateUnavailable as exc:
                    if rule.times is not None:  # whether it may answer at all is the shared count's say
                        raise
                    index, unshared = rule._claim(), exc
            if index is None:
                continue
            return _resolved(rule, dict(caps), index, unshared, order_free)
        tried = [f"{r.name}: {r.matcher!r}" + (" (used up)" if r.times and r.call_count >= r.times else "")
                 for r in self.rules]
        raise NoRuleMatched(request.summary(), tried)

    def explain(self, request: ModelRequest) -> tuple[RuleVerdict, ...]:
        """Why `request` is answered by the rule it is: each rule tried, up to the one that answers, with
        its first failing predicate. Read-only: no `times` call is used, nothing is recorded."""
        return trace_rules(self.rules, request)

    def assert_all_called(self) -> None:
        missing = [r.name for r in self.rules if not r.called]
        if missing:
            raise AssertionError(f"rules never called: {', '.join(missing)}")

    def reset(self) -> None:
        for r in self.rules:
            r.reset()


# Choice is re-exported so `Rule("x", m.always(), Choice(...))` reads naturally with one import.
__all__ += ["Answer", "Choice"]


def _has_deltas(stream: object) -> bool:
    """A stream plan with explicit deltas is an answer by itself: they are its text."""
    deltas = stream.get("deltas") if isinstance(stream, dict) else getattr(stream, "deltas", None)
    return deltas is not None
