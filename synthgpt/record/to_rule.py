"""A recorded answer as the rule that replays it: `match: {canonical: DIGEST}` and the answer.

A 2xx answer becomes an `output` (text, reasoning, tool calls, finish reason, usage, or embeddings) with a
`stream` plan pinning what the format lets a rule pin (the response id, `created`) and, for a stream, the
text's exact deltas and the timing seen. `reasoning: false`: the replay has the reasoning the upstream
showed, never a synthetic one added. An error answer becomes an `error` with the upstream's status, its
JSON body verbatim and its retry headers.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..model import ModelRequest
from .recorded import Recorded, Timing

__all__ = ["KEPT_ERROR_HEADERS", "answer_rule", "error_rule", "rule_name"]

KEPT_ERROR_HEADERS = ("retry-after", "retry-after-ms")
"""Headers of an error answer kept in its rule (with every `x-ratelimit-*`): what clients' retries read."""


def rule_name(digest: str) -> str:
    return f"rec-{digest[:16]}"


def _description(request: ModelRequest) -> str:
    asked = request.last_user or (request.inputs[0] if request.inputs else "")
    asked = " ".join(asked.split())
    if len(asked) > 60:
        asked = asked[:57] + "..."
    return f"{request.api} {request.model}{' stream' if request.stream else ''}: {asked}"


def answer_rule(
    digest: str, request: ModelRequest, recorded: Recorded, timing: Timing | None
) -> dict[str, Any]:
    rule: dict[str, Any] = {
        "name": rule_name(digest),
        "description": _description(request),
        "match": {"canonical": digest},
        "output": recorded.output(),
    }
    plan = recorded.stream_plan(timing)
    if plan:
        rule["stream"] = plan
    if recorded.embeddings is None and not recorded.hidden_reasoning:
        rule["reasoning"] = False
    return rule


def error_rule(
    digest: str, request: ModelRequest, status: int, data: bytes, headers: Mapping[str, str]
) -> dict[str, Any]:
    error: dict[str, Any] = {"status": min(max(status, 400), 599)}
    try:
        body = json.loads(data)
    except ValueError:
        body = None
    if isinstance(body, dict):
        error["body"] = body
    else:
        error["message"] = data.decode("utf-8", "replace")[:2000] or f"HTTP {status}"
    kept = {
        k.lower(): v
        for k, v in headers.items()
        if k.lower() in KEPT_ERROR_HEADERS or k.lower().startswith("x-ratelimit-")
    }
    if kept:
        error["headers"] = kept
    return {
        "name": rule_name(digest),
        "description": _description(request),
        "match": {"canonical": digest},
        "error": error,
    }
