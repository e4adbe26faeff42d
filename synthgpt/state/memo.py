"""Memo entries in Redis (`--state-memo-us N`): an expensive answer drawn by one replica, replayed by all.

Each replica's own memo (`server.memo`) keeps an answer the second time it sees its request, so behind a
load balancer every replica draws a repeated request twice before replaying it. For a cheap answer that
does not matter; for one that takes milliseconds (a nested JSON schema, a Faker template) it does, and
with a corpus of prompts larger than the local memo it never stops. With `--state-memo-us N` an answer
that took at least N µs to draw is kept in Redis (expiring after `--state-ttl`), and every replica
looks a memo-eligible request up there before drawing it: one round trip, a hit replaying the bytes and
journaling the call as if drawn (`MockGPT.replay`). `bench/scale_out.py` measures where that pays; see
docs/scale-out.md for the figures and when to turn it on.

Eligible: a fixed clock, a JSON (not streamed) request whose answering rule cannot depend on call order
(not `counted`, no `times` rule before it), not a Responses request (its answers feed the store). A rule
this process has drawn faster than N µs is not looked up again (no round trip for cheap answers).
The key is everything the answer may depend on: the rules' fingerprint, seed, context window and clock
reading, the path and its parameters, every header, and the body.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..clock import FixedClock
from ..errors import StateUnavailable
from .redis import counted

if TYPE_CHECKING:
    from ..engine import MockGPT
    from ..model import ModelRequest
    from ..pipeline import Answered
    from ..rules.rule import Rule
    from .link import RedisLink

__all__ = ["MAX_ENTRY_BYTES", "MemoLookup", "SharedMemo"]

MAX_ENTRY_BYTES = 1024 * 1024
"""Larger answers are not shared: fetching them costs more than most draws."""


@dataclass(frozen=True, slots=True)
class MemoLookup:
    key: str
    rule: Rule


class SharedMemo:
    def __init__(self, link: RedisLink, min_us: int, ttl: int) -> None:
        self._link = link
        self.min_us = min_us
        self.ttl = ttl
        self._cheap: set[str] = set()
        """Rules this process drew faster than `min_us`: never looked up."""
        self.hits = 0
        self.stored = 0

    def lookup(
        self,
        mock: MockGPT,
        request: ModelRequest,
        raw: bytes,
        headers: Mapping[str, str],
        params: Mapping[str, str],
        path: str,
    ) -> MemoLookup | None:
        """Where this request's answer would be kept, or None when it is not eligible."""
        if request.stream or request.api == "responses" or type(mock.clock) is not FixedClock:
            return None
        rule = _answering_rule(mock, request)
        if rule is None:
            return None
        digest = hashlib.blake2b(digest_size=20)
        engine = (mock.rules.fingerprint, str(mock.seed), str(mock.context_window), repr(mock.clock.now()))
        for part in (*engine, path, json.dumps(sorted(params.items())), json.dumps(sorted(headers.items()))):
            digest.update(part.encode())
            digest.update(b"\0")
        digest.update(raw)
        return MemoLookup(self._link.key("memo", digest.hexdigest()), rule)

    def worth_fetching(self, found: MemoLookup) -> bool:
        return found.rule.name not in self._cheap

    async def fetch(self, mock: MockGPT, found: MemoLookup) -> Answered | None:
        """The stored answer replayed (journaled as a call), or None: not there, or Redis away."""
        from ..generation import Generation
        from ..journal import record_from_dict
        from ..pipeline import Answered

        try:
            data = await self._link.acall(lambda c: c.get(found.key))
        except StateUnavailable:
            return None  # the draw answers instead: the memo is only ever a shortcut
        if data is None:
            return None
        entry = json.loads(data)
        record = mock.replay(found.rule, record_from_dict(entry["record"]))
        self.hits += 1
        return Answered(entry["status"], entry["headers"], base64.b64decode(entry["body"]),
                        generation=Generation(record.output, found.rule, record, True),
                        replayable=True)  # fmt: skip

    def offer(self, found: MemoLookup, answered: Answered) -> None:
        """Keep a drawn answer that took at least `min_us` (in the background: nobody waits for it)."""
        import asyncio

        from ..journal import record_to_dict
        from ..pipeline import body_cut

        drawn = answered.generation
        if drawn is None or not answered.replayable or answered.wire is not None or answered.status != 200:
            return
        if drawn.record.duration_ms * 1000 < self.min_us:
            self._cheap.add(found.rule.name)
            return
        if body_cut(answered) is not None or len(answered.body) > MAX_ENTRY_BYTES:
            return
        entry: dict[str, Any] = {"status": answered.status, "headers": answered.headers,
                                 "body": base64.b64encode(answered.body).decode(),
                                 "record": record_to_dict(drawn.record)}  # fmt: skip
        data = json.dumps(entry, separators=(",", ":"))

        async def write() -> None:
            try:
                await self._link.acall(lambda c: c.set(found.key, data, ex=self.ttl))
                self.stored += 1
            except StateUnavailable:
                pass  # a shortcut not kept: the next replica draws

        task = asyncio.get_running_loop().create_task(write())
        _pending.add(task)
        task.add_done_callback(_pending.discard)


_pending: set[Any] = set()  # background writes, kept referenced until done


def _answering_rule(mock: MockGPT, request: ModelRequest) -> Rule | None:
    """The rule that answers `request` when its answer is a pure function of it, else None."""
    for rule, _, order_free in mock.rules.matching(request):
        # a `times` rule at or before it: which rule answers depends on the calls before
        return rule if order_free and not counted(rule) else None
    return None
