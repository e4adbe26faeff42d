"""AWS Bedrock Converse requests (`/model/{modelId}/converse` and `/converse-stream`), decoded into the
neutral ModelRequest.

The model is the URL's `modelId` (an id, an inference profile or an ARN). Messages are `user` / `assistant`
turns of content blocks: `text`; `toolUse` (the assistant's tool calls, `input` an object); `toolResult`
(a tool result, its `content` blocks of `text` or `json`, `status: "error"` for a failed call); media blocks
(`image`, `document`, `video`, `audio`) kept as references. `toolConfig` declares the tools (`toolSpec`
with `inputSchema.json`) and the `toolChoice`; `outputConfig.textFormat` asks for structured output (its
`jsonSchema.schema` is a JSON *string*); `additionalModelRequestFields.thinking` (Anthropic models on
Bedrock) asks for reasoning.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...errors import RequestError
from ...jsonutil import dumps
from ...text_json import loads_text
from ..common import check_schema
from ..headers import journal_headers

__all__ = ["decode_converse", "validation_error"]

_MEDIA = ("image", "document", "video", "audio")
_IGNORED = ("cachePoint", "guardContent", "reasoningContent")


def validation_error(message: str, param: str | None = None) -> RequestError:
    return RequestError(message, param, code="ValidationException")


def _null(path: str) -> RequestError:
    return validation_error(
        f"1 validation error detected: Value null at '{path}' failed to satisfy constraint: Member must not "
        "be null", path
    )


def _list(value: Any, path: str) -> list[Any]:
    if value is None:
        raise _null(path)
    if not isinstance(value, list):
        raise validation_error(f"Value at '{path}' failed to satisfy constraint: Member must be a list", path)
    return value


def _result_text(blocks: Any, path: str) -> str:
    texts: list[str] = []
    for k, block in enumerate(_list(blocks, path)):
        if not isinstance(block, dict):
            raise validation_error(f"Value at '{path}.{k + 1}' must be an object", f"{path}.{k + 1}")
        if isinstance(block.get("text"), str):
            texts.append(block["text"])
        elif "json" in block:
            texts.append(dumps(block["json"]))
    return "\n".join(texts)


def _message(raw: Any, i: int) -> list[dict[str, Any]]:
    path = f"messages.{i + 1}.member"
    if not isinstance(raw, dict):
        raise validation_error(f"Value at '{path}' must be an object", path)
    role = raw.get("role")
    if role not in ("user", "assistant"):
        raise validation_error(
            f"1 validation error detected: Value '{role}' at '{path}.role' failed to satisfy constraint: "
            "Member must satisfy enum value set: [user, assistant]", path + ".role"
        )
    parts: list[dict[str, str]] = []
    calls: list[dict[str, Any]] = []
    results: list[dict[str, Any]] = []
    for k, block in enumerate(_list(raw.get("content"), path + ".content")):
        where = f"{path}.content.{k + 1}.member"
        if not isinstance(block, dict):
            raise validation_error(f"Value at '{where}' must be an object", where)
        if isinstance(block.get("text"), str):
            parts.append({"type": "text", "text": block["text"]})
        elif isinstance(block.get("toolUse"), dict):
            use = block["toolUse"]
            if not isinstance(use.get("name"), str) or not isinstance(use.get("toolUseId"), str):
                raise validation_error("A toolUse block needs a toolUseId and a name.", where + ".toolUse")
            arguments = dumps(use.get("input", {}))
            calls.append({"id": use["toolUseId"], "name": use["name"], "arguments": arguments})
        elif isinstance(block.get("toolResult"), dict):
            result = block["toolResult"]
            if not isinstance(result.get("toolUseId"), str):
                raise _null(where + ".toolResult.toolUseId")
            results.append({"role": "tool", "tool_call_id": result["toolUseId"],
                            "content": _result_text(result.get("content", []), where + ".toolResult.content"),
                            "is_error": result.get("status") == "error"})  # fmt: skip
        elif any(m in block for m in _MEDIA):
            kind = next(m for m in _MEDIA if m in block)
            parts.append({"type": kind, "url": str((block[kind] or {}).get("format", kind))})
        elif not any(m in block for m in _IGNORED):
            raise validation_error(f"The content block at '{where}' has no known member.", where)
    if role == "assistant":
        return [{"role": "assistant", "content": parts, "tool_calls": calls}] if parts or calls else []
    return [*results, {"role": "user", "content": parts}] if parts else results


def _tools(config: Any, neutral: dict[str, Any]) -> None:
    if not isinstance(config, dict):
        raise validation_error("toolConfig must be an object", "toolConfig")
    tools: list[dict[str, Any]] = []
    for i, entry in enumerate(_list(config.get("tools"), "toolConfig.tools")):
        spec = entry.get("toolSpec") if isinstance(entry, dict) else None
        if spec is None:
            continue  # a cachePoint entry
        path = f"toolConfig.tools.{i + 1}.member.toolSpec"
        if not isinstance(spec, dict) or not isinstance(spec.get("name"), str):
            raise _null(path + ".name")
        box = spec.get("inputSchema")
        schema = box.get("json") if isinstance(box, dict) else None
        if not isinstance(schema, dict):
            raise _null(path + ".inputSchema")
        check_schema(schema, path + ".inputSchema.json", f"tool '{spec['name']}'", tool=True)
        described = spec.get("description") or ""
        tools.append({"name": spec["name"], "description": described, "parameters": schema})
    neutral["tools"] = tools
    choice = config.get("toolChoice")
    if isinstance(choice, dict):
        if "any" in choice:
            neutral["tool_choice"] = "required"
        elif isinstance(choice.get("tool"), dict):
            neutral["tool_choice"] = {"mode": "named", "name": str(choice["tool"].get("name"))}


def _output_config(config: Any, neutral: dict[str, Any]) -> None:
    text_format = config.get("textFormat") if isinstance(config, dict) else None
    if not isinstance(text_format, dict):
        return
    structure = (text_format.get("structure") or {}).get("jsonSchema") or {}
    raw = structure.get("schema")
    if not isinstance(raw, str):
        raise _null("outputConfig.textFormat.structure.jsonSchema.schema")
    try:
        schema = loads_text(raw)
    except ValueError as exc:
        raise validation_error(f"The JSON schema in outputConfig is not valid JSON: {exc}",
                               "outputConfig.textFormat.structure.jsonSchema.schema") from None  # fmt: skip
    if not isinstance(schema, dict):
        raise validation_error("The JSON schema in outputConfig must be an object.", "outputConfig")
    check_schema(schema, "outputConfig.textFormat.structure.jsonSchema.schema", "the output format")
    name = structure.get("name") or "response"
    neutral["response_schema"] = {"kind": "json_schema", "schema": schema, "name": name, "strict": True}


def decode_converse(body: Any, model: str, headers: Mapping[str, str], *, stream: bool) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise validation_error("The request body must be a JSON object.")
    messages: list[dict[str, Any]] = []
    for i, raw in enumerate(_list(body.get("messages"), "messages")):
        messages.extend(_message(raw, i))
    if not messages:
        raise validation_error("A conversation must start with a user message. Try again with a conversation "
                               "that starts with a user message.", "messages")  # fmt: skip
    blocks = _list(body["system"], "system") if body.get("system") is not None else []
    system = [s["text"] for s in blocks if isinstance(s, dict) and isinstance(s.get("text"), str)]
    if system:
        messages.insert(0, {"role": "system", "content": "\n".join(system)})
    neutral: dict[str, Any] = {"api": "bedrock", "model": model, "messages": messages, "stream": stream,
                               "headers": journal_headers(headers), "extra": {}}  # fmt: skip
    inference = body.get("inferenceConfig") or {}
    if isinstance(inference, dict):
        limit = inference.get("maxTokens")
        if limit is not None:
            if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
                raise validation_error(
                    f"1 validation error detected: Value '{limit}' at 'inferenceConfig.maxTokens' failed to "
                    "satisfy constraint: Member must have value greater than or equal to 1",
                    "inferenceConfig.maxTokens",
                )
            neutral["max_output_tokens"] = limit
        if inference.get("stopSequences"):
            stops = _list(inference["stopSequences"], "inferenceConfig.stopSequences")
            neutral["extra"]["stop_sequences"] = [s for s in stops if isinstance(s, str)]
        for key in ("temperature", "topP"):
            if inference.get(key) is not None:
                neutral["extra"][key] = inference[key]
    if body.get("toolConfig") is not None:
        _tools(body["toolConfig"], neutral)
    if body.get("outputConfig") is not None:
        _output_config(body["outputConfig"], neutral)
    extra_fields = body.get("additionalModelRequestFields")
    if isinstance(extra_fields, dict):
        thinking = extra_fields.get("thinking") or extra_fields.get("reasoning_config")
        if isinstance(thinking, dict) and thinking.get("type") == "enabled":
            budget = thinking.get("budget_tokens")
            neutral["reasoning"] = {"budget_tokens": budget if isinstance(budget, int) else None}
    return neutral
