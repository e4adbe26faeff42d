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

Most drawn texts are plain ASCII that JSON writes as is, cut every few characters: their pieces come as
`PlainChunks`, and a run of them is written from the text's bytes, cut by one `struct` unpack, without a
str, a JSON text or a regex match per piece (`FrameRun.sse_bytes`, `render_sse`).
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from itertools import chain, repeat
from json.encoder import encode_basestring
from typing import TYPE_CHECKING, Protocol, TypeVar, overload

from .base import Frame

if TYPE_CHECKING:
    from ..model import ModelOutput, ModelRequest

__all__ = ["FrameRun", "HasFrameParts", "LazyFrames", "Part", "PlainChunks", "count", "expand", "render_sse"]


@dataclass(slots=True)
class FrameRun:
    """Consecutive non-terminal frames named `event` whose payloads are `head + json(text) + tail` for each
    of `texts`, or, when `number` is set, `head + json(text) + tail + str(number + k) + "}"` for the k-th:
    a counter as the payload's last member (Responses' `sequence_number`)."""

    event: str | None
    head: str
    tail: str
    texts: Sequence[str]
    """A list, or `PlainChunks` (written by `sse_bytes` without a str per piece)."""
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

    def sse_bytes(self) -> bytes:
        """`self.sse().encode()`; from the text's bytes when the texts are `PlainChunks`: each piece's JSON
        is the piece between quotes, so the run is the pieces joined around one template."""
        texts = self.texts
        if type(texts) is not PlainChunks:
            return self.sse().encode()
        pieces = texts.unpacked()
        if not pieces:
            return b""
        lead = "data: " if self.event is None else "event: " + self.event + "\ndata: "
        # UTF-8 of a concatenation is the concatenation of the UTF-8s: the template is encoded apart
        start = (lead + self.head).encode() + b'"'
        if self.number is None:
            end = b'"' + self.tail.encode() + b"\n\n"
            return start + (end + start).join(pieces) + end
        k = len(pieces)
        ends = _quoted_suffixes(self.tail, self.number, k)
        return b"".join(chain.from_iterable(zip(repeat(start, k), pieces, ends, strict=True)))


_T = TypeVar("_T")


def _suffixes(tail: str, first: int, count: int) -> list[str]:
    """`[f"{tail}{n}}}\n\n" for n in range(first, first + count)]`: what ends each numbered event of a run."""
    return _numbered(_SUFFIXES, _suffix, tail, first, count)


def _quoted_suffixes(tail: str, first: int, count: int) -> list[bytes]:
    """`_suffixes(tail, first, count)`, each after the closing quote of its text and encoded (what
    `sse_bytes` ends each numbered event with)."""
    return _numbered(_QUOTED_SUFFIXES, _quoted_suffix, tail, first, count)


def _suffix(tail: str, n: int) -> str:
    return f"{tail}{n}}}\n\n"


def _quoted_suffix(tail: str, n: int) -> bytes:
    return f'"{tail}{n}}}\n\n'.encode()


def _numbered(cache: dict[str, list[_T]], make: Callable[[str, int], _T], tail: str, first: int,
              count: int) -> list[_T]:  # fmt: skip
    """`[make(tail, n) for n in range(first, first + count)]`. Every stream numbers from the same small
    counters, so they are made once per tail and sliced."""
    end = first + count
    if end > _MAX_NUMBER:  # a stream longer than any drawn one: made for this run alone
        return [make(tail, n) for n in range(first, end)]
    made = cache.get(tail)
    if made is None or len(made) < end:
        have = made or []
        # a new list, swapped in whole: another thread slicing the old one still reads it intact
        made = have + [make(tail, n) for n in range(len(have), max(end, 2 * len(have), 64))]
        if len(cache) >= 16:  # tails are constants of the codecs: bounded anyway
            cache.clear()
        cache[tail] = made
    return made[first:end]


_SUFFIXES: dict[str, list[str]] = {}
_QUOTED_SUFFIXES: dict[str, list[bytes]] = {}
_MAX_NUMBER = 4096


