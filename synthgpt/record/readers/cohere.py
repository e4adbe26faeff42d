"""Cohere v2 chat answers read back into a recording, whole or as its typed SSE events."""

from __future__ import annotations

from typing import Any

from ...model import FinishReason
from ..recorded import Recorded, RecordedCall, arguments_text
from .common import as_dict, as_int, as_list, as_str

__all__ = ["cohere_body", "cohere_stream"]

_FINISH: dict[str, FinishReason] = {
    "COMPLETE": "stop",
    "STOP_SEQUENCE": "stop",
    "MAX_TOKENS": "length",
    "TOOL_CALL": "tool_calls",
    "ERROR": "content_filter",
    "TIMEOUT": "length",
}


def _usage(usage: dict[str, Any]) -> dict[str, int]:
    tokens = as_dict(usage.get("tokens")) or as_dict(usage.get("billed_units"))
    if not tokens:
        return {}
    return {
        "prompt_tokens": as_int(tokens.get("input_tokens")),
        "completion_tokens": as_int(tokens.get("output_tokens")),
    }


def cohere_body(body: Any) -> Recorded:
    body = as_dict(body)
    message = as_dict(body.get("message"))
    out = Recorded(id=as_str(body.get("id")) or None)
    for item in map(as_dict, as_list(message.get("content"))):
        if item.get("type") == "text":
            out.text += as_str(item.get("text"))
        elif item.get("type") == "thinking":
            out.reasoning += as_str(item.get("thinking"))
    out.text = out.text or as_str(message.get("tool_plan"))
    for call in map(as_dict, as_list(message.get("tool_calls"))):
        fn = as_dict(call.get("function"))
        out.tool_calls.append(
            RecordedCall(
                as_str(fn.get("name")), arguments_text(fn.get("arguments")), as_str(call.get("id")) or None
            )
        )
    out.finish_reason = _FINISH.get(as_str(body.get("finish_reason")))
    out.usage = _usage(as_dict(body.get("usage")))
    return out


def cohere_stream(events: list[Any]) -> Recorded:
    out = Recorded(deltas=[])
    calls: list[dict[str, str]] = []
    for event in map(as_dict, events):
        kind = event.get("type")
        message = as_dict(as_dict(event.get("delta")).get("message"))
        if kind == "message-start":
            out.id = as_str(event.get("id")) or None
        elif kind == "content-delta":
            content = as_dict(message.get("content"))
            if isinstance(content.get("text"), str):
                out.text += content["text"]
                assert out.deltas is not None
                out.deltas.append(content["text"])
            out.reasoning += as_str(content.get("thinking"))
        elif kind == "tool-plan-delta":
            piece = as_str(message.get("tool_plan"))
            out.text += piece
            assert out.deltas is not None
            out.deltas.append(piece)
        elif kind == "tool-call-start":
            call = as_dict(message.get("tool_calls"))
            fn = as_dict(call.get("function"))
            calls.append(
                {
                    "id": as_str(call.get("id")),
                    "name": as_str(fn.get("name")),
                    "arguments": as_str(fn.get("arguments")),
                }
            )
        elif kind == "tool-call-delta" and calls:
            fn = as_dict(as_dict(message.get("tool_calls")).get("function"))
            calls[-1]["arguments"] += as_str(fn.get("arguments"))
        elif kind == "message-end":
            delta = as_dict(event.get("delta"))
            out.finish_reason = _FINISH.get(as_str(delta.get("finish_reason")))
            out.usage = _usage(as_dict(delta.get("usage")))
    out.tool_calls = [RecordedCall(c["name"], c["arguments"] or "{}", c["id"] or None) for c in calls]
    return out
