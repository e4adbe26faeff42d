"""Cohere v2 chat requests (`POST /v2/chat`), decoded into the neutral ModelRequest.

Messages are OpenAI-like (`system`, `user`, `assistant` with `tool_calls` and a `tool_plan`, `tool` with
`tool_call_id`); a content may be a string or a list of `text`, `image_url`, `document` and `thinking`
items. A tool result's documents are read as text (their JSON, when they are objects). `response_format`
`json_object`, with or without a `json_schema`, asks for structured output; `tool_choice` is `REQUIRED` or
`NONE`; `thinking: {"type": "enabled"}` asks for thinking.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...errors import RequestError
from ...jsonutil import dumps
from ..common import check_schema, json_type_name
from ..headers import journal_headers

__all__ = ["decode_cohere_chat"]

_ROLES = ("system", "user", "assistant", "tool")
_EXTRA = ("temperature", "seed", "k", "p", "frequency_penalty", "presence_penalty", "safety_mode",
          "strict_tools", "logprobs", "documents", "citation_options")  # fmt: skip


def _bad(message: str, param: str | None = None) -> RequestError:
    return RequestError(f"invalid request: {message}", param)


def _content(value: Any, param: str) -> list[dict[str, Any]] | str:
    if value is None or isinstance(value, str):
        return value or ""
    if not isinstance(value, list):
        raise _bad(f"{param} must be a string or an array, got {json_type_name(value)}", param)
    out: list[dict[str, Any]] = []
    for k, item in enumerate(value):
        kind = item.get("type") if isinstance(item, dict) else None
        if kind == "text" and isinstance(item.get("text"), str):
            out.append({"type": "text", "text": item["text"]})
        elif kind == "document":
            document = item.get("document") or {}
            if not isinstance(document, dict):
                where = f"{param}[{k}].document"
                raise _bad(f"{where} must be an object, got {json_type_name(document)}", where)
            data = document.get("data")
            out.append({"type": "text", "text": data if isinstance(data, str) else dumps(data)})
        elif kind == "image_url":
            out.append({"type": "image_url", "image_url": item.get("image_url") or {}})
        elif kind == "thinking":
            continue  # earlier thinking is not part of what a model answers
        else:
            raise _bad(f"{param}[{k}] has an unknown content type {kind!r}", f"{param}[{k}].type")
    return out


def _message(m: Any, i: int) -> dict[str, Any]:
    param = f"messages[{i}]"
    if not isinstance(m, dict):
        raise _bad(f"{param} must be an object", param)
    role = m.get("role")
    if role not in _ROLES:
        raise _bad(f"{param}.role must be one of {', '.join(_ROLES)}, got {role!r}", param + ".role")
    msg: dict[str, Any] = {"role": role, "content": _content(m.get("content"), param + ".content")}
    if role == "assistant":
        if not msg["content"] and isinstance(m.get("tool_plan"), str):
            msg["content"] = m["tool_plan"]
        calls = m.get("tool_calls") or []
        if not isinstance(calls, list):
            raise _bad(f"{param}.tool_calls must be an array", param + ".tool_calls")
        msg["tool_calls"] = calls
    if role == "tool":
        if not isinstance(m.get("tool_call_id"), str):
            raise _bad(f"{param}.tool_call_id is required for a tool message", param + ".tool_call_id")
        msg["tool_call_id"] = m["tool_call_id"]
    return msg


def _response_format(value: Any, neutral: dict[str, Any]) -> None:
    if not isinstance(value, dict) or value.get("type") not in ("text", "json_object"):
        raise _bad("response_format.type must be 'text' or 'json_object'", "response_format.type")
    if value["type"] == "text":
        return
    schema = value.get("json_schema")
    if schema is None:
        neutral["response_schema"] = {"kind": "json_object"}
        return
    if not isinstance(schema, dict):
        raise _bad("response_format.json_schema must be an object", "response_format.json_schema")
    check_schema(schema, "response_format.json_schema", "the response format")
    neutral["response_schema"] = {"kind": "json_schema", "schema": schema, "strict": True}


def decode_cohere_chat(body: Any, headers: Mapping[str, str]) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise _bad("the body must be a JSON object")
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise _bad("model is required", "model")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise _bad("messages must be a non-empty array", "messages")
    neutral: dict[str, Any] = {
        "api": "cohere",
        "model": model,
        "messages": [_message(m, i) for i, m in enumerate(messages)],
        "stream": body.get("stream") is True,
        "headers": journal_headers(headers),
        "extra": {k: body[k] for k in _EXTRA if body.get(k) is not None},
    }
    tools = body.get("tools")
    if tools:
        if not isinstance(tools, list):
            raise _bad("tools must be an array", "tools")
        for i, t in enumerate(tools):
            fn = t.get("function") if isinstance(t, dict) else None
            if not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
                raise _bad(f"tools[{i}].function.name is required", f"tools[{i}].function.name")
            params = fn.get("parameters")
            if params is not None:
                check_schema(params, f"tools[{i}].function.parameters", f"function '{fn['name']}'", tool=True)
        neutral["tools"] = tools
    choice = body.get("tool_choice")
    if choice is not None:
        if choice not in ("REQUIRED", "NONE"):
            raise _bad("tool_choice must be 'REQUIRED' or 'NONE'", "tool_choice")
        neutral["tool_choice"] = choice.lower()
    if body.get("response_format") is not None:
        _response_format(body["response_format"], neutral)
    limit = body.get("max_tokens")
    if limit is not None:
        if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
            raise _bad(f"max_tokens must be a positive integer, got {limit!r}", "max_tokens")
        neutral["max_output_tokens"] = limit
    stops = body.get("stop_sequences")
    if stops is not None:
        if not isinstance(stops, list) or not all(isinstance(s, str) for s in stops):
            raise _bad("stop_sequences must be an array of strings", "stop_sequences")
        neutral["extra"]["stop_sequences"] = stops
    thinking = body.get("thinking")
    if isinstance(thinking, dict) and thinking.get("type") == "enabled":
        budget = thinking.get("token_budget")
        neutral["reasoning"] = {"budget_tokens": budget if isinstance(budget, int) else None}
    return neutral
