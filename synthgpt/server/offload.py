"""Long answers are drawn and encoded in a worker thread, so the event loop keeps serving everyone else.

Within its budgets (`synthgpt.limits`) a legal answer can still take a second or two of CPU (128 choices
with logprobs, a batch of embeddings a few MB large). Done on the event loop, that froze `/healthz` and
every other connection's stream frames for as long. Requests whose shape can be that large (`heavy`) are
drawn and encoded in one worker thread instead; the loop waits for them without blocking.

Determinism holds because generation stays one at a time: every draw, on the loop or in the worker, runs
under the one `Worker.lock` (draws share seeded Faker instances and the engine's journal and call counts,
which two concurrent draws would interleave). Other requests' draws queue behind a long one; health
checks, model lists and frames of streams already answered do not. The thread is started on the first
heavy request, so a server that never gets one never starts it.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import TYPE_CHECKING, TypeVar

from ..errors import SynthGPTError
from ..generators.embedding import native_dimensions
from ..generators.structured import compiled_schema
from ..logprobs import alternatives_asked
from ..model import ModelRequest
from ..pipeline import Accepted, Answered, accept, respond

if TYPE_CHECKING:
    from ..codec.base import WireCodec
    from ..engine import MockGPT

__all__ = ["HEAVY_EMBEDDING_FLOATS", "LARGE_BODY_BYTES", "Worker", "heavy"]

T = TypeVar("T")

HEAVY_EMBEDDING_FLOATS = 100_000
"""An embeddings batch of at least this many floats (inputs x dimensions: ~2 MB of JSON, ~0.3 s) is heavy."""


LARGE_BODY_BYTES = 64 * 1024
"""A request body of at least this many bytes is parsed, decoded and answered in the worker thread as well:
a 16 MB embeddings batch took 1.5 s to count its tokens before being refused, a 3,000-property schema 0.2 s
to check, and a 10 MB chat message 1.7 s to match and answer, all of it on the loop. Real chat bodies are
smaller; a hand-off costs ~0.2 ms."""

HEAVY_CHOICES = 64
"""Choices times (1 + logprob alternatives per token) from which a Chat answer is heavy: `n=64`, or
`n=4` with `top_logprobs=20`."""
HEAVY_SCHEMA_VALUES = 500
"""A structured output whose smallest document has this many values is heavy (~50 ms and more)."""


def heavy(req: ModelRequest) -> bool:
    """Whether answering `req` may take long enough to hold up other connections, from the request's
    shape (the Responses API is not judged by shape: its codec keeps a store of answers; a large body of
    any API still goes to the worker thread, see `Worker.respond`, and the stores take writes from it).
    A worker thread costs each answer it makes ~0.2 ms of hand-offs, so small answers stay on the loop."""
    if req.api == "embeddings":
        dims = req.dimensions or native_dimensions(req.model)
        return len(req.inputs) * dims >= HEAVY_EMBEDDING_FLOATS
    if req.api not in ("chat", "messages"):
        return False
    top = alternatives_asked(req.extra.get("top_logprobs")) if req.extra.get("logprobs") is True else 0
    if req.n * (1 + top) >= HEAVY_CHOICES:
        return True
    schema = req.response_schema.schema_ if req.response_schema is not None else None
    if schema is None:
        return False
    try:
        smallest = compiled_schema(schema).smallest_values()
    except SynthGPTError:  # refused when decoded; a rule's own schema answers on the loop
        return False
    return smallest >= HEAVY_SCHEMA_VALUES


class Worker:
    """One worker thread for heavy answers, and the lock every draw takes."""

    def __init__(self) -> None:
        self._executor: ThreadPoolExecutor | None = None
        self._lock: asyncio.Lock | None = None

    @property
    def lock(self) -> asyncio.Lock:
        if self._lock is None:  # made inside the server's loop, on first use
            self._lock = asyncio.Lock()
        return self._lock

    async def run(self, fn: Callable[..., T], *args: object) -> T:
        """`fn(*args)` in the worker thread, the event loop free meanwhile."""
        if self._executor is None:
            self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="synthgpt-draw")
        return await asyncio.get_running_loop().run_in_executor(self._executor, fn, *args)

    async def accept(
        self,
        mock: MockGPT,
        codec: WireCodec,
        raw: bytes,
        headers: Mapping[str, str],
        params: Mapping[str, str],
        path: str,
    ) -> Accepted | Answered:
        """`pipeline.accept`: in the worker thread for a body of `LARGE_BODY_BYTES` or more (parsing and
        checking it may take long), on the loop otherwise. The caller holds `lock`."""
        if len(raw) >= LARGE_BODY_BYTES:
            return await self.run(partial(accept, mock, codec, raw, headers, params, path=path))
        return accept(mock, codec, raw, headers, params, path=path)

    async def respond(self, mock: MockGPT, codec: WireCodec, accepted: Accepted) -> Answered:
        """`pipeline.respond`: a `heavy` answer, or the answer to a large body, drawn and encoded in the
        worker thread, in a copy of the request's context (what the loop set for this request, e.g. a
        shared call index it claimed), so others' frames keep flowing; on the loop otherwise. The caller
        holds `lock`."""
        if len(accepted.raw) >= LARGE_BODY_BYTES or heavy(accepted.request):
            draw = partial(respond, mock, codec, accepted, in_pieces=True)
            return await self.run(contextvars.copy_context().run, draw)
        return respond(mock, codec, accepted)

    def close(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)
            self._executor = None

