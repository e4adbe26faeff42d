"""Ollama answers read back into a recording: `/api/chat`, `/api/generate` (NDJSON or one body), embed."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ..recorded import Recorded, RecordedCall, arguments_text
from .common import as_dict, as_int, as_list, as_str

__all__ = ["ollama_embed_body", "ollama_lines"]


def _created(value: Any) -> int | None:
    text = as_str(value)
    if not text:
        return None
    try:  # RFC 3339 with up to nanoseconds: the whole seconds are what a rule can pin
        return int(datetime.fromisoformat(text[:19] + "+00:00").timestamp())
    except ValueError:
        return None


def ollama_lines(lines: list[Any], *, stream: bool) -> Recorded:
    """One body (`"stream": false`) is a single line with `done: true`."""
    out = Recorded(deltas=[] if stream else None)
    for line in map(as_dict, lines):
        if out.created is None:
            out.created = _created(line.get("created_at"))
        message = as_dict(line.get("message"))
        text = as_str(message.get("content")) or as_str(line.get("response"))
        if text:
            out.text += text
            if out.deltas is not None:
                out.deltas.append(text)
        out.reasoning += as_str(message.get("thinking")) or as_str(line.get("thinking"))
        for call in map(as_dict, as_list(message.get("tool_calls"))):
            fn = as_dict(call.get("function"))
            out.tool_calls.append(
                RecordedCall(
                    as_str(fn.get("name")),
                    arguments_text(fn.get("arguments")),
                    as_str(call.get("id")) or None,
                )
            )
        if line.get("done") is True:
            reason = as_str(line.get("done_reason"))
            out.finish_reason = "length" if reason == "length" else "tool_calls" if out.tool_calls else "stop"
            out.usage = {
                "prompt_tokens": as_int(line.get("prompt_eval_count")),
                "completion_tokens": as_int(line.get("eval_count")),
            }
    return out


def ollama_embed_body(body: Any) -> Recorded:
    """`/api/embed` answers `{embeddings: [...]}`, the older `/api/embeddings` `{embedding: [...]}`."""
    body = as_dict(body)
    found = as_list(body.get("embeddings")) or ([body["embedding"]] if "embedding" in body else [])
    usage = {"prompt_tokens": as_int(body["prompt_eval_count"])} if "prompt_eval_count" in body else {}
    return Recorded(embeddings=[[float(v) for v in as_list(e)] for e in found], usage=usage)
