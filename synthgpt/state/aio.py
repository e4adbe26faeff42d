"""How the server answers a request with `--state redis://…`: every Redis round trip awaited on the loop.

The draw itself is synchronous and runs one at a time under the worker's lock (`server.offload`). So
that no draw ever waits for Redis while holding that lock (which would hold up every other request behind
a slow Redis), the round trips a request needs are made before and after it, through the asyncio client:

    fetch     the conversation a `previous_response_id` continues          (Responses requests only)
    accept    decode the request (the codec reads the fetched conversation)
    claim     the shared call index of the first matching `counted` rule   (stateful rules only)
    respond   draw and encode under the lock; journal writes leave in the background
    settle    await the Responses store's write of this answer, so a continuation sent to another
              replica finds it; a failed write answers 503 like any other lost state

Each step hands its result to the synchronous code through the context variables of
`synthgpt.state.redis`. A stateless request against a default-shaped rule set makes no round trip here at
all, so it answers while Redis is slow or away.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import TYPE_CHECKING

from ..codec.common import parse_json_body
from ..errors import RequestError, StateUnavailable
from .redis import Claim, RedisState, counted, fetched, preclaimed, stored

if TYPE_CHECKING:
    from ..codec.base import WireCodec
    from ..engine import MockGPT
    from ..model import Message, ModelRequest
    from ..pipeline import Answered
    from ..server.offload import Worker

__all__ = ["SharedAnswers", "shared_answers"]


def shared_answers(state: object) -> SharedAnswers | None:
    """What the API routes answer through for `state` (None: a store with no round trips, `memory`)."""
    return SharedAnswers(state) if isinstance(state, RedisState) else None


class SharedAnswers:
    """The server's side of a `RedisState`: `answer` is the route's accept-and-respond with Redis."""

    def __init__(self, state: RedisState) -> None:
        self.state = state

    async def answer(
        self,
        mock: MockGPT,
        codec: WireCodec,
        raw: bytes,
        headers: Mapping[str, str],
        params: Mapping[str, str],
        path: str,
        worker: Worker,
    ) -> Answered:
        from ..pipeline import Answered, finish, refuse

        if codec.api == "responses":
            await self._fetch(raw)
        async with worker.lock:
            accepted = await worker.accept(mock, codec, raw, headers, params, path)
        if isinstance(accepted, Answered):
            return accepted
        memo, found = self.state.memo, None
        if memo is not None:
            found = memo.lookup(mock, accepted.request, raw, headers, params, path)
            if found is not None and memo.worth_fetching(found):
                replayed = await memo.fetch(mock, found)
                if replayed is not None:
                    return replayed
        claims = await self._claim(mock, accepted.request)
        writes: list[asyncio.Task[None]] = []
        token = stored.set(writes)
        try:
            async with worker.lock:  # a heavy draw runs in the worker with this request's claims
                answered = await worker.respond(mock, codec, accepted)
        finally:
            stored.reset(token)
            if claims:
                self._give_back(mock, claims)
        if writes:
            failed = await _first_failure(writes)
            if failed is not None and answered.generation is not None:
                finish(mock, answered.generation.record, failed)
                return refuse(mock, codec, failed, *accepted.key)
        if memo is not None and found is not None:
            memo.offer(found, answered)
        return answered

    async def _fetch(self, raw: bytes) -> None:
        """Read the conversation a Responses request continues, before it is decoded. Most requests
        continue none: those are not parsed here (the decoder parses every body once more). A key
        spelled with escapes is missed here and read synchronously by the store (`RedisResponseStore.get`)."""
        if b"previous_response_id" not in raw:
            return
        try:
            body = parse_json_body(raw)
        except RequestError:
            return  # the decoder says what is wrong with it
        previous = body.get("previous_response_id") if isinstance(body, dict) else None
        if not isinstance(previous, str):
            return
        found: dict[str, tuple[Message, ...] | StateUnavailable | None] = {}
        try:
            found[previous] = await self.state.responses().aget(previous)
        except StateUnavailable as exc:
            found[previous] = exc
        fetched.set(found)

    async def _claim(self, mock: MockGPT, request: ModelRequest) -> dict[str, Claim]:
        """Claim the shared index of the first matching rule that has calls left, as `RuleSet.resolve`
        will pick it: the draw then takes it from `preclaimed` without a round trip."""
        rules, counter = mock.rules, self.state.counter
        claims: dict[str, Claim] = {}
        try:
            mock.budget(request)
        except Exception:  # refused before any rule is tried: claiming would skip a step
            return claims
        for rule, _, _ in rules.matching(request):
            if not counted(rule):
                break  # answers from its own count in the process: no round trip
            try:
                claims[rule.name] = index = await counter.aclaim(rules.fingerprint, rule)
            except StateUnavailable as exc:
                claims[rule.name] = exc
                break
            if index is not None:
                break
        if claims:
            preclaimed.set(claims)
        return claims

    def _give_back(self, mock: MockGPT, claims: dict[str, Claim]) -> None:
        """Release an index claimed for a draw that never took it (the request failed on its way there)."""
        for name, index in claims.items():
            if isinstance(index, int):
                self.state.counter.give_back(mock.rules.fingerprint, name)


async def _first_failure(writes: list[asyncio.Task[None]]) -> StateUnavailable | None:
    failure: StateUnavailable | None = None
    for outcome in await asyncio.gather(*writes, return_exceptions=True):
        if isinstance(outcome, StateUnavailable) and failure is None:
            failure = outcome
        elif isinstance(outcome, BaseException) and not isinstance(outcome, StateUnavailable):
            raise outcome
    return failure
