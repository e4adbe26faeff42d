"""The SSE layer every streaming API shares: faults, keep-alives, pacing and transport chunking.

A wire module produces the healthy stream as a list of `Frame`s (one SSE event each). This module turns
those frames plus the answer's `StreamPlan` into bytes, in two steps:

1. `plan_wire(...)` decides *what* goes on the wire: which frames are sent (faults cut the stream or
   replace a frame), where keep-alive comments go, how long to wait before each write and where the byte
   stream is split (`wire_chunk_bytes`). It is a pure function of its arguments: the same answer gives
   the same `WirePlan` in every process. Jitter comes from an RNG seeded with `output.id_seed`.
2. `stream_bytes(...)` (async, for the server) or `iter_bytes(...)` (sync, for in-process transports)
   performs the plan. Only they touch real time, and only to wait; content never depends on it.
   A stream whose plan `aborts` ends by raising `StreamAborted` after its last write, which makes an ASGI
   server drop the connection without the chunked-encoding terminator (a real network cut).

When no write has to wait, every frame goes out in a single write: unpaced streams cost one `send`.
`plan_parts(codec, ...)` is `plan_wire(codec.frames(...), ...)` for a codec that gives its stream as runs
of frames (`runs.py`): such an unpaced stream is written from its runs, without a frame object per event.

`chunk_text(text, n)` is the shared way to cut text into deltas of `n` code points; it never splits a
code point, a surrogate pair, or a character from the combining marks / joiners that follow it.
"""

from __future__ import annotations

import asyncio
import random
import re
import time
import unicodedata
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache

from ..errors import StreamAborted
from ..model import Fault, ModelOutput, ModelRequest, StreamPlan
from ..seeding import derive_seed
from .base import Frame, WireCodec, render_frame
from .framing import Framing
from .runs import LazyFrames, Part, PlainChunks, expand, render_sse

__all__ = [
    "KEEPALIVE",
    "StreamAborted",
    "WirePlan",
    "Write",
    "chunk_pieces",
    "chunk_text",
    "ending_fault",
    "frame_delays",
    "frames_in",
    "iter_bytes",
    "malform",
    "plan_parts",
    "plan_wire",
    "stream_bytes",
    "text_deltas",
    "text_pieces",
]

KEEPALIVE = b": ping\n\n"
"""An SSE comment: every SDK skips it, proxies see traffic."""



@dataclass(frozen=True, slots=True)
class Write:
    """Bytes to send after waiting `delay_ms`."""

    data: bytes
    delay_ms: float = 0.0


@dataclass(frozen=True, slots=True)
class WirePlan:
    """Everything that goes on the wire for one stream, in order."""

    writes: tuple[Write, ...]
    frames: Sequence[Frame]
    """The frames actually sent (after faults), error frames included: a tuple, or for a stream planned
    from its runs (`plan_parts`), `LazyFrames` (equal to the tuple)."""
    aborts: bool = False
    """End by dropping the connection (no terminator, no clean close)."""

    @property
    def data(self) -> bytes:
        """All bytes, as a client that waited for the end would read them."""
        return b"".join(w.data for w in self.writes)


# -------------------------------------------------------------------------------------------- text deltas


def _is_extender(ch: str) -> bool:
    """A code point that belongs to the character before it (combining mark, joiner, variation selector…)."""
    o = ord(ch)
    if 0xDC00 <= o <= 0xDFFF:  # low surrogate: second half of a pair held in a str
        return True
    if o == 0x200D or 0xFE00 <= o <= 0xFE0F or 0xE0100 <= o <= 0xE01EF or 0xE0020 <= o <= 0xE007F:
        return True
    if 0x1F3FB <= o <= 0x1F3FF:  # emoji skin-tone modifiers
        return True
    return unicodedata.category(ch)[0] == "M"


