"""OpenAI's answers read back into a recording: Chat Completions, Responses, embeddings."""

from __future__ import annotations

import base64
from array import array
from typing import Any

from ...model import FinishReason
from ..recorded import Recorded, RecordedCall, arguments_text
from .common import as_dict, as_int, as_list, as_str

__all__ = ["chat_body", "chat_stream", "embeddings_body", "responses_body", "responses_stream"]

_CHAT_FINISH: dict[str, FinishReason] = {
    "stop": "stop",
    "length": "length",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
    "content_filter": "content_filter",
}


def _chat_usage(usage: Any) -> dict[str, int]:
    usage = as_dict(usage)
    if not usage:
        return {}
    return {
        "prompt_tokens": as_int(usage.get("prompt_tokens")),
        "completion_tokens": as_int(usage.get("completion_tokens")),
        "reasoning_tokens": as_int(as_dict(usage.get("completion_tokens_details")).get("reasoning_tokens")),
        "cached_tokens": as_int(as_dict(usage.get("prompt_tokens_details")).get("cached_tokens")),
    }


def chat_body(body: Any) -> Recorded:
    body = as_dict(body)
    choice = as_dict(as_list(body.get("choices"))[0] if as_list(body.get("choices")) else {})
    message = as_dict(choice.get("message"))
    calls = [
        RecordedCall(
            as_str(fn.get("name")), arguments_text(fn.get("arguments")), as_str(tc.get("id")) or None
        )
        for tc in map(as_dict, as_list(message.get("tool_calls")))
        for fn in [as_dict(tc.get("function"))]
    ]
    return Recorded(
        text=as_str(message.get("content")),
        reasoning=as_str(message.get("reasoning_content")),
        tool_calls=calls,
        finish_reason=_CHAT_FINISH.get(as_str(choice.get("finish_reason"))),
        usage=_chat_usage(body.get("usage")),
        id=as_str(body.get("id")) or None,
        created=as_int(body.get("created"), None),
    )


def chat_stream(events: list[Any]) -> Recorded:
    out = Recorded(deltas=[])
    calls: dict[int, dict[str, str]] = {}
    for event in map(as_dict, events):
        out.id = out.id or as_str(event.get("id")) or None
        if out.created is None:
            out.created = as_int(event.get("created"), None)
        if event.get("usage"):
            out.usage = _chat_usage(event["usage"])
        for choice in map(as_dict, as_list(event.get("choices"))):
            if as_int(choice.get("index")) != 0:
                continue
            delta = as_dict(choice.get("delta"))
            text = delta.get("content")
            if isinstance(text, str) and text:
                out.text += text
                assert out.deltas is not None
                out.deltas.append(text)
            out.reasoning += as_str(delta.get("reasoning_content"))
            for tc in map(as_dict, as_list(delta.get("tool_calls"))):
                call = calls.setdefault(as_int(tc.get("index")), {"id": "", "name": "", "arguments": ""})
                fn = as_dict(tc.get("function"))
                call["id"] = call["id"] or as_str(tc.get("id"))
                call["name"] += as_str(fn.get("name"))
                call["arguments"] += as_str(fn.get("arguments"))
            if choice.get("finish_reason"):
                out.finish_reason = _CHAT_FINISH.get(as_str(choice["finish_reason"]))
    out.tool_calls = [
        RecordedCall(c["name"], c["arguments"], c["id"] or None) for _, c in sorted(calls.items())
    ]
    return out


def responses_body(body: Any) -> Recorded:
    body = as_dict(body)
    out = Recorded(id=as_str(body.get("id")) or None, created=as_int(body.get("created_at"), None))
    for item in map(as_dict, as_list(body.get("output"))):
        kind = item.get("type")
        if kind == "reasoning":
            shown = "".join(as_str(as_dict(s).get("text")) for s in as_list(item.get("summary")))
            out.reasoning += shown
            out.hidden_reasoning = out.hidden_reasoning or not shown
            out.signature = out.signature or as_str(item.get("encrypted_content"))
        elif kind == "message":
            out.text += "".join(
                as_str(c.get("text"))
                for c in map(as_dict, as_list(item.get("content")))
                if c.get("type") == "output_text"
            )
        elif kind == "function_call":
            call_id = as_str(item.get("call_id")) or None
            out.tool_calls.append(
                RecordedCall(as_str(item.get("name")), arguments_text(item.get("arguments")), call_id)
            )
    reason = as_str(as_dict(body.get("incomplete_details")).get("reason"))
    if body.get("status") == "incomplete":
        out.finish_reason = "content_filter" if reason == "content_filter" else "length"
    else:
        out.finish_reason = "tool_calls" if out.tool_calls else "stop"
    usage = as_dict(body.get("usage"))
    if usage:
        out.usage = {
            "prompt_tokens": as_int(usage.get("input_tokens")),
            "completion_tokens": as_int(usage.get("output_tokens")),
            "reasoning_tokens": as_int(as_dict(usage.get("output_tokens_details")).get("reasoning_tokens")),
            "cached_tokens": as_int(as_dict(usage.get("input_tokens_details")).get("cached_tokens")),
        }
    return out


def responses_stream(events: list[Any]) -> Recorded:
    """The final `response.completed` (or `.incomplete`) event holds the whole answer; the text deltas
    come from the `response.output_text.delta` events."""
    final: Any = None
    deltas: list[str] = []
    for event in map(as_dict, events):
        kind = event.get("type")
        if kind == "response.output_text.delta" and isinstance(event.get("delta"), str):
            deltas.append(event["delta"])
        elif kind in ("response.completed", "response.incomplete", "response.failed"):
            final = event.get("response")
    out = responses_body(final)
    out.deltas = deltas
    return out


def _vector(value: Any) -> list[float]:
    if isinstance(value, str):  # `encoding_format: base64`: little-endian float32s
        floats = array("f")
        floats.frombytes(base64.b64decode(value))
        return list(floats)
    return [float(v) for v in as_list(value) if isinstance(v, int | float)]


def embeddings_body(body: Any) -> Recorded:
    body = as_dict(body)
    data = sorted(map(as_dict, as_list(body.get("data"))), key=lambda d: as_int(d.get("index")))
    usage = as_dict(body.get("usage"))
    return Recorded(
        embeddings=[_vector(d.get("embedding")) for d in data],
        usage={"prompt_tokens": as_int(usage.get("prompt_tokens"))} if usage else {},
    )
