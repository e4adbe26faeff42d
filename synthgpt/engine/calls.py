"""The engine's book-keeping of calls: each answered call's journal record (and the rule's history of it),
a replayed call's record, and giving back a claimed call whose draw failed."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..journal import CallRecord, Delivery
from ..model import ModelOutput, ModelRequest

if TYPE_CHECKING:
    from ..rules.rule import Resolved, Rule
    from ..state.base import CallCounter

__all__ = ["delivery", "record_builder", "release"]


def delivery(req: ModelRequest, out: ModelOutput) -> Delivery:
    """How a new record starts: a stream is `streaming` until it is finished."""
    return Delivery("error" if out.error is not None else "streaming" if req.stream else "done")


def record_builder(
    rule: Rule,
    req: ModelRequest,
    out: ModelOutput,
    seed: int,
    at: float,
    captures: dict[str, str],
    started: float,
    nbytes: int = -1,
) -> Callable[[int], CallRecord]:
    """What the journal calls with the call's index (it numbers and stores in one step): the record,
    kept in the rule's history too. The duration is taken then, for the journal only. `nbytes` is the
    record's size when already known (a replayed call holds the request and output of the one it
    repeats: the same size)."""

    def build(index: int) -> CallRecord:
        record = CallRecord(
            index=index,
            request=req,
            rule=rule.name,
            seed=seed,
            output=out,
            at=at,
            duration_ms=(time.perf_counter() - started) * 1000.0,
            captures=dict(captures),
            delivery=delivery(req, out),
            nbytes=nbytes,
        )
        rule._record(record)
        return record

    return build


def release(resolved: Resolved, counter: CallCounter | None, fingerprint: Callable[[], str]) -> None:
    """Give back the call `resolved` claimed: its draw failed, so it answered nothing and must not use up a
    `times` slot (in the shared counter when that granted it)."""
    if counter is not None and resolved.unshared is None:
        counter.release(fingerprint(), resolved.rule)
    else:
        resolved.rule._release()
