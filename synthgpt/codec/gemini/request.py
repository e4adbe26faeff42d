"""Google Gemini (`generativelanguage`) requests, decoded into the neutral ModelRequest.

Gemini's JSON is protobuf JSON: every field may be spelled in lowerCamelCase or in snake_case, and the
`google-genai` client mixes both in one body (`generationConfig` beside `thinking_budget` and
`property_ordering`), so every field is read under either name. Schemas come in two forms: `responseSchema`
/ `parameters` in Gemini's OpenAPI subset (upper-case `type`s such as `OBJECT` and `STRING`, `nullable`,
`propertyOrdering`), translated here into JSON Schema, and `responseJsonSchema` / `parametersJsonSchema`,
which are JSON Schema already.

Turns map as a chat model sees them: `systemInstruction` is the system message, `model` turns are the
assistant's (their `functionCall` parts its tool calls), and each `functionResponse` part is a tool result
named after its function. The model comes from the URL (`models/{model}:generateContent`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ...errors import RequestError
from ...jsonutil import dumps
from ..common import check_schema, json_type_name

__all__ = ["camel", "decode_gemini_request", "field", "gemini_schema_to_json_schema", "text_of_contents"]

_SNAKE = re.compile(r"(?<!^)(?=[A-Z])")
_TOP_LEVEL = frozenset({
    "contents", "systemInstruction", "tools", "toolConfig", "generationConfig", "safetySettings",
    "cachedContent", "labels", "model",
})  # fmt: skip
_GENERATION_EXTRA = ("temperature", "topP", "topK", "seed", "presencePenalty", "frequencyPenalty")
_UNSUPPORTED_TOOLS = ("googleSearch", "googleSearchRetrieval", "codeExecution", "urlContext", "googleMaps",
                      "computerUse", "fileSearch", "retrieval")  # fmt: skip
_SCHEMA_KEEP = frozenset({
    "description", "enum", "format", "required", "minItems", "maxItems", "minimum", "maximum",
    "minLength", "maxLength", "pattern", "title", "minProperties", "maxProperties", "default",
})  # fmt: skip
_MAX_CANDIDATES = 8


def camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(p[:1].upper() + p[1:] for p in rest)


def _snake(name: str) -> str:
    return _SNAKE.sub("_", name).lower()


def field(obj: Mapping[str, Any], name: str) -> Any:
    """`obj[name]` under its lowerCamelCase name or its snake_case one (None when neither is there)."""
    value = obj.get(name)
    return obj.get(_snake(name)) if value is None else value


def invalid(message: str, param: str | None = None) -> RequestError:
    return RequestError(message, param, code="INVALID_ARGUMENT")


def _object(value: Any, param: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise invalid(
            f"Invalid value at '{param}': expected an object, got {json_type_name(value)}.", param
        )
    return value


def _list(value: Any, param: str) -> list[Any]:
    if not isinstance(value, list):
        raise invalid(f"Invalid value at '{param}': expected an array, got {json_type_name(value)}.", param)
    return value


def _names(value: Any, param: str) -> list[str]:
    """An array of strings (a `repeated string` field): anything else is refused, as Gemini does (a number,
    or an object among the names, was a 500; a string was read as the names it contains)."""
    names = _list(value, param)
    for i, name in enumerate(names):
        if not isinstance(name, str):
            at = f"{param}[{i}]"
            raise invalid(f"Invalid value at '{at}': expected a string, got {json_type_name(name)}.", at)
    return names


# ---------------------------------------------------------------------------------------------- schemas


def gemini_schema_to_json_schema(schema: Any, param: str) -> dict[str, Any]:
    """A Gemini `Schema` (OpenAPI subset) as JSON Schema; properties keep `propertyOrdering`'s order."""
    node = _object(schema, param)
    out: dict[str, Any] = {}
    kind = node.get("type")
    if isinstance(kind, str) and kind.upper() != "TYPE_UNSPECIFIED":
        out["type"] = kind.lower()
    for key, value in node.items():
        name = camel(key)
        if name in _SCHEMA_KEEP:
            out[name] = value
    if node.get("nullable") is True and "type" in out:
        out["type"] = [out["type"], "null"]
    props = node.get("properties")
    if props is not None:
        props = _object(props, param + ".properties")
        order = _names(field(node, "propertyOrdering") or [], param + ".propertyOrdering")
        ordered = set(order)  # for the look-ups (32,000 names took 7.6 s against the list)
        names = [n for n in order if n in props] + [n for n in props if n not in ordered]
        out["properties"] = {
            n: gemini_schema_to_json_schema(props[n], f"{param}.properties.{n}") for n in names
        }
    if node.get("items") is not None:
        out["items"] = gemini_schema_to_json_schema(node["items"], param + ".items")
    any_of = field(node, "anyOf")
    if any_of is not None:
        out["anyOf"] = [gemini_schema_to_json_schema(s, f"{param}.anyOf[{i}]")
                        for i, s in enumerate(_list(any_of, param + ".anyOf"))]  # fmt: skip
    return out