class _Materialized(Sequence[_T]):
    """A sequence made whole (`_all()`, kept) only when an item is read; its length known without it.
    Equal to another of its class, or to a sequence of the type `_all()` gives, holding the same items."""

    __slots__ = ()

    def _all(self) -> list[_T] | tuple[_T, ...]:
        raise NotImplementedError

    @overload
    def __getitem__(self, index: int) -> _T: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[_T]: ...
    def __getitem__(self, index: int | slice) -> _T | Sequence[_T]:
        return self._all()[index]

    def __iter__(self) -> Iterator[_T]:
        return iter(self._all())

    def __eq__(self, other: object) -> bool:
        items = self._all()
        # not isinstance(other, type(self)): compiled (synthgpt.native), that narrowing casts `other` always
        if isinstance(other, _Materialized) and type(other) is type(self):
            return items == other._all()
        return isinstance(other, type(items)) and items == other

    def __hash__(self) -> int:
        return hash(tuple(self._all()))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._all()!r})"


class PlainChunks(_Materialized[str]):
    """`chunk_text(text, size)` of a text that is ASCII and that JSON writes as is (no `"`, no `\\`, no
    control character: `encode_basestring(piece)` is the piece between quotes), whose pieces are then
    every `size` characters, the last one shorter. The pieces are made as strs only if read; a run
    writes them from `unpacked()`, the text's bytes cut by one `struct` unpack. Equal to the list of the
    same pieces."""

    __slots__ = ("_pieces", "size", "text")

    def __init__(self, text: str, size: int) -> None:
        self.text = text
        self.size = size
        self._pieces: list[str] | None = None

    @staticmethod
    def of(text: str, size: int) -> PlainChunks | None:
        """The chunks of `text`, or None when it is not plain (or `size` is not a chunk size: the caller's
        `chunk_text` says so)."""
        if size < 1 or not text.isascii():  # `isascii` reads a flag of the str: no scan
            return None
        data = text.encode()
        if len(data.translate(None, _JSON_ESCAPED)) != len(data):
            return None
        return PlainChunks(text, size)

    def unpacked(self) -> tuple[bytes, ...]:
        """The pieces as bytes (ASCII: the same characters)."""
        text, size = self.text, self.size
        length = len(text)
        if length <= size:
            return (text.encode(),) if text else ()
        return _unpacker(length, size)(text.encode())

    def _all(self) -> list[str]:
        pieces = self._pieces
        if pieces is None:
            text, size = self.text, self.size
            pieces = self._pieces = [text[i : i + size] for i in range(0, len(text), size)]
        return pieces

    def __len__(self) -> int:
        return -(-len(self.text) // self.size)


_JSON_ESCAPED = bytes(range(0x20)) + b'"\\'
"""The ASCII characters `encode_basestring` (and `jsonutil.dumps`) write escaped."""


def _unpacker(length: int, size: int) -> Callable[[bytes], tuple[bytes, ...]]:
    """A `struct` unpack cutting `length` bytes every `size` bytes (the last piece shorter), made once per
    (length, size): texts of one length recur across answers."""
    key = (length, size)
    unpack = _UNPACKERS.get(key)
    if unpack is None:
        whole, rest = divmod(length, size)
        unpack = struct.Struct(f"{size}s" * whole + (f"{rest}s" if rest else "")).unpack
        if len(_UNPACKERS) >= 512:  # bounded: one entry per text length and chunk size seen
            _UNPACKERS.clear()
        _UNPACKERS[key] = unpack
    return unpack


_UNPACKERS: dict[tuple[int, int], Callable[[bytes], tuple[bytes, ...]]] = {}


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
    (UTF-8 of a concatenation is the concatenation of the UTF-8s: the text between runs of `PlainChunks`,
    which are written as bytes, is encoded once)."""
    out: list[bytes] = []
    text: list[str] = []
    for p in parts:
        if isinstance(p, FrameRun):
            if type(p.texts) is PlainChunks:
                if text:
                    out.append("".join(text).encode())
                    text = []
                out.append(p.sse_bytes())
            else:
                text.append(p.sse())
        elif p.event is None:
            text.append("data: " + p.data + "\n\n")
        else:
            text.append("event: " + p.event + "\ndata: " + p.data + "\n\n")
    if text:
        out.append("".join(text).encode())
    return b"".join(out)


class LazyFrames(_Materialized[Frame]):
    """The frames of `parts`, expanded the first time one is read: an unpaced stream only needs their
    number (what a stream sent, for the journal and the metrics). Equal to the tuple of the same frames,
    as `plan_wire` gives it."""

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
