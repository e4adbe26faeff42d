"""Runs of frames that differ in one string: most of a drawn stream, written without a frame object each.

A 50-event stream is a handful of structural events and a run of text deltas whose payloads are all the
same JSON but for the delta's text (and, on Responses, a counter). Building a dict, a JSON text and a
`Frame` for each delta, then an SSE line for each frame, was most of what a stream cost beyond its answer.

A codec with the optional `frame_parts(output, request)` hook (`HasFrameParts`) gives its healthy stream as
`Frame`s and `FrameRun`s, in order. `sse.plan_parts` sends an unpaced, fault-free stream straight from
them: each run's SSE text is one template around its texts' JSON (`FrameRun.sse`), and the plan's frames
(`LazyFrames`) are built only if something reads more than their number. Any other stream is planned from
`expand(parts)`, the very frames the codec's `frames` returns, so faults and pacing see frames as before.

The texts are written as JSON by the standard library's string encoder (`json.encoder.encode_basestring`:
UTF-8 kept, `"`, `\\` and control characters escaped), which writes a string exactly as `jsonutil.dumps`
does (tested on awkward texts in `tests/codec/test_frame_runs.py`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import chain, repeat
from json.encoder import encode_basestring
from typing import TYPE_CHECKING, Protocol, overload

from .base import Frame

if TYPE_CHECKING:
    from ..model import ModelOutput, ModelRequest

__all__ = ["FrameRun", "HasFrameParts", "LazyFrames", "Part", "count", "expand", "render_sse"]


@dataclass(slots=True)
class FrameRun:
    """Consecutive non-terminal frames named `event` whose payloads are `head + json(text) + tail` for each
    of `texts`, or, when `number` is set, `head + json(text) + tail + str(number + k) + "}"` for the k-th:
    a counter as the payload's last member (Responses' `sequence_number`)."""

    event: str | None
    head: str
    tail: str
    texts: list[str]
    number: int | None = None

    def frames(self) -> list[Frame]:
        head, tail, event = self.head, self.tail, self.event
        texts = map(encode_basestring, self.texts)
        if self.number is None:
            return [Frame(head + text + tail, event) for text in texts]
        return [Frame(f"{head}{text}{tail}{n}}}", event) for n, text in enumerate(texts, self.number)]

    def sse(self) -> str:
        """The run's SSE events, as `render_frame` writes each of `frames()`, in one piece."""
        start = ("data: " if self.event is None else "event: " + self.event + "\ndata: ") + self.head
        texts = map(encode_basestring, self.texts)
        if self.number is None:
            end = self.tail + "\n\n"
            return start + (end + start).join(texts) + end if self.texts else ""
        k = len(self.texts)
        # each event: start, text, then the counter's suffix (kept per tail), joined in C (zip, chain)
        ends = _suffixes(self.tail, self.number, k)
        return "".join(chain.from_iterable(zip(repeat(start, k), texts, ends, strict=True)))


def _suffixes(tail: str, first: int, count: int) -> list[str]:
    """`[f"{tail}{n}}}\n\n" for n in range(first, first + count)]`: what ends each numbered event of a run.
    Every stream numbers from the same small counters, so they are made once per tail and sliced."""
    end = first + count
    if end > _MAX_NUMBER:  # a stream longer than any drawn one: made for this run alone
        return [f"{tail}{n}}}\n\n" for n in range(first, end)]
    made = _SUFFIXES.get(tail)
    if made is None or len(made) < end:
        have = made or []
        # a new list, swapped in whole: another thread slicing the old one still reads it intact
        made = have + [f"{tail}{n}}}\n\n" for n in range(len(have), max(end, 2 * len(have), 64))]
        if len(_SUFFIXES) >= 16:  # tails are constants of the codecs: bounded anyway
            _SUFFIXES.clear()
        _SUFFIXES[tail] = made
    return made[first:end]


_SUFFIXES: dict[str, list[str]] = {}
_MAX_NUMBER = 4096


Part = Frame | FrameRun
"""One frame of a stream, or a run of them."""


class HasFrameParts(Protocol):
    """Optional: a codec that gives its healthy stream as frames and runs; its `frames` must return
    `expand(frame_parts(output, request))`, so both describe one stream."""

    def frame_parts(self, output: ModelOutput, request: ModelRequest) -> list[Part]: ...


def expand(parts: Sequence[Part]) -> list[Frame]:
    """Every frame of `parts`, in order."""
    frames: list[Frame] = []
    for part in parts:
        if isinstance(part, FrameRun):
            frames += part.frames()
        else:
            frames.append(part)
    return frames


def count(parts: Sequence[Part]) -> int:
    """How many frames `parts` holds."""
    return sum(len(p.texts) if isinstance(p, FrameRun) else 1 for p in parts)


def render_sse(parts: Sequence[Part]) -> bytes:
    """`b"".join(render_frame(f) for f in expand(parts))`, without a frame object per event of a run
    (UTF-8 of a concatenation is the concatenation of the UTF-8s: encoded once)."""
    out: list[str] = []
    for p in parts:
        if isinstance(p, FrameRun):
            out.append(p.sse())
        elif p.event is None:
            out.append("data: " + p.data + "\n\n")
        else:
            out.append("event: " + p.event + "\ndata: " + p.data + "\n\n")
    return "".join(out).encode()


class LazyFrames(Sequence[Frame]):
    """The frames of `parts`, expanded the first time one is read: an unpaced stream only needs their
    number (what a stream sent, for the journal and the metrics). Equal to any sequence of the same
    frames, as the tuple `plan_wire` gives."""

    __slots__ = ("_frames", "_len", "_parts")

    def __init__(self, parts: Sequence[Part]) -> None:
        self._parts = parts
        self._len = count(parts)
        self._frames: tuple[Frame, ...] | None = None

    def _all(self) -> tuple[Frame, ...]:
        if self._frames is None:
            self._frames = tuple(expand(self._parts))
        return self._frames

    def __len__(self) -> int:
        return self._len

    @overload
    def __getitem__(self, index: int) -> Frame: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Frame]: ...
    def __getitem__(self, index: int | slice) -> Frame | Sequence[Frame]:
        return self._all()[index]

    def __iter__(self) -> Iterator[Frame]:
        return iter(self._all())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, LazyFrames):
            other = other._all()
        return isinstance(other, tuple) and self._all() == other

    def __hash__(self) -> int:
        return hash(self._all())

    def __repr__(self) -> str:
        return f"LazyFrames({self._all()!r})"