# --------------------------------------------------------------------------------------------- contents


def _parts(content: dict[str, Any], param: str) -> list[dict[str, Any]]:
    parts = _list(content.get("parts", []), param + ".parts")
    return [_object(p, f"{param}.parts[{k}]") for k, p in enumerate(parts)]


def _media(part: dict[str, Any]) -> str | None:
    inline, data = field(part, "inlineData"), field(part, "fileData")
    if isinstance(inline, dict):
        return "data:" + str(field(inline, "mimeType") or "application/octet-stream")
    if isinstance(data, dict):
        return str(field(data, "fileUri") or "file")
    return None


def _messages(contents: list[Any]) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    for i, raw in enumerate(contents):
        param = f"contents[{i}]"
        content = _object(raw, param)
        role = content.get("role") or "user"
        if role not in ("user", "model", "function"):
            raise invalid(f"Please use a valid role: user, model. Got {role!r}.", param + ".role")
        texts: list[dict[str, str]] = []
        calls: list[dict[str, Any]] = []
        results: list[dict[str, Any]] = []
        for k, part in enumerate(_parts(content, param)):
            call, response = field(part, "functionCall"), field(part, "functionResponse")
            if part.get("thought") is True:
                continue  # earlier thoughts are not part of the conversation a model answers
            if isinstance(part.get("text"), str):
                texts.append({"type": "text", "text": part["text"]})
            elif isinstance(call, dict):
                name = call.get("name")
                if not isinstance(name, str) or not name:
                    raise invalid("functionCall needs a name.", f"{param}.parts[{k}].functionCall.name")
                call_id = call.get("id") or f"{name}-{i}-{k}"
                calls.append({"id": call_id, "name": name, "arguments": dumps(call.get("args") or {})})
            elif isinstance(response, dict):
                name = response.get("name")
                if not isinstance(name, str) or not name:
                    where = f"{param}.parts[{k}].functionResponse.name"
                    raise invalid("functionResponse needs a name.", where)
                results.append({"role": "tool", "name": name, "tool_call_id": response.get("id"),
                                "content": dumps(response.get("response") or {})})  # fmt: skip
            elif (ref := _media(part)) is not None:
                texts.append({"type": "image", "url": ref})
        if role == "model":
            if texts or calls:
                messages.append({"role": "assistant", "content": texts, "tool_calls": calls})
            continue
        messages.extend(results)  # a turn's function results answer the calls before its text
        if texts:
            messages.append({"role": "user", "content": texts})
    return messages


def text_of_contents(contents: Any, param: str) -> list[str]:
    """The text of each `Content` of an embedding or token-count request (its parts joined by newlines)."""
    items = contents if isinstance(contents, list) else [contents]
    out: list[str] = []
    for i, raw in enumerate(items):
        content = _object(raw, f"{param}[{i}]" if isinstance(contents, list) else param)
        texts = [p["text"] for p in _parts(content, param) if isinstance(p.get("text"), str)]
        out.append("\n".join(texts))
    return out


# ---------------------------------------------------------------------------------------- tools, config


def _tools(tools: Any) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for i, raw in enumerate(_list(tools, "tools")):
        tool = _object(raw, f"tools[{i}]")
        for builtin in _UNSUPPORTED_TOOLS:
            if field(tool, builtin) is not None:
                message = f"The built-in tool '{builtin}' is not simulated by synthgpt; declare a function "
                raise invalid(message + "(functionDeclarations) instead.", f"tools[{i}].{builtin}")
        declarations = field(tool, "functionDeclarations") or []
        for k, raw_decl in enumerate(_list(declarations, f"tools[{i}].functionDeclarations")):
            param = f"tools[{i}].functionDeclarations[{k}]"
            decl = _object(raw_decl, param)
            name = decl.get("name")
            if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.:-]{0,127}", name):
                raise invalid(f"Invalid function name {name!r}: start with a letter or an underscore; use at "
                              "most 128 letters, digits, underscores, dots, colons and dashes.",
                              param + ".name")  # fmt: skip
            schema = field(decl, "parametersJsonSchema")
            if schema is None and decl.get("parameters") is not None:
                schema = gemini_schema_to_json_schema(decl["parameters"], param + ".parameters")
            schema = schema if schema is not None else {"type": "object", "properties": {}}
            check_schema(_object(schema, param + ".parameters"), param + ".parameters", f"function '{name}'",
                         tool=True)  # fmt: skip
            out.append({"name": name, "description": decl.get("description") or "", "parameters": schema})
    return out


