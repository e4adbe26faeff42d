"""Triggers: `!MOCK_…!` markers in the last user message that let any client pick a scenario, no config.

    !MOCK_TOOL_CALL:<tool>[:<json args>]!   call <tool> (args drawn from its schema when omitted)
    !MOCK_PARALLEL_TOOL_CALLS!              one call per declared tool (one, if parallel_tool_calls=false)
    !MOCK_ERROR:<status>!                   an HTTP error in the provider's shape, with retry headers
    !MOCK_INCOMPLETE[:<tokens>]!            cut as if the output-token limit were reached
    !MOCK_TRUNCATE:<frames>!                stream closes cleanly after <frames> frames, no terminator;
                                            non-streaming: the first half of the JSON body, clean close
    !MOCK_DISCONNECT:<frames>!              connection dropped after <frames> frames; non-streaming:
                                            the first half of the JSON body, then dropped
    !MOCK_STREAM_ERROR[:<frames>]!          an error event mid-stream (after 2 frames by default)
    !MOCK_MALFORMED:<frame>!                frame <frame> (0-based) is sent as invalid JSON
    !MOCK_UNKNOWN_ITEM[:<frames>]!          an output item of a kind no SDK knows (Responses)
    !MOCK_DELAY:<ms>!                       wait before the first byte, stream or not
    !MOCK_SLOW:<ms>!                        wait between frames

Several may be combined in one message. A frame is one SSE event. A misspelt or malformed trigger is a
400 naming it, rather than silently ignored text.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from ..errors import RequestError, suggest
from ..model import ErrorSpec, Fault, FaultKind, ModelRequest, StreamPlan, TextPart
from ..text_json import decode_in_text

__all__ = [
    "TRIGGER_NAMES",
    "TRIGGER_PATTERN",
    "Triggers",
    "parse_triggers",
    "strip_triggers",
    "without_triggers",
]

TRIGGER_PATTERN = r"!MOCK_[A-Z]"
"""What a message with a trigger contains (the rule's matcher looks for it)."""

TRIGGER_NAMES = (
    "TOOL_CALL",
    "PARALLEL_TOOL_CALLS",
    "ERROR",
    "INCOMPLETE",
    "TRUNCATE",
    "DISCONNECT",
    "STREAM_ERROR",
    "MALFORMED",
    "UNKNOWN_ITEM",
    "DELAY",
    "SLOW",
)
_FRAME_FAULTS: dict[str, FaultKind] = {
    "TRUNCATE": "truncate",
    "DISCONNECT": "disconnect",
    "STREAM_ERROR": "stream_error",
    "MALFORMED": "malformed",
    "UNKNOWN_ITEM": "unknown_item",
}
_OPTIONAL_ARG = {"STREAM_ERROR": 2, "UNKNOWN_ITEM": 0}
_MAX_WAIT_MS = 600_000
_START = re.compile(r"!MOCK_([A-Z_]+)")
_TOOL_NAME = re.compile(r"[A-Za-z0-9_.-]+")
RETRY_HINT_MS = 10
"""Retry hint sent with triggered retryable errors, so SDK retries are quick in tests."""


@dataclass(frozen=True)
class Triggers:
    """Every trigger of one message, combined."""

    tool_calls: tuple[tuple[str, Any], ...] = ()
    """(tool name, arguments or None for schema-drawn ones), in message order."""
    parallel_tool_calls: bool = False
    error_status: int | None = None
    incomplete: int | None = None
    """Tokens to cut the answer at; 0 means half of the answer."""
    faults: tuple[Fault, ...] = ()
    delay_ms: float = 0.0
    slow_ms: float = 0.0
    spans: tuple[tuple[int, int], ...] = field(default=(), repr=False)

    def stream_plan(self) -> StreamPlan | None:
        if not (self.faults or self.delay_ms or self.slow_ms):
            return None
        return StreamPlan(first_delay_ms=self.delay_ms, interval_ms=self.slow_ms, faults=self.faults)

    def error_spec(self) -> ErrorSpec | None:
        status = self.error_status
        if status is None:
            return None
        from ..codec.errors import default_message

        retryable = status in (408, 409, 429) or status >= 500
        return ErrorSpec(
            status=status,
            message=f"{default_message(status)} (synthgpt trigger !MOCK_ERROR:{status}!)",
            retry_after_ms=RETRY_HINT_MS if retryable else None,
        )


def _bad(text: str) -> RequestError:
    known = ", ".join(f"!MOCK_{n}!" for n in TRIGGER_NAMES)
    return RequestError(f"{text} Triggers: {known}.", "messages")


def _int_arg(name: str, arg: str | None, lo: int, hi: int) -> int:
    if arg is None and name in _OPTIONAL_ARG:
        return _OPTIONAL_ARG[name]
    try:
        value = int(arg or "")
    except ValueError:
        raise _bad(f"!MOCK_{name}! needs a whole number between {lo} and {hi}, as in !MOCK_{name}:{lo}!, "
                   f"got {arg!r}.") from None
    if not lo <= value <= hi:
        raise _bad(f"!MOCK_{name}:{value}! is out of range: use {lo} to {hi}.")
    return value


def _tool_call(text: str, at: int) -> tuple[str, Any, int]:
    """Parse `<tool>[:<json>]` starting at `at`; returns (name, args, end)."""
    m = _TOOL_NAME.match(text, at)
    if m is None:
        raise _bad('!MOCK_TOOL_CALL! needs a tool name, as in !MOCK_TOOL_CALL:get_weather:{"city":"Paris"}!.')
    end = m.end()
    if not text.startswith(":", end):
        return m.group(0), None, end
    try:
        args, end = decode_in_text(text, end + 1)
    except json.JSONDecodeError as exc:
        raise _bad(f"!MOCK_TOOL_CALL:{m.group(0)}:…! needs JSON arguments: {exc.msg}.") from None
    if not isinstance(args, dict):
        raise _bad(f"!MOCK_TOOL_CALL:{m.group(0)}:…! takes a JSON object of arguments.")
    return m.group(0), args, end


def parse_triggers(text: str) -> Triggers:
    """Every trigger in `text`; raises RequestError (param `messages`) for an unknown or malformed one."""
    calls: list[tuple[str, Any]] = []
    faults: list[Fault] = []
    spans: list[tuple[int, int]] = []
    values: dict[str, Any] = {}
    pos = 0
    while (m := _START.search(text, pos)) is not None:
        name = m.group(1)
        if name not in TRIGGER_NAMES:
            hint = suggest(name, TRIGGER_NAMES)
            did_you_mean = f" — did you mean !MOCK_{hint}!?" if hint else "."
            raise _bad(f"Unknown trigger !MOCK_{name}!{did_you_mean}")
        end = m.end()
        arg: str | None = None
        if name == "TOOL_CALL":
            if not text.startswith(":", end):
                raise _bad("!MOCK_TOOL_CALL! needs a tool name, as in !MOCK_TOOL_CALL:get_weather!.")
            tool, args, end = _tool_call(text, end + 1)
            calls.append((tool, args))
        elif text.startswith(":", end):
            close = text.find("!", end + 1)
            arg, end = (text[end + 1 :], len(text)) if close < 0 else (text[end + 1 : close], close)
        if not text.startswith("!", end):
            raise _bad(f"Trigger !MOCK_{name}… is not closed with '!'.")
        end += 1
        spans.append((m.start(), end))
        pos = end
        if name in _FRAME_FAULTS:
            faults.append(Fault(kind=_FRAME_FAULTS[name], after=_int_arg(name, arg, 0, 100_000)))
        elif name == "ERROR":
            values["error_status"] = _int_arg(name, arg, 400, 599)
        elif name == "INCOMPLETE":
            values["incomplete"] = 0 if arg is None else _int_arg(name, arg, 1, 1_000_000)
        elif name in ("DELAY", "SLOW"):
            values[name.lower() + "_ms"] = float(_int_arg(name, arg, 0, _MAX_WAIT_MS))
        elif name == "PARALLEL_TOOL_CALLS":
            if arg is not None:
                raise _bad("!MOCK_PARALLEL_TOOL_CALLS! takes no argument.")
            values["parallel_tool_calls"] = True
    return Triggers(tool_calls=tuple(calls), faults=tuple(faults), spans=tuple(spans), **values)


def strip_triggers(text: str, triggers: Triggers) -> str:
    """`text` without its triggers: what the answer's content is derived from."""
    out, last = [], 0
    for start, end in triggers.spans:
        out.append(text[last:start])
        last = end
    out.append(text[last:])
    return re.sub(r"[ \t]{2,}", " ", "".join(out)).strip()


def _clean(text: str) -> str:
    if "!MOCK_" not in text:
        return text
    try:
        return strip_triggers(text, parse_triggers(text))
    except RequestError:  # not well-formed: the trigger rule refuses it; other rules see the text as written
        return text


def without_triggers(req: ModelRequest) -> ModelRequest:
    """`req` with every trigger taken out of its messages: what generated content is drawn from.

    Triggers steer delivery; they are never part of what the user asked, so no answer, reasoning, summary
    or tool argument may quote them, nor one that came back in a tool result or an earlier answer. The
    request itself (its fingerprint, what matchers see) keeps them. Returns `req` itself when no message
    holds one (the common case costs a substring test per message).
    """
    for m in req.messages:  # a loop, not `any` of a generator: this runs for every answer
        if "!MOCK_" in m.content:
            break
    else:
        return req
    msgs = []
    for m in req.messages:
        if "!MOCK_" in m.content:
            parts = tuple(
                TextPart(text=_clean(p.text)) if isinstance(p, TextPart) else p for p in m.parts
            )
            m = m.model_copy(update={"content": _clean(m.content), "parts": parts})
        msgs.append(m)
    return req.model_copy(update={"messages": tuple(msgs)})
