"""Bedrock Converse answers read back into a recording: `converse` bodies and `converse-stream` events."""

from __future__ import annotations

import json
from typing import Any

from ...model import FinishReason
from ..recorded import Recorded, RecordedCall, arguments_text
from .common import as_dict, as_int, as_list, as_str

__all__ = ["converse_body", "converse_stream"]

_STOP: dict[str, FinishReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "tool_use": "tool_calls",
    "content_filtered": "content_filter",
    "guardrail_intervened": "content_filter",
}


def _usage(usage: dict[str, Any]) -> dict[str, int]:
    if not usage:
        return {}
    return {
        "prompt_tokens": as_int(usage.get("inputTokens")),
        "completion_tokens": as_int(usage.get("outputTokens")),
        "cached_tokens": as_int(usage.get("cacheReadInputTokens")),
    }


def converse_body(body: Any) -> Recorded:
    body = as_dict(body)
    out = Recorded()
    for block in map(as_dict, as_list(as_dict(as_dict(body.get("output")).get("message")).get("content"))):
        if isinstance(block.get("text"), str):
            out.text += block["text"]
        reasoning = as_dict(as_dict(block.get("reasoningContent")).get("reasoningText"))
        if reasoning:
            out.reasoning += as_str(reasoning.get("text"))
            out.signature = out.signature or as_str(reasoning.get("signature"))
        use = as_dict(block.get("toolUse"))
        if use:
            out.tool_calls.append(
                RecordedCall(
                    as_str(use.get("name")),
                    arguments_text(use.get("input")),
                    as_str(use.get("toolUseId")) or None,
                )
            )
    out.finish_reason = _STOP.get(as_str(body.get("stopReason")))
    out.usage = _usage(as_dict(body.get("usage")))
    return out


def converse_stream(events: list[tuple[str, Any]]) -> Recorded:
    """`events`: (`:event-type`, payload) of each event message of the AWS event stream."""
    out = Recorded(deltas=[])
    uses: dict[int, dict[str, str]] = {}
    for kind, payload in events:
        payload = as_dict(payload)
        index = as_int(payload.get("contentBlockIndex"))
        if kind == "contentBlockStart":
            use = as_dict(as_dict(payload.get("start")).get("toolUse"))
            if use:
                uses[index] = {
                    "id": as_str(use.get("toolUseId")),
                    "name": as_str(use.get("name")),
                    "input": "",
                }
        elif kind == "contentBlockDelta":
            delta = as_dict(payload.get("delta"))
            if isinstance(delta.get("text"), str):
                out.text += delta["text"]
                assert out.deltas is not None
                out.deltas.append(delta["text"])
            reasoning = as_dict(delta.get("reasoningContent"))
            out.reasoning += as_str(reasoning.get("text"))
            out.signature += as_str(reasoning.get("signature"))
            if "toolUse" in delta and index in uses:
                uses[index]["input"] += as_str(as_dict(delta["toolUse"]).get("input"))
        elif kind == "messageStop":
            out.finish_reason = _STOP.get(as_str(payload.get("stopReason")))
        elif kind == "metadata":
            out.usage = _usage(as_dict(payload.get("usage")))
    for _, use in sorted(uses.items()):
        try:
            arguments = arguments_text(json.loads(use["input"] or "{}"))
        except ValueError:
            arguments = use["input"]
        out.tool_calls.append(RecordedCall(use["name"], arguments, use["id"] or None))
    return out
