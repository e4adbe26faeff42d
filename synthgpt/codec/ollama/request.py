"""Ollama requests (`/api/chat`, `/api/generate`, `/api/embed`), decoded into the neutral ModelRequest.

Ollama streams unless the body says `"stream": false`, as the real server does. `format` is `"json"` (any
JSON object) or a JSON schema; `think` is a bool or an effort (`"low"`, `"medium"`, `"high"`); `options`
holds the sampling settings (`num_predict` is the output limit, `stop` the stop sequences). Tool calls carry
no ids on this API: a tool result names its function with `tool_name`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...errors import RequestError
from ...jsonutil import dumps
from ..common import check_schema, json_type_name
from ..headers import journal_headers

__all__ = ["decode_ollama_chat", "decode_ollama_embed", "decode_ollama_generate", "ollama_invalid"]

_ROLES = ("system", "user", "assistant", "tool")
_OPTIONS_EXTRA = ("temperature", "top_p", "top_k", "min_p", "seed", "repeat_penalty", "presence_penalty",
                  "frequency_penalty", "num_ctx")  # fmt: skip
_THINK_LEVELS = ("low", "medium", "high")
_MAX_MODEL_NAME = 256


def ollama_invalid(message: str, param: str | None = None) -> RequestError:
    return RequestError(message, param)


def _model(body: Any) -> str:
    if not isinstance(body, dict):
        raise ollama_invalid("invalid request: the body must be a JSON object")
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise ollama_invalid("model is required", "model")
    if len(model) > _MAX_MODEL_NAME:  # every stream line repeats the name: a huge one would balloon it
        raise ollama_invalid(f"invalid model name: longer than {_MAX_MODEL_NAME} characters", "model")
    return model


def _str(value: Any, param: str) -> str:
    if not isinstance(value, str):
        kind = json_type_name(value)
        raise ollama_invalid(f"json: cannot unmarshal {kind} into field {param} of type string", param)
    return value


def _images(message: Mapping[str, Any], param: str) -> list[dict[str, str]]:
    images = message.get("images") or []
    if not isinstance(images, list):
        raise ollama_invalid(f"{param}.images must be an array of base64 strings", param + ".images")
    return [{"type": "image", "url": "data:image;base64," + str(i)[:16]} for i in images]


def _messages(raw: Any) -> list[dict[str, Any]]:
    if not isinstance(raw, list):
        raise ollama_invalid("messages must be an array", "messages")
    out: list[dict[str, Any]] = []
    for i, m in enumerate(raw):
        param = f"messages[{i}]"
        if not isinstance(m, dict):
            raise ollama_invalid(f"{param} must be an object", param)
        role = m.get("role")
        if role not in _ROLES:
            expected = ", ".join(_ROLES)
            raise ollama_invalid(f"invalid role {role!r}: expected one of {expected}", param + ".role")
        text = _str(m.get("content") or "", param + ".content")
        content: list[dict[str, str]] = [{"type": "text", "text": text}, *_images(m, param)]
        msg: dict[str, Any] = {"role": role, "content": content}
        if role == "assistant" and m.get("tool_calls"):
            calls = m["tool_calls"]
            if not isinstance(calls, list):
                raise ollama_invalid(f"{param}.tool_calls must be an array", param + ".tool_calls")
            msg["tool_calls"] = [_tool_call(c, f"{param}.tool_calls[{k}]", i, k) for k, c in enumerate(calls)]
        if role == "tool":
            name = m.get("tool_name") or m.get("name")
            msg["name"] = str(name) if name else None
        out.append(msg)
    return out


def _tool_call(call: Any, param: str, i: int, k: int) -> dict[str, Any]:
    fn = call.get("function") if isinstance(call, dict) else None
    if not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
        raise ollama_invalid(f"{param}.function.name is required", param + ".function.name")
    args = fn.get("arguments") or {}
    return {"id": call.get("id") or f"call_{i}_{k}", "name": fn["name"],
            "arguments": args if isinstance(args, str) else dumps(args)}  # fmt: skip


def _tools(raw: Any) -> list[dict[str, Any]]:
    if not isinstance(raw, list):
        raise ollama_invalid("tools must be an array", "tools")
    out: list[dict[str, Any]] = []
    for i, t in enumerate(raw):
        fn = t.get("function") if isinstance(t, dict) else None
        if not isinstance(fn, dict) or not isinstance(fn.get("name"), str) or not fn["name"]:
            raise ollama_invalid(f"tools[{i}].function.name is required", f"tools[{i}].function.name")
        params = fn.get("parameters") or {"type": "object", "properties": {}}
        if not isinstance(params, dict):
            raise ollama_invalid(f"tools[{i}].function.parameters must be an object",
                                 f"tools[{i}].function.parameters")  # fmt: skip
        check_schema(params, f"tools[{i}].function.parameters", f"function '{fn['name']}'", tool=True)
        out.append({"name": fn["name"], "description": fn.get("description") or "", "parameters": params})
    return out


def _common(body: dict[str, Any], neutral: dict[str, Any], headers: Mapping[str, str]) -> None:
    """`format`, `think`, `options` and `stream`, shared by chat and generate."""
    extra: dict[str, Any] = neutral.setdefault("extra", {})
    fmt = body.get("format")
    if fmt == "json":
        neutral["response_schema"] = {"kind": "json_object"}
    elif isinstance(fmt, dict):
        check_schema(fmt, "format", "the format schema")
        neutral["response_schema"] = {"kind": "json_schema", "schema": fmt}
    elif fmt not in (None, ""):
        raise ollama_invalid(f"invalid format: {fmt!r}; expected \"json\" or a JSON schema", "format")
    think = body.get("think")
    if think is True or think in _THINK_LEVELS:
        neutral["reasoning"] = {"effort": think if isinstance(think, str) else None}
    elif think not in (None, False):
        raise ollama_invalid(f"invalid think value: {think!r} (expected true, false, \"low\", \"medium\" or "
                             "\"high\")", "think")  # fmt: skip
    options = body.get("options") or {}
    if not isinstance(options, dict):
        raise ollama_invalid("options must be an object", "options")
    limit = options.get("num_predict")
    if isinstance(limit, int) and not isinstance(limit, bool) and limit > 0:
        neutral["max_output_tokens"] = limit  # -1 (no limit) and -2 (fill the context) set none
    stop = options.get("stop")
    if stop is not None and not isinstance(stop, str | list):  # a number here was a 500
        raise ollama_invalid("options.stop must be a string or an array of strings", "options.stop")
    if stop is not None:
        extra["stop"] = [stop] if isinstance(stop, str) else [s for s in stop if isinstance(s, str)]
    extra.update({k: options[k] for k in _OPTIONS_EXTRA if options.get(k) is not None})
    stream = body.get("stream", True)  # Ollama streams unless told not to
    neutral["stream"] = stream is not False
    neutral["headers"] = journal_headers(headers)


def decode_ollama_chat(body: Any, headers: Mapping[str, str]) -> dict[str, Any]:
    neutral: dict[str, Any] = {"api": "ollama", "model": _model(body)}
    neutral["messages"] = _messages(body.get("messages") or [])
    if body.get("tools"):
        neutral["tools"] = _tools(body["tools"])
    _common(body, neutral, headers)
    return neutral


def decode_ollama_generate(body: Any, headers: Mapping[str, str]) -> dict[str, Any]:
    model = _model(body)
    messages: list[dict[str, Any]] = []
    if body.get("system"):
        messages.append({"role": "system", "content": _str(body["system"], "system")})
    prompt = _str(body.get("prompt") or "", "prompt")
    messages.append({"role": "user", "content": [{"type": "text", "text": prompt}, *_images(body, "body")]})
    neutral: dict[str, Any] = {"api": "ollama", "model": model, "messages": messages,
                               "extra": {"endpoint": "generate"}}  # fmt: skip
    if body.get("suffix"):
        neutral["extra"]["suffix"] = _str(body["suffix"], "suffix")
    _common(body, neutral, headers)
    return neutral


def decode_ollama_embed(body: Any, headers: Mapping[str, str], *, legacy: bool) -> dict[str, Any]:
    """`/api/embed` (`input`: a string or a list) or the older `/api/embeddings` (`prompt`: one string)."""
    model = _model(body)
    key = "prompt" if legacy else "input"
    value = body.get(key)
    inputs = [value] if isinstance(value, str) else value
    if not isinstance(inputs, list) or not inputs or not all(isinstance(v, str) for v in inputs):
        raise ollama_invalid(f"invalid input type: {key} must be a string or an array of strings", key)
    dims = body.get("dimensions")
    if dims is not None and (not isinstance(dims, int) or isinstance(dims, bool) or not 1 <= dims <= 16384):
        raise ollama_invalid(f"dimensions must be a positive integer, got {dims!r}", "dimensions")
    return {"api": "embeddings", "model": model, "inputs": inputs, "dimensions": dims,
            "headers": journal_headers(headers)}  # fmt: skip