def _tool_choice(config: Any) -> dict[str, Any] | str:
    calling = field(_object(config, "toolConfig"), "functionCallingConfig") or {}
    calling = _object(calling, "toolConfig.functionCallingConfig")  # a number here was a 500
    mode = str(calling.get("mode") or "AUTO").upper()
    allowed = field(calling, "allowedFunctionNames") or []
    if mode in ("ANY", "VALIDATED") and len(allowed) == 1:
        return {"mode": "named", "name": allowed[0]}
    if mode == "ANY":
        return "required"
    if mode == "NONE":
        return "none"
    if mode in ("AUTO", "VALIDATED", "MODE_UNSPECIFIED"):
        return "auto"
    raise invalid(f"Invalid value at 'tool_config.function_calling_config.mode': {mode!r}.",
                  "toolConfig.functionCallingConfig.mode")  # fmt: skip


def _generation(config: dict[str, Any], neutral: dict[str, Any]) -> None:
    extra: dict[str, Any] = neutral["extra"]
    limit = field(config, "maxOutputTokens")
    if limit is not None:
        if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
            raise invalid(f"max_output_tokens must be a positive integer, got {limit!r}.",
                          "generationConfig.maxOutputTokens")  # fmt: skip
        neutral["max_output_tokens"] = limit
    count = field(config, "candidateCount")
    if count is not None:
        if not isinstance(count, int) or isinstance(count, bool) or not 1 <= count <= _MAX_CANDIDATES:
            raise invalid(f"candidate_count must be between 1 and {_MAX_CANDIDATES}, got {count!r}.",
                          "generationConfig.candidateCount")  # fmt: skip
        neutral["n"] = count
    stops = field(config, "stopSequences")
    if stops is not None:
        extra["stop"] = [s for s in _list(stops, "generationConfig.stopSequences") if isinstance(s, str)]
    for name in _GENERATION_EXTRA:
        if field(config, name) is not None:
            extra[name] = field(config, name)
    mime = field(config, "responseMimeType")
    json_schema = field(config, "responseJsonSchema") or config.get("_responseJsonSchema")
    schema = field(config, "responseSchema")
    if (json_schema is not None or schema is not None) and mime not in ("application/json", "text/x.enum"):
        raise invalid("response_mime_type must be 'application/json' (or 'text/x.enum') when a response "
                      "schema is given.", "generationConfig.responseMimeType")  # fmt: skip
    if mime is not None:
        extra["responseMimeType"] = mime
    if json_schema is not None:
        resolved = _object(json_schema, "generationConfig.responseJsonSchema")
    elif schema is not None:
        resolved = gemini_schema_to_json_schema(schema, "generationConfig.responseSchema")
    else:
        resolved = None
    if resolved is not None:
        check_schema(resolved, "generationConfig.responseSchema", "the response schema")
        neutral["response_schema"] = {"kind": "json_schema", "schema": resolved}
    elif mime == "application/json":
        neutral["response_schema"] = {"kind": "json_object"}
    thinking = field(config, "thinkingConfig")
    if thinking is not None:
        thinking = _object(thinking, "generationConfig.thinkingConfig")
        budget, level = field(thinking, "thinkingBudget"), field(thinking, "thinkingLevel")
        # thoughts reach the answer only when asked for, and a zero budget turns thinking off
        if field(thinking, "includeThoughts") is True and budget != 0:
            given = budget if isinstance(budget, int) and budget > 0 else None
            effort = str(level).lower() if level else None
            neutral["reasoning"] = {"budget_tokens": given, "effort": effort, "summary": "auto"}


# ------------------------------------------------------------------------------------------------ decode


def decode_gemini_request(body: Any, model: str) -> dict[str, Any]:
    """The neutral request dict of a `generateContent` body for `model`."""
    if not isinstance(body, dict):
        raise invalid("Invalid JSON payload received. Expected an object.")
    for key in body:
        if camel(key) not in _TOP_LEVEL:
            raise invalid(f'Invalid JSON payload received. Unknown name "{key}": Cannot find field.', key)
    contents = body.get("contents")
    if contents is None:
        raise invalid("* GenerateContentRequest.contents: contents is not specified", "contents")
    messages = _messages(_list(contents, "contents"))
    if not any(m["role"] != "assistant" for m in messages):
        raise invalid("* GenerateContentRequest.contents: contents is not specified", "contents")
    system = field(body, "systemInstruction")
    if system is not None:
        texts = text_of_contents(system, "systemInstruction")
        messages.insert(0, {"role": "system", "content": "\n".join(texts)})
    neutral: dict[str, Any] = {"api": "gemini", "model": model, "messages": messages, "extra": {}}
    if body.get("tools") is not None:
        neutral["tools"] = _tools(body["tools"])
    if field(body, "toolConfig") is not None:
        neutral["tool_choice"] = _tool_choice(field(body, "toolConfig"))
    config = field(body, "generationConfig")
    if config is not None:
        _generation(_object(config, "generationConfig"), neutral)
    return neutral
