"""Cohere v2 chat (`POST /v2/chat`): JSON, or an SSE stream of typed events.

The stream is `message-start`, then each content item (thinking, then text) as `content-start` →
`content-delta`s → `content-end`; when the answer calls tools, its text is the `tool_plan` instead
(`tool-plan-delta`s) and each call is `tool-call-start` (id and name) → `tool-call-delta`s (the arguments'
JSON text) → `tool-call-end`; `message-end` carries the finish reason and the usage. Every event has an
`event:` line and its `type` in the data, as Cohere sends them. The non-stream body is their fold.

A mid-stream error is a `message-end` with `finish_reason: "ERROR"` and the message in `delta.error`, the way
Cohere reports a generation that failed after it started. HTTP errors are `{"id", "message"}`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...errors import RequestError
from ...model import (
    ApiKind,
    ErrorSpec,
    Fault,
    ModelOutput,
    ModelRequest,
    ReasoningPart,
    TextOut,
    ToolCallPart,
)
from ...seeding import HEX, derive_seed, token_from_seed
from ..base import Frame
from ..common import dumps, in_schema_order
from ..errors import error_fields, restate_default
from ..sse import chunk_text
from .request import decode_cohere_chat

__all__ = ["CohereCodec", "cohere_error_body"]

_FINISH = {"stop": "COMPLETE", "length": "MAX_TOKENS", "tool_calls": "TOOL_CALL", "content_filter": "ERROR"}
_MESSAGES = {
    400: "invalid request",
    401: "invalid api token",
    403: "forbidden",
    404: "model not found",
    422: "unprocessable entity",
    429: "You are using a Trial key, which is limited to 10 API calls / minute.",
    500: "internal server error, this has been reported to our developers",
    503: "service unavailable",
    504: "gateway timeout",
}
_DEFAULT_FAULT_MESSAGE = Fault.model_fields["message"].default
_LOWER = "abcdefghijklmnopqrstuvwxyz0123456789"

Event = dict[str, Any]


def _uuid(*key: object) -> str:
    h = token_from_seed(derive_seed(*key), 32, HEX)
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:]}"


def cohere_error_body(error: ErrorSpec | RequestError, status: int) -> dict[str, Any]:
    if isinstance(error, ErrorSpec) and error.body is not None:
        return dict(error.body)
    message, _, _, _ = error_fields(error, status)
    own = _MESSAGES.get(status, _MESSAGES[500] if status >= 500 else "invalid request")
    return {"id": _uuid("cohere-error", status, message), "message": restate_default(message, status, own)}


class CohereCodec:
    """The Cohere v2 chat wire format."""

    api: ApiKind = "cohere"

    def decode(self, body: Any, headers: Mapping[str, str], params: Mapping[str, str]) -> ModelRequest:
        return ModelRequest.from_decoded(decode_cohere_chat(body, headers))

    def body(self, output: ModelOutput, request: ModelRequest) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant"}
        plan, content, calls = _pieces(output, request)
        if calls:
            message["tool_plan"] = plan
            message["tool_calls"] = [_call(c, c["arguments"]) for c in calls]
        else:
            message["content"] = [dict(item) for item in content] or [{"type": "text", "text": ""}]
        return {"id": _id(output), "message": message, "finish_reason": _finish(output, bool(calls)),
                "usage": _usage(output)}  # fmt: skip

    def events(self, output: ModelOutput, request: ModelRequest) -> list[Event]:
        size = output.stream.chunk_chars
        plan, content, calls = _pieces(output, request)
        events: list[Event] = [{"id": _id(output), "type": "message-start",
                                "delta": {"message": {"role": "assistant"}}}]  # fmt: skip
        if calls:
            events.extend({"type": "tool-plan-delta", "delta": {"message": {"tool_plan": d}}}
                          for d in chunk_text(plan, size))  # fmt: skip
            for i, c in enumerate(calls):
                start = {"message": {"tool_calls": _call(c, "")}}
                events.append({"type": "tool-call-start", "index": i, "delta": start})
                events.extend({"type": "tool-call-delta", "index": i,
                               "delta": {"message": {"tool_calls": {"function": {"arguments": d}}}}}
                              for d in chunk_text(c["arguments"], size))  # fmt: skip
                events.append({"type": "tool-call-end", "index": i})
        else:
            for i, item in enumerate(content or [{"type": "text", "text": ""}]):
                kind = item["type"]
                events.append({"type": "content-start", "index": i,
                               "delta": {"message": {"content": {"type": kind, kind: ""}}}})  # fmt: skip
                events.extend({"type": "content-delta", "index": i,
                               "delta": {"message": {"content": {kind: d}}}}
                              for d in chunk_text(item[kind], size))  # fmt: skip
                events.append({"type": "content-end", "index": i})
        events.append({"type": "message-end", "delta": {"finish_reason": _finish(output, bool(calls)),
                                                        "usage": _usage(output)}})  # fmt: skip
        return events

    def frames(self, output: ModelOutput, request: ModelRequest) -> list[Frame]:
        events = self.events(output, request)
        last = len(events) - 1
        return [Frame(dumps(e), e["type"], i == last) for i, e in enumerate(events)]

    def error_frames(
        self, fault: Fault, output: ModelOutput, request: ModelRequest, sent: int
    ) -> list[Frame]:
        message = _MESSAGES[500] if fault.message == _DEFAULT_FAULT_MESSAGE else fault.message
        end = {"type": "message-end", "delta": {"error": message, "finish_reason": "ERROR"}}
        return [Frame(dumps(end), "message-end")]

    def error_body(self, error: ErrorSpec | RequestError, status: int) -> dict[str, Any]:
        return cohere_error_body(error, status)

    def replay_effect(self, output: ModelOutput, request: ModelRequest) -> None:
        """Nothing to redo when the server resends an answer: this codec keeps no state."""
        return None

    def response_headers(self, request_id: str, processing_ms: int) -> dict[str, str]:
        return {"x-debug-trace-id": request_id[4:], "num_chars": "0", "x-endpoint-monthly-call-limit": "1000"}


def _id(output: ModelOutput) -> str:
    return output.stream.id or _uuid(output.id_seed, "cohere-response")


def _call(call: dict[str, str], arguments: str) -> dict[str, Any]:
    return {"id": call["id"], "type": "function", "function": {"name": call["name"], "arguments": arguments}}


def _pieces(
    output: ModelOutput, request: ModelRequest
) -> tuple[str, list[dict[str, str]], list[dict[str, str]]]:
    """(tool plan, content items, tool calls): the text is the plan when the answer calls tools."""
    thinking = "".join(p.text for p in output.parts if isinstance(p, ReasoningPart))
    text = in_schema_order("".join(p.text for p in output.parts if isinstance(p, TextOut)), request)
    content: list[dict[str, str]] = []
    if thinking:
        content.append({"type": "thinking", "thinking": thinking})
    if text:
        content.append({"type": "text", "text": text})
    calls = [{"id": _call_id(output, c, i), "name": c.name, "arguments": c.arguments}
             for i, c in enumerate(output.tool_calls)]  # fmt: skip
    return text, content, calls


def _call_id(output: ModelOutput, call: ToolCallPart, index: int) -> str:
    """`<name>_` + 12 seeded characters; an id already of that form (a recorded one) is kept."""
    head, tail = call.id[: len(call.name) + 1], call.id[len(call.name) + 1 :]
    if head == call.name + "_" and len(tail) == 12 and all(ch in _LOWER for ch in tail):
        return call.id
    return f"{call.name}_{token_from_seed(derive_seed(output.id_seed, 'cohere-call', index), 12, _LOWER)}"


def _finish(output: ModelOutput, calls: bool) -> str:
    if output.choices[0].stop_sequence is not None:
        return "STOP_SEQUENCE"
    reason = _FINISH[output.finish_reason]
    return "COMPLETE" if reason == "TOOL_CALL" and not calls else reason


def _usage(output: ModelOutput) -> dict[str, Any]:
    usage = output.usage
    tokens = {"input_tokens": usage.prompt_tokens, "output_tokens": usage.completion_tokens}
    out: dict[str, Any] = {"billed_units": dict(tokens), "tokens": tokens}
    if usage.cached_tokens:
        out["cached_tokens"] = usage.cached_tokens
    return out
