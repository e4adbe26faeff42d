"""Gemini answers read back into a recording: `generateContent`, its streams, and the embeddings."""

from __future__ import annotations

from typing import Any

from ...model import FinishReason
from ..recorded import Recorded, RecordedCall, arguments_text
from .common import as_dict, as_int, as_list, as_str

__all__ = ["gemini_body", "gemini_embed_body", "gemini_stream"]

_FINISH: dict[str, FinishReason] = {
    "STOP": "stop",
    "MAX_TOKENS": "length",
    "SAFETY": "content_filter",
    "RECITATION": "content_filter",
    "BLOCKLIST": "content_filter",
    "PROHIBITED_CONTENT": "content_filter",
    "SPII": "content_filter",
}


def _chunk(chunk: dict[str, Any], out: Recorded) -> None:
    out.id = out.id or as_str(chunk.get("responseId")) or None
    candidates = as_list(chunk.get("candidates"))
    candidate = as_dict(candidates[0]) if candidates else {}
    for part in map(as_dict, as_list(as_dict(candidate.get("content")).get("parts"))):
        if "functionCall" in part:
            call = as_dict(part.get("functionCall"))
            out.tool_calls.append(
                RecordedCall(
                    as_str(call.get("name")),
                    arguments_text(call.get("args") or {}),
                    as_str(call.get("id")) or None,
                )
            )
        elif part.get("thought") is True:
            out.reasoning += as_str(part.get("text"))
        elif isinstance(part.get("text"), str):
            out.text += part["text"]
            if out.deltas is not None and part["text"]:
                out.deltas.append(part["text"])
    if candidate.get("finishReason"):
        reason = _FINISH.get(as_str(candidate["finishReason"]), "stop")
        out.finish_reason = "tool_calls" if reason == "stop" and out.tool_calls else reason
    usage = as_dict(chunk.get("usageMetadata"))
    if usage:
        thoughts = as_int(usage.get("thoughtsTokenCount"))
        out.usage = {
            "prompt_tokens": as_int(usage.get("promptTokenCount")),
            "completion_tokens": as_int(usage.get("candidatesTokenCount")) + thoughts,
            "reasoning_tokens": thoughts,
            "cached_tokens": as_int(usage.get("cachedContentTokenCount")),
        }


def gemini_body(body: Any) -> Recorded:
    out = Recorded()
    _chunk(as_dict(body), out)
    return out


def gemini_stream(events: list[Any]) -> Recorded:
    out = Recorded(deltas=[])
    for chunk in map(as_dict, events):
        _chunk(chunk, out)
    return out


def gemini_embed_body(body: Any) -> Recorded:
    """`embedContent` answers `{embedding}`, `batchEmbedContents` `{embeddings: [...]}`."""
    body = as_dict(body)
    found = as_list(body.get("embeddings")) or ([body["embedding"]] if "embedding" in body else [])
    return Recorded(embeddings=[[float(v) for v in as_list(as_dict(e).get("values"))] for e in found])
