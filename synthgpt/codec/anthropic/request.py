"""Decoding an Anthropic Messages request body (`POST /v1/messages`) into the neutral request: WIRE.md §4.2.

Errors read like the real API's (`max_tokens: Field required`, `messages.0.role: …`): the dotted path of
the offending field, then what is wrong with it; the path is also the RequestError's `param`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from ...errors import RequestError
from ...model import (
    CONVERSATION,
    Message,
    ModelRequest,
    ReasoningRequest,
    ResponseSchema,
    Tool,
    ToolCall,
    ToolChoice,
    built,
    content_parts,
)
from ..common import check_schema, dumps
from ..fields import ANTHROPIC
from ..interned import Interned, json_key, kept_tools, messages_cache, tools_cache

__all__ = ["decode_messages_request", "messages_request"]

_PASSED_THROUGH = ("metadata", "service_tier", "stop_sequences", "temperature", "top_k", "top_p", "container")
_PASSED = frozenset(_PASSED_THROUGH)
_TEXT_BLOCKS = ("text",)
_SKIPPED_BLOCKS = frozenset(
    {"thinking", "redacted_thinking", "server_tool_use", "web_search_tool_result", "web_fetch_tool_result",
     "code_execution_tool_result", "container_upload"}
)  # fmt: skip
_MIN_THINKING_BUDGET = 1024
_SAMPLING = frozenset({"temperature", "top_p", "top_k"})


def _fail(param: str, message: str) -> RequestError:
    return RequestError(f"{param}: {message}", param)


def _check_schema(schema: dict[str, Any], param: str, subject: str) -> None:
    try:
        check_schema(schema, param, subject)
    except RequestError as exc:  # Anthropic words its messages `param: message`
        raise _fail(param, exc.message) from None


def _need(body: Mapping[str, Any], key: str, kind: type, what: str, prefix: str = "") -> Any:
    param = prefix + key
    if key not in body:
        raise _fail(param, "Field required")
    value = body[key]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise _fail(param, f"Input should be {what}")
    return value


def decode_messages_request(body: Any, headers: tuple[tuple[str, str], ...]) -> dict[str, Any]:
    """The keyword arguments of the ModelRequest a Messages body asks for."""
    if not isinstance(body, dict):
        raise RequestError("The request body must be a JSON object.", None)
    model = _need(body, "model", str, "a valid string")
    max_tokens = _need(body, "max_tokens", int, "a valid integer")
    if max_tokens < 1:
        raise _fail("max_tokens", "Input should be greater than or equal to 1")
    raw_messages = _need(body, "messages", list, "a valid list")
    if not raw_messages:
        raise _fail("messages", "at least one message is required")
    messages: list[Message] = []
    system = body.get("system")
    conversation = len(raw_messages) >= CONVERSATION
    if system is not None:
        messages.append(_system_message(_system_text(system), conversation))
    names: dict[str, str] = {}
    for i, raw in enumerate(raw_messages):
        messages.extend(_kept_message(raw, i, names, conversation))
    stream = body.get("stream", False)
    if not isinstance(stream, bool):
        raise _fail("stream", "Input should be a valid boolean")
    # each reader below passes an absent (None) field: the tests spare most bodies the calls
    choice = body.get("tool_choice")
    tool_choice, parallel = (_AUTO, True) if choice is None else _tool_choice(choice)
    tools = () if body.get("tools") is None else _tools(body["tools"])
    if tool_choice.mode == "named" and not any(t.name == tool_choice.name for t in tools):
        raise _fail("tool_choice.name", f"Tool '{tool_choice.name}' not found in tools")
    if "stop_sequences" in body:
        _stop_sequences(body["stop_sequences"])
    if not _SAMPLING.isdisjoint(body):  # most bodies set none of them
        # kept in the request (and journaled): NaN or an infinity there would make the journal not JSON
        ANTHROPIC.sampling(body, "temperature", 0, 1)
        ANTHROPIC.sampling(body, "top_p", 0, 1)
        ANTHROPIC.integer(body, "top_k", 0)
    return {
        "api": "messages",
        "model": model,
        "messages": tuple(messages),
        "tools": tools,
        "tool_choice": tool_choice,
        "parallel_tool_calls": parallel,
        "response_schema": _schema(body) if "output_config" in body or "output_format" in body else None,
        "max_output_tokens": max_tokens,
        "stream": stream,
        "reasoning": None if body.get("thinking") is None else _thinking(body["thinking"], max_tokens),
        "headers": headers,
        "extra": {k: body[k] for k in _PASSED_THROUGH if k in body} if not _PASSED.isdisjoint(body) else {},
    }


def messages_request(body: Any, headers: tuple[tuple[str, str], ...]) -> ModelRequest:
    """The ModelRequest a Messages body asks for, built from the values checked above (`model.built`)."""
    request = built(ModelRequest, **decode_messages_request(body, headers))
    request.__pydantic_private__["_interned"] = True  # type: ignore[index]  # its tools and conversation
    return request


def _system_message(text: str, conversation: bool) -> Message:
    if not conversation:
        return built(Message, role="system", content=text)
    found = _MESSAGES.get(("system", text))
    if found is not None:
        return found[0]
    made = built(Message, role="system", content=text)
    _MESSAGES.put(("system", text), (made,), len(text))
    return made


def _kept_message(raw: Any, i: int, names: dict[str, str], conversation: bool) -> tuple[Message, ...]:
    """`_message`, or what it made of the same message before (`codec.interned`): a message of content
    blocks by its JSON text and the names its tool results take from the calls before them (each tool
    result is named after the call it answers), a message of plain text by its role and text when the
    request is a conversation (`CONVERSATION` messages or more: a short one is mostly new each time)."""
    key: Any = None
    nbytes = 0
    if type(raw) is dict:
        content, role = raw.get("content"), raw.get("role")
        if type(content) is list:
            text = json_key(raw)
            if text is not None:
                key, nbytes = (text, _result_names(content, names)), len(text)
        elif conversation and type(content) is str and type(role) is str:
            key, nbytes = (role, content), len(content)
    if key is not None:
        found = _MESSAGES.get(key)
        if found is not None:
            for message in found:
                for call in message.tool_calls:
                    names[call.id] = call.name
            return found
    made = tuple(_message(raw, i, names))
    if key is not None:
        _MESSAGES.put(key, made, nbytes)
    return made


def _result_names(content: list[Any], names: Mapping[str, str]) -> tuple[str | None, ...]:
    """The names the tool results among `content` take from the calls before them."""
    found: list[str | None] = []
    for block in content:
        if type(block) is dict and block.get("type") == "tool_result":
            call_id = block.get("tool_use_id")
            if type(call_id) is str:
                found.append(names.get(call_id))
    return tuple(found)


_MESSAGES: Interned[tuple[Message, ...]] = messages_cache()
"""What each message decoded lately made (a user turn's tool results are messages of their own)."""


def _stop_sequences(value: Any) -> None:
    """Checked here, applied by the engine (it cuts the text and records which sequence ended it)."""
    if value is None:
        return
    if not isinstance(value, list):
        raise _fail("stop_sequences", "Input should be a valid list")
    for j, s in enumerate(value):
        if not isinstance(s, str):
            raise _fail(f"stop_sequences.{j}", "Input should be a valid string")


def _system_text(system: Any) -> str:
    if isinstance(system, str):
        return system
    if not isinstance(system, list):
        raise _fail("system", "Input should be a valid string or a list of text blocks")
    texts = []
    for j, block in enumerate(system):
        if (
            not isinstance(block, dict)
            or block.get("type") != "text"
            or not isinstance(block.get("text"), str)
        ):
            raise _fail(f"system.{j}", "Input should be a text block with a string 'text'")
        texts.append(block["text"])
    return "\n".join(texts)


def _message(raw: Any, i: int, names: dict[str, str]) -> list[Message]:
    """One wire message as neutral messages: a user turn's tool results come out as `tool` messages."""
    param = f"messages.{i}"
    if not isinstance(raw, dict):
        raise _fail(param, "Input should be a valid dictionary")
    role = raw.get("role")
    if role not in ("user", "assistant"):
        raise _fail(f"{param}.role", "Input should be 'user' or 'assistant'")
    content = raw.get("content")
    if isinstance(content, str):
        return [built(Message, role=role, content=content)]
    if not isinstance(content, list):
        raise _fail(f"{param}.content", "Input should be a valid string or a list of content blocks")
    parts: list[dict[str, Any]] = []
    calls: list[ToolCall] = []
    results: list[Message] = []
    for j, block in enumerate(content):
        bparam = f"{param}.content.{j}"
        if not isinstance(block, dict) or not isinstance(block.get("type"), str):
            raise _fail(bparam, "Input should be a content block with a 'type'")
        kind = block["type"]
        if kind in _TEXT_BLOCKS:
            if not isinstance(block.get("text"), str):
                raise _fail(f"{bparam}.text", "Field required")
            parts.append({"type": "text", "text": block["text"]})
        elif kind == "tool_use":
            call = _tool_use(block, bparam)
            names[call.id] = call.name
            calls.append(call)
        elif kind == "tool_result":
            results.append(_tool_result(block, bparam, names))
        elif kind in _SKIPPED_BLOCKS:
            continue
        else:  # image, document, search_result, …: kept as a non-text part
            parts.append({"type": kind})
    text, neutral_parts = content_parts(parts)  # each a text block with string text, or a typed block
    if role == "assistant":
        return [built(Message, role="assistant", content=text, parts=neutral_parts, tool_calls=tuple(calls))]
    if calls:
        raise _fail(param, "tool_use blocks can only appear in assistant messages")
    out = list(results)
    if parts or not results:
        out.append(built(Message, role="user", content=text, parts=neutral_parts))
    return out


def _tool_use(block: Mapping[str, Any], param: str) -> ToolCall:
    for key in ("id", "name"):
        if not isinstance(block.get(key), str):
            raise _fail(f"{param}.{key}", "Field required")
    args = block.get("input", {})
    if not isinstance(args, dict):
        raise _fail(f"{param}.input", "Input should be a valid dictionary")
    return built(ToolCall, id=block["id"], name=block["name"], arguments=dumps(args))


def _tool_result(block: Mapping[str, Any], param: str, names: Mapping[str, str]) -> Message:
    call_id = block.get("tool_use_id")
    if not isinstance(call_id, str):
        raise _fail(f"{param}.tool_use_id", "Field required")
    content = block.get("content", "")
    if isinstance(content, list):
        texts = []
        for k, part in enumerate(content):
            if not isinstance(part, dict):
                raise _fail(f"{param}.content.{k}", "Input should be a content block")
            if part.get("type") == "text":
                texts.append(str(part.get("text", "")))
        content = "\n".join(texts)
    elif not isinstance(content, str):
        raise _fail(f"{param}.content", "Input should be a valid string or a list of content blocks")
    return built(
        Message, role="tool", content=content, tool_call_id=call_id, name=names.get(call_id),
        is_error=bool(block.get("is_error", False)),
    )  # fmt: skip


def _tools(value: Any) -> tuple[Tool, ...]:
    """The declared tools; one decoded before, the same text, taken from `_TOOLS` (`codec.interned`)."""
    if value is None:
        return ()
    if not isinstance(value, list):
        raise _fail("tools", "Input should be a valid list")
    return kept_tools(value, _TOOLS, _tool)


_TOOLS: Interned[Tool] = tools_cache()


def _tool(t: Any, i: int) -> Tool | None:
    """`tools.{i}` checked, as a neutral Tool; None for a server tool."""
    if not isinstance(t, dict):
        raise _fail(f"tools.{i}", "Input should be a valid dictionary")
    if "input_schema" not in t and t.get("type") not in (None, "custom"):
        return None  # a server tool (web search, code execution, …): the provider runs it, not the caller
    if not isinstance(t.get("name"), str):
        raise _fail(f"tools.{i}.name", "Field required")
    schema = t.get("input_schema")
    if not isinstance(schema, dict):
        raise _fail(f"tools.{i}.input_schema", "Field required")
    _check_schema(schema, f"tools.{i}.input_schema", f"tool '{t['name']}'")
    fields = {"name": t["name"], "description": t.get("description") or "", "parameters": schema,
              "strict": bool(t.get("strict", False))}  # fmt: skip
    if isinstance(fields["description"], str):
        return built(Tool, **fields)
    try:  # rare: a description that is not a string, refused in pydantic's words
        return Tool(**fields)
    except ValidationError as exc:
        raise _fail(f"tools.{i}", exc.errors()[0]["msg"]) from None


_AUTO = ToolChoice()


def _tool_choice(value: Any) -> tuple[ToolChoice, bool]:
    if value is None:
        return _AUTO, True
    if not isinstance(value, dict):
        raise _fail("tool_choice", "Input should be a valid dictionary")
    parallel = not value.get("disable_parallel_tool_use", False)
    kind = value.get("type")
    if kind == "auto":
        return built(ToolChoice, mode="auto"), parallel
    if kind == "any":
        return built(ToolChoice, mode="required"), parallel
    if kind == "none":
        return built(ToolChoice, mode="none"), parallel
    if kind == "tool":
        if not isinstance(value.get("name"), str):
            raise _fail("tool_choice.name", "Field required")
        return built(ToolChoice, mode="named", name=value["name"]), parallel
    raise _fail("tool_choice.type", "Input should be 'auto', 'any', 'tool' or 'none'")


def _thinking(value: Any, max_tokens: int) -> ReasoningRequest | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise _fail("thinking", "Input should be a valid dictionary")
    kind = value.get("type")
    if kind == "disabled":
        return None
    if kind == "adaptive":
        return built(ReasoningRequest, effort="adaptive", summary=value.get("display"))
    if kind != "enabled":
        raise _fail("thinking.type", "Input should be 'enabled', 'adaptive' or 'disabled'")
    budget = value.get("budget_tokens")
    if not isinstance(budget, int) or isinstance(budget, bool):
        raise _fail("thinking.enabled.budget_tokens", "Field required")
    if budget < _MIN_THINKING_BUDGET:
        raise _fail(
            "thinking.enabled.budget_tokens",
            f"Input should be greater than or equal to {_MIN_THINKING_BUDGET}",
        )
    if budget >= max_tokens:
        raise RequestError("`max_tokens` must be greater than `thinking.budget_tokens`.", "max_tokens")
    return built(ReasoningRequest, budget_tokens=budget, summary=value.get("display"))


def _schema(body: Mapping[str, Any]) -> ResponseSchema | None:
    """Structured outputs: `output_config.format` (and the older beta `output_format`)."""
    config = body.get("output_config")
    fmt = config.get("format") if isinstance(config, dict) else body.get("output_format")
    if fmt is None:
        return None
    if (
        not isinstance(fmt, dict)
        or fmt.get("type") != "json_schema"
        or not isinstance(fmt.get("schema"), dict)
    ):
        raise _fail("output_config.format", "Input should be {'type': 'json_schema', 'schema': {...}}")
    _check_schema(fmt["schema"], "output_config.format.schema", "output_config.format")
    return built(ResponseSchema, kind="json_schema", name="output", schema_=fmt["schema"], strict=True)
