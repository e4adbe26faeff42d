"""Anthropic Messages answers read back into a recording, whole or streamed."""

from __future__ import annotations

import json
from typing import Any

from ...model import FinishReason
from ..recorded import Recorded, RecordedCall, arguments_text
from .common import as_dict, as_int, as_list, as_str

__all__ = ["messages_body", "messages_stream"]

_STOP: dict[str, FinishReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "max_tokens": "length",
    "tool_use": "tool_calls",
    "refusal": "content_filter",
}


def _usage(usage: dict[str, Any], out: Recorded) -> None:
    cached = as_int(usage.get("cache_read_input_tokens"))
    if "input_tokens" in usage:
        out.usage["prompt_tokens"] = as_int(usage.get("input_tokens")) + cached
        out.usage["cached_tokens"] = cached
    if "output_tokens" in usage:
        out.usage["completion_tokens"] = as_int(usage.get("output_tokens"))


def _block(block: dict[str, Any], out: Recorded) -> None:
    kind = block.get("type")
    if kind == "text":
        out.text += as_str(block.get("text"))
    elif kind == "thinking":
        out.reasoning += as_str(block.get("thinking"))
        out.signature = out.signature or as_str(block.get("signature"))
    elif kind == "tool_use":
        out.tool_calls.append(
            RecordedCall(
                as_str(block.get("name")), arguments_text(block.get("input")), as_str(block.get("id")) or None
            )
        )


def messages_body(body: Any) -> Recorded:
    body = as_dict(body)
    out = Recorded(id=as_str(body.get("id")) or None)
    for block in map(as_dict, as_list(body.get("content"))):
        _block(block, out)
    out.finish_reason = _STOP.get(as_str(body.get("stop_reason")))
    _usage(as_dict(body.get("usage")), out)
    return out


def messages_stream(events: list[Any]) -> Recorded:
    out = Recorded(deltas=[])
    blocks: dict[int, dict[str, Any]] = {}
    for event in map(as_dict, events):
        kind = event.get("type")
        if kind == "message_start":
            message = as_dict(event.get("message"))
            out.id = as_str(message.get("id")) or None
            _usage(as_dict(message.get("usage")), out)
        elif kind == "content_block_start":
            block = dict(as_dict(event.get("content_block")))
            if block.get("type") == "tool_use":
                block["partial"] = ""
            blocks[as_int(event.get("index"))] = block
        elif kind == "content_block_delta":
            block = blocks.setdefault(as_int(event.get("index")), {"type": "text", "text": ""})
            delta = as_dict(event.get("delta"))
            dtype = delta.get("type")
            if dtype == "text_delta":
                piece = as_str(delta.get("text"))
                block["text"] = as_str(block.get("text")) + piece
                assert out.deltas is not None
                out.deltas.append(piece)
            elif dtype == "thinking_delta":
                block["thinking"] = as_str(block.get("thinking")) + as_str(delta.get("thinking"))
            elif dtype == "signature_delta":
                block["signature"] = as_str(block.get("signature")) + as_str(delta.get("signature"))
            elif dtype == "input_json_delta":
                block["partial"] = as_str(block.get("partial")) + as_str(delta.get("partial_json"))
        elif kind == "message_delta":
            delta = as_dict(event.get("delta"))
            out.finish_reason = _STOP.get(as_str(delta.get("stop_reason")), out.finish_reason)
            _usage(as_dict(event.get("usage")), out)
    for _, block in sorted(blocks.items()):
        if block.get("type") == "tool_use":
            partial = as_str(block.get("partial")) or "{}"
            try:
                block["input"] = json.loads(partial)
            except ValueError:
                block["input"] = partial
        _block(block, out)
    return out