def _clusters(text: str) -> Iterator[str]:
    """User-perceived characters, approximately: a base code point plus its extenders and ZWJ sequences.

    Regional-indicator pairs (flags) stay together too. Cheap rather than a full UAX #29 implementation.
    """
    i, n = 0, len(text)
    while i < n:
        j = i + 1
        if 0x1F1E6 <= ord(text[i]) <= 0x1F1FF and j < n and 0x1F1E6 <= ord(text[j]) <= 0x1F1FF:
            j += 1
        while j < n:
            # a joiner glues the next code point on, whatever it is
            if text[j - 1] == "\u200d" or _is_extender(text[j]):
                j += 1
            else:
                break
        yield text[i:j]
        i = j


def chunk_text(text: str, n: int) -> list[str]:
    """`text` cut into pieces of `n` code points, in order; their concatenation is `text`.

    A piece is extended past `n` rather than split inside a cluster (a code point with its combining marks,
    a ZWJ emoji sequence, a flag, a surrogate pair). The empty string gives no pieces.
    """
    if n < 1:
        raise ValueError(f"chunk size must be >= 1, got {n}")
    if n >= len(text):
        return [text] if text else []
    if text.isascii():  # no clusters to keep whole: every n characters (one C call, not a slice each)
        return _ascii_pieces(n)(text)
    pieces: list[str] = []
    current: list[str] = []
    size = 0
    for cluster in _clusters(text):
        current.append(cluster)
        size += len(cluster)
        if size >= n:
            pieces.append("".join(current))
            current, size = [], 0
    if current:
        pieces.append("".join(current))
    return pieces


@lru_cache(maxsize=64)
def _ascii_pieces(n: int) -> Callable[[str], list[str]]:
    """`text` cut every `n` characters, the last piece shorter (`re.S`: a newline is a character too)."""
    return re.compile(f".{{1,{n}}}", re.S).findall


def text_deltas(text: str, plan: StreamPlan) -> list[str]:
    """The stream deltas of an answer's text: the plan's explicit `deltas` where they spell it (cut where
    the text was cut, by a token limit or a stop sequence), else `text` cut every `chunk_chars`."""
    deltas = plan.deltas
    if deltas is not None and text and "".join(deltas).startswith(text):
        out: list[str] = []
        left = len(text)
        for d in deltas:
            if left <= 0:
                break
            out.append(d[:left])
            left -= len(d)
        return out
    return chunk_text(text, plan.chunk_chars)


def chunk_pieces(text: str, n: int) -> Sequence[str]:
    """`chunk_text(text, n)`, the same pieces, as `runs.PlainChunks` for a plain ASCII text (which a
    stream's run writes without a str per piece)."""
    plain = PlainChunks.of(text, n)
    return chunk_text(text, n) if plain is None else plain


def text_pieces(text: str, plan: StreamPlan) -> Sequence[str]:
    """`text_deltas(text, plan)`, the same pieces, as `runs.PlainChunks` when they are a plain ASCII
    text cut every `chunk_chars` (what the codecs' text runs are made of)."""
    if plan.deltas is None:
        plain = PlainChunks.of(text, plan.chunk_chars)
        if plain is not None:
            return plain
    return text_deltas(text, plan)


# ----------------------------------------------------------------------------------------------- planning


