"""syrupy extensions: SSE streams as `.sse` text files and JSON bodies / journal entries as `.json`.

    def test_stream(snapshot, synthgpt_openai):
        raw = ...  # bytes of an SSE response
        assert raw == snapshot(extension_class=SSESnapshotExtension)

    MaskedSSE = SSESnapshotExtension.with_options(mask=["id", "created"])
    assert raw == snapshot(extension_class=MaskedSSE)

An `.sse` snapshot is a normalised SSE transcript: one frame per block, blocks separated by a blank line,
`\\n` line ends, comments kept. It is still a valid stream (it can be replayed), and a changed frame shows
as one changed line in the diff. `pretty=True` spreads each JSON payload over several `data:` lines; SSE
joins them with newlines, so the payload parses to the same value.

A `.json` snapshot has its keys sorted (stable whatever order the code built them in) and accepts dicts,
pydantic models (SDK objects included), journal records (`CallRecord`, without the real-time
`duration_ms`) and httpx responses.

Masks name keys to replace by `"<masked>"`: a bare name (`"id"`) masks that key at any depth, a dotted
path (`"usage.total_tokens"`, `"choices.0.delta"`) masks one place from the top.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, ClassVar

from pydantic import BaseModel
from syrupy.extensions.json import JSONSnapshotExtension as _SyrupyJSON
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode
from syrupy.types import PropertyFilter, PropertyMatcher, SerializableData, SerializedData

from ..codec.base import Frame
from ..journal import CallRecord

__all__ = [
    "MASK",
    "JSONSnapshotExtension",
    "SSESnapshotExtension",
    "apply_mask",
    "normalize_sse",
    "to_jsonable",
]

MASK = "<masked>"


def apply_mask(value: Any, mask: Iterable[str], replacement: Any = MASK) -> Any:
    """A copy of `value` (plain JSON data) with the masked keys replaced."""
    names = {m for m in mask if "." not in m}
    paths = [m.split(".") for m in mask if "." in m]
    return _mask(value, names, paths, (), replacement)


def _mask(value: Any, names: set[str], paths: list[list[str]], at: tuple[str, ...], repl: Any) -> Any:
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for k, v in value.items():
            here = (*at, str(k))
            hit = k in names or any(p == list(here) for p in paths)
            out[k] = repl if hit else _mask(v, names, paths, here, repl)
        return out
    if isinstance(value, list | tuple):
        return [
            repl if any(p == [*at, str(i)] for p in paths) else _mask(v, names, paths, (*at, str(i)), repl)
            for i, v in enumerate(value)
        ]
    return value


def to_jsonable(data: Any) -> Any:
    """Plain JSON data for what tests usually hold: dicts, lists, pydantic models, records, responses."""
    if isinstance(data, CallRecord):
        from ..journal.records import record_to_dict

        out = record_to_dict(data)
        out.pop("duration_ms")  # real time: it would differ on every run
        return out
    if isinstance(data, BaseModel):
        return data.model_dump(mode="json", by_alias=True)
    if isinstance(data, Mapping):
        return {str(k): to_jsonable(v) for k, v in data.items()}
    if isinstance(data, list | tuple):
        return [to_jsonable(v) for v in data]
    if isinstance(data, str | int | float | bool) or data is None:
        return data
    if hasattr(data, "json") and hasattr(data, "status_code"):  # an httpx / httpx2 response
        return data.json()
    raise TypeError(f"cannot snapshot {type(data).__name__} as JSON: give a dict, a list or a pydantic model")


# ------------------------------------------------------------------------------------------------ SSE


def _sse_text(data: Any) -> str:
    if isinstance(data, bytes | bytearray | memoryview):
        return bytes(data).decode("utf-8")
    if isinstance(data, str):
        return data
    if isinstance(data, Sequence) and all(isinstance(f, Frame) for f in data):
        from ..codec.base import render_frame

        return b"".join(render_frame(f) for f in data).decode("utf-8")
    if isinstance(data, Sequence) and all(isinstance(c, bytes) for c in data):
        return b"".join(data).decode("utf-8")
    if hasattr(data, "read") and hasattr(data, "status_code"):  # an httpx / httpx2 response
        return bytes(data.read()).decode("utf-8")
    raise TypeError(
        f"cannot snapshot {type(data).__name__} as SSE: give the stream's bytes or text, a list of byte "
        "chunks or a list of Frames"
    )


def _events(text: str) -> list[list[tuple[str, str]]]:
    """Split SSE text into events, each a list of (field, value); comments have the field ':'."""
    events: list[list[tuple[str, str]]] = []
    current: list[tuple[str, str]] = []
    for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        if line == "":
            if current:
                events.append(current)
                current = []
            continue
        if line.startswith(":"):
            current.append((":", line[1:].removeprefix(" ")))
            continue
        name, sep, value = line.partition(":")
        current.append((name, value.removeprefix(" ") if sep else ""))
    if current:
        events.append(current)  # an unterminated last event (a cut stream) is kept: it is evidence
    return events


def normalize_sse(data: Any, *, mask: Iterable[str] = (), pretty: bool = False) -> str:
    """The text an `.sse` snapshot holds for `data`."""
    mask = tuple(mask)
    blocks: list[str] = []
    for event in _events(_sse_text(data)):
        lines: list[str] = []
        data_lines = [v for k, v in event if k == "data"]
        data_done = False
        for field, value in event:
            if field == ":":
                lines.append(f": {value}" if value else ":")
            elif field != "data":
                lines.append(f"{field}: {value}")
            elif not data_done:
                data_done = True
                lines.extend(f"data: {v}" for v in _payload_lines("\n".join(data_lines), mask, pretty))
        blocks.append("\n".join(lines))
    return "".join(b + "\n\n" for b in blocks)


def _payload_lines(payload: str, mask: tuple[str, ...], pretty: bool) -> list[str]:
    if not mask and not pretty:
        return payload.split("\n")
    try:
        value = json.loads(payload)
    except ValueError:
        return payload.split("\n")  # `[DONE]` or a malformed frame: kept verbatim
    if mask:
        value = apply_mask(value, mask)
    if pretty:
        return json.dumps(value, indent=2, ensure_ascii=False).split("\n")
    return [json.dumps(value, separators=(",", ":"), ensure_ascii=False)]


class SSESnapshotExtension(SingleFileSnapshotExtension):
    """Snapshots an SSE stream as a `.sse` text file, one frame per block."""

    file_extension = "sse"
    _write_mode = WriteMode.TEXT
    mask: ClassVar[tuple[str, ...]] = ()
    pretty: ClassVar[bool] = False

    def serialize(
        self,
        data: SerializableData,
        *,
        exclude: PropertyFilter | None = None,
        include: PropertyFilter | None = None,
        matcher: PropertyMatcher | None = None,
    ) -> SerializedData:
        return normalize_sse(data, mask=self.mask, pretty=self.pretty)

    @classmethod
    def with_options(
        cls, *, mask: Iterable[str] | None = None, pretty: bool | None = None
    ) -> type[SSESnapshotExtension]:
        attrs: dict[str, Any] = {}
        if mask is not None:
            attrs["mask"] = tuple(mask)
        if pretty is not None:
            attrs["pretty"] = pretty
        return type(cls.__name__, (cls,), attrs)

    @classmethod
    def with_mask(cls, mask: Iterable[str]) -> type[SSESnapshotExtension]:
        return cls.with_options(mask=mask)


class JSONSnapshotExtension(_SyrupyJSON):
    """Snapshots a body or a journal entry as sorted-key JSON (syrupy's exclude/matcher still apply)."""

    mask: ClassVar[tuple[str, ...]] = ()

    def serialize(
        self,
        data: SerializableData,
        *,
        exclude: PropertyFilter | None = None,
        include: PropertyFilter | None = None,
        matcher: PropertyMatcher | None = None,
    ) -> SerializedData:
        value = to_jsonable(data)
        if self.mask:
            value = apply_mask(value, self.mask)
        return super().serialize(value, exclude=exclude, include=include, matcher=matcher)

    @classmethod
    def with_options(cls, *, mask: Iterable[str] | None = None) -> type[JSONSnapshotExtension]:
        return type(cls.__name__, (cls,), {} if mask is None else {"mask": tuple(mask)})

    @classmethod
    def with_mask(cls, mask: Iterable[str]) -> type[JSONSnapshotExtension]:
        return cls.with_options(mask=mask)
