"""The engine's book-keeping of calls: each answered call's journal record (and the rule's history of it),
a replayed call's record, and giving back a claimed call whose draw failed."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..frozen import field_setters
from ..journal import Builder, CallRecord, Delivery, PackedRecord
from ..model import ModelOutput, ModelRequest

if TYPE_CHECKING:
    from ..rules.rule import Resolved, Rule
    from ..state.base import CallCounter

__all__ = ["RecordBuilder", "delivery", "release"]

_new = object.__new__
_index, _request, _rule, _seed, _output, _at, _duration, _captures, _delivery, _nbytes = field_setters(
    CallRecord, "index", "request", "rule", "seed", "output", "at", "duration_ms", "captures", "delivery",
    "nbytes",
)  # fmt: skip


def delivery(req: ModelRequest, out: ModelOutput) -> Delivery:
    """How a new record starts: a stream is `streaming` until it is finished."""
    return Delivery("error" if out.error is not None else "streaming" if req.stream else "done")


class RecordBuilder(Builder):
    """What the journal calls with the call's index (it numbers and stores in one step): the record, kept
    in the rule's history too, in the form the journal keeps (`Builder.kept`). The duration is taken then,
    for the journal only. `nbytes` is the record's size when already known, and `repeats` says the call
    was answered again from a memo (a replayed call holds the request and output of the one it repeats: the
    same size, packed once). A journal that numbers a call as it stores it (SQLite) drafts the record
    first."""

    __slots__ = ("at", "captures", "nbytes", "out", "repeats", "req", "rule", "seed", "started")

    def __init__(self, rule: Rule, req: ModelRequest, out: ModelOutput, seed: int, at: float,
                 captures: dict[str, str], started: float, nbytes: int = -1,
                 repeats: bool = False) -> None:  # fmt: skip
        self.rule, self.req, self.out, self.seed, self.at = rule, req, out, seed, at
        self.captures, self.started, self.nbytes, self.repeats = captures, started, nbytes, repeats

    def kept(self, record: CallRecord, form: CallRecord | PackedRecord, size: int) -> None:
        self.rule._record(form, size)

    def make(self, index: int) -> CallRecord:
        """`CallRecord(index, …)`, built through its slots (`frozen.field_setters`): every field given."""
        req, out = self.req, self.out
        record: CallRecord = _new(CallRecord)
        _index(record, index)
        _request(record, req)
        _rule(record, self.rule.name)
        _seed(record, self.seed)
        _output(record, out)
        _at(record, self.at)
        _duration(record, (time.perf_counter() - self.started) * 1000.0)
        _captures(record, dict(self.captures))
        _delivery(record, delivery(req, out))
        _nbytes(record, self.nbytes)
        return record


def release(resolved: Resolved, counter: CallCounter | None, fingerprint: Callable[[], str]) -> None:
    """Give back the call `resolved` claimed: its draw failed, so it answered nothing and must not use up a
    `times` slot (in the shared counter when that granted it)."""
    if counter is not None and resolved.unshared is None:
        counter.release(fingerprint(), resolved.rule)
    else:
        resolved.rule._release()