def malform(data: str) -> str:
    """`data` made unparseable: its first half (a strict prefix of a JSON object is never valid JSON)."""
    return data[: max(1, len(data) // 2)] if len(data) > 1 else "{"


def ending_fault(plan: StreamPlan) -> Fault | None:
    """The fault that ends a stream under `plan` (disconnect, truncate or stream_error), if any."""
    return plan.ending()


def frames_in(data: bytes) -> int:
    """How many whole SSE events (keep-alive comments aside) the first bytes of a stream hold."""
    return sum(1 for block in data.split(b"\n\n")[:-1] if block and not block.startswith(b":"))


def _ending(plan: StreamPlan) -> Fault | None:
    return plan.ending()


def plan_wire(
    frames: Sequence[Frame],
    plan: StreamPlan,
    codec: WireCodec,
    output: ModelOutput,
    request: ModelRequest,
) -> WirePlan:
    """What to send for the healthy stream `frames` under `plan`.

    Faults count frames (SSE events), never keep-alive comments, and never remove more than the terminal
    frame: `after` is clamped so a fault always strikes before the terminator.
    - disconnect(after=N): the first N frames, then the connection is dropped (`aborts`).
    - truncate(after=N): the first N frames, then a clean close without terminator.
    - stream_error(after=N): the first N frames, then `codec.error_frames(...)`, then a clean close.
    - malformed(after=N): frame N (0-based) is sent as invalid JSON; the stream goes on.
    - unknown_item: the wire module's business (it adds the frames itself); ignored here.
    A codec with a `framing(request)` method writes its frames in that form (NDJSON, a JSON array, the AWS
    event stream) instead of SSE; keep-alives then go out only if that form has them.
    When several ending faults are given, the one with the smallest `after` wins.
    """
    framing = _framing(codec, request)
    if frames and _at_once(plan):  # the common unpaced stream: every frame at once, in one write
        if framing is None:
            return WirePlan((Write(_render_all(frames), 0.0),), tuple(frames), False)
        data = b"".join(framing.render(f, i) for i, f in enumerate(frames))
        return WirePlan((Write(data, 0.0),), tuple(frames), False)
    sent = list(frames)
    healthy_end = next((i for i, f in enumerate(sent) if f.terminal), len(sent))
    for fault in plan.faults:
        if fault.kind == "malformed" and healthy_end > 0:
            i = min(fault.after, healthy_end - 1)
            sent[i] = Frame(malform(sent[i].data), sent[i].event, False)
    ending = _ending(plan)
    aborts = False
    if ending is not None:
        keep = min(ending.after, healthy_end)
        sent = sent[:keep]
        if ending.kind == "stream_error":
            sent.extend(codec.error_frames(ending, output, request, keep))
        aborts = ending.kind == "disconnect"

    delays = frame_delays(plan, len(sent), output.id_seed)
    render = (lambda f, i: render_frame(f)) if framing is None else framing.render
    keepalive = KEEPALIVE if framing is None else framing.keepalive
    pieces: list[Write] = []
    buf: list[bytes] = []
    buf_delay = 0.0
    for i, frame in enumerate(sent):
        if delays[i] > 0 and buf:
            pieces.append(Write(b"".join(buf), buf_delay))
            buf = []
        if not buf:
            buf_delay = delays[i]
        buf.append(render(frame, i))
        every = plan.keepalive_every
        if every and keepalive and (i + 1) % every == 0 and i + 1 < len(sent):
            buf.append(keepalive)
    if buf:
        pieces.append(Write(b"".join(buf), buf_delay))
    if not pieces and plan.first_delay_ms > 0:
        pieces.append(Write(b"", plan.first_delay_ms))
    writes = _rechunk(pieces, plan.wire_chunk_bytes) if plan.wire_chunk_bytes else pieces
    return WirePlan(tuple(writes), tuple(sent), aborts)


def plan_parts(codec: WireCodec, plan: StreamPlan, output: ModelOutput, request: ModelRequest) -> WirePlan:
    """`plan_wire(codec.frames(output, request), plan, codec, output, request)`, the same plan, built from
    the codec's runs of frames where it has them (`runs.HasFrameParts`): an unpaced SSE stream without
    faults is written from them without a frame object per event (see `runs.py`)."""
    parts_of = getattr(codec, "frame_parts", None)  # getattr: an optional part of the protocol
    if parts_of is None:
        return plan_wire(codec.frames(output, request), plan, codec, output, request)
    parts: list[Part] = parts_of(output, request)
    if parts and _at_once(plan) and _framing(codec, request) is None:
        return WirePlan((Write(render_sse(parts), 0.0),), LazyFrames(parts), False)
    return plan_wire(expand(parts), plan, codec, output, request)


def _framing(codec: WireCodec, request: ModelRequest) -> Framing | None:
    own = getattr(codec, "framing", None)  # getattr: an optional part of the protocol (see framing.py)
    return own(request) if own is not None else None


def _at_once(plan: StreamPlan) -> bool:
    """Every frame goes out at once, as the healthy stream has it: no fault, keep-alive, chunking or wait."""
    return not (
        plan.faults or plan.keepalive_every or plan.wire_chunk_bytes
        or plan.first_delay_ms or plan.interval_ms or plan.jitter_ms
    )  # fmt: skip


def _render_all(frames: Sequence[Frame]) -> bytes:
    """`b"".join(render_frame(f) for f in frames)`, encoded once: UTF-8 of a concatenation is the
    concatenation of the UTF-8s, and one encode is cheaper than a bytes object per frame."""
    out: list[str] = []
    for f in frames:
        if f.event is None:
            out.append("data: " + f.data + "\n\n")
        else:
            out.append("event: " + f.event + "\ndata: " + f.data + "\n\n")
    return "".join(out).encode()


def frame_delays(plan: StreamPlan, count: int, seed: int) -> list[float]:
    """Milliseconds to wait before each frame: the first delay, then interval + seeded jitter."""
    rng = random.Random(derive_seed(seed, "sse-jitter")) if plan.jitter_ms > 0 else None
    out = []
    for i in range(count):
        if i == 0:
            out.append(plan.first_delay_ms)
        else:
            out.append(plan.interval_ms + (rng.uniform(0, plan.jitter_ms) if rng else 0.0))
    return out


def _rechunk(writes: list[Write], size: int) -> list[Write]:
    """Split the byte stream at every multiple of `size` bytes (global offsets), keeping each write's delay
    on its first piece. Writes that follow without delay are joined first, so pieces cross frame borders."""
    merged: list[Write] = []
    for w in writes:
        if merged and w.delay_ms == 0:
            merged[-1] = Write(merged[-1].data + w.data, merged[-1].delay_ms)
        else:
            merged.append(w)
    out: list[Write] = []
    offset = 0
    for w in merged:
        data, delay = w.data, w.delay_ms
        pos = 0
        while pos < len(data):
            piece = data[pos : pos + size - (offset % size)]
            out.append(Write(piece, delay))
            delay = 0.0
            pos += len(piece)
            offset += len(piece)
        if not data:
            out.append(Write(b"", delay))
    return out


# ---------------------------------------------------------------------------------------------- performing


async def stream_bytes(
    frames: Sequence[Frame],
    plan: StreamPlan,
    codec: WireCodec,
    output: ModelOutput,
    request: ModelRequest,
    *,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> AsyncIterator[bytes]:
    """Yield the stream's bytes, waiting (without blocking other tasks) where the plan says.

    Waits keep to the plan's schedule: each write is due a planned interval after the previous write was
    due, so a late wake-up is made up on the next wait instead of delaying every frame after it. `clock`
    only measures that lateness; content never depends on it.

    Raises StreamAborted after the last write when the plan drops the connection.
    """
    wire = plan_wire(frames, plan, codec, output, request)
    due: float | None = None  # when the previous write was planned to go out
    for w in wire.writes:
        if w.delay_ms > 0:
            delay = w.delay_ms / 1000.0
            now = clock()
            lag = 0.0 if due is None else now - due
            if due is not None and lag > 0:
                # Behind plan (a late wake-up, a busy loop, a slow write): wait that much less, so lateness
                # does not add up over the frames and the stream ends when planned.
                due += delay
                wait = delay - lag
            else:
                due = now + delay
                wait = delay
            if wait > 0:
                await sleep(wait)
        elif due is None:
            due = clock()
        if w.data:
            yield w.data
    if wire.aborts:
        raise StreamAborted(len(wire.frames))


def iter_bytes(
    frames: Sequence[Frame],
    plan: StreamPlan,
    codec: WireCodec,
    output: ModelOutput,
    request: ModelRequest,
    *,
    sleep: Callable[[float], None] | None = None,
) -> Iterator[bytes]:
    """The synchronous twin of `stream_bytes`; waits only if a `sleep` function (seconds) is given."""
    wire = plan_wire(frames, plan, codec, output, request)
    for w in wire.writes:
        if sleep is not None and w.delay_ms > 0:
            sleep(w.delay_ms / 1000.0)
        if w.data:
            yield w.data
    if wire.aborts:
        raise StreamAborted(len(wire.frames))
