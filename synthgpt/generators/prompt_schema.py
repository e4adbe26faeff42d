"""A JSON Schema given in the prompt instead of the request's response format.

instructor's `Mode.JSON` / `Mode.MD_JSON` (and many hand-written prompts) paste a JSON Schema into the
system or user message and ask for JSON, or for a ```json code block. A model answers with a document
valid against that schema, fenced when a code block was asked for.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from ..model import ModelRequest
from ..text_json import decode_in_text

__all__ = ["PromptSchema", "prompt_schema"]

_MAX_SCAN = 200_000  # characters of one message searched for a schema; a longer prompt is read no further
_FENCE_ASKED = re.compile(r"```|\bcode ?block\b|\bfenced\b", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class PromptSchema:
    schema: dict[str, Any]
    fenced: bool
    """The prompt asks for a (```json) code block: the answer is one."""


def _is_schema(value: Any) -> bool:
    if not isinstance(value, dict):
        return False
    props = value.get("properties")
    return (
        isinstance(props, dict)
        and bool(props)
        and value.get("type", "object") == "object"
        and all(isinstance(p, dict) for p in props.values())
    )


def _objects(text: str) -> list[Any]:
    """Every top-level JSON object in `text` (a schema is one: it may sit in prose or a code fence).

    Each `{` that starts no object is read as far as its text looks like JSON: a few characters in
    prose, but to the end of the text inside an object never closed. The reads that fail may cover
    `_FAILED_READS` times the text, then the search stops: 400 nested objects never closed took 0.8 s
    to search, a read from each of their `{`s to the end."""
    found: list[Any] = []
    budget = _FAILED_READS * len(text) + 4096
    at = text.find("{")
    while at != -1:
        try:
            value, end = decode_in_text(text, at)
        except json.JSONDecodeError as exc:
            budget -= max(exc.pos - at, 1)
            if budget < 0:
                break
            at = text.find("{", at + 1)
            continue
        found.append(value)
        at = text.find("{", end)
    return found


_FAILED_READS = 4


@lru_cache(maxsize=512)
def _schema_in(text: str) -> dict[str, Any] | None:
    if '"properties"' not in text:  # cheap: most messages hold no schema at all
        return None
    schemas = [v for v in _objects(text[:_MAX_SCAN]) if _is_schema(v)]
    return schemas[-1] if schemas else None


def prompt_schema(request: ModelRequest) -> PromptSchema | None:
    """The schema the messages give and ask JSON for (the latest one given), or None.

    Only when the request sets no schema of its own (a `json_object` format counts as none) and the
    messages mention JSON, so a schema quoted in passing in a chat about schemas is not taken as an order.
    """
    rs = request.response_schema
    if rs is not None and rs.schema_ is not None:
        return None
    found: dict[str, Any] | None = None
    asks_json = rs is not None
    fenced = False
    for m in request.messages:
        if m.role not in ("system", "developer", "user") or not m.content:
            continue
        schema = _schema_in(m.content)
        if schema is not None:
            found = schema
        asks_json = asks_json or "json" in m.content.lower()
        fenced = fenced or _FENCE_ASKED.search(m.content) is not None
    if found is None or not asks_json:
        return None
    return PromptSchema(found, fenced and rs is None)
