"""Decoding a Responses API request body (`POST /v1/responses`) into the neutral request.

`input` is a string or a list of items: messages, replayed output items (`message` with `output_text`,
`function_call`, `reasoning`) and `function_call_output` results. Items that carry no conversation
(reasoning, item references, hosted-tool calls) are accepted and skipped, so a client replaying a whole
history never gets a 400 for it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from ...errors import RequestError
from ...model import (
    Message,
    ReasoningRequest,
    ResponseSchema,
    Tool,
    ToolCall,
    ToolChoice,
    built,
    content_parts,
)
from ..common import check_schema, type_error
from ..errors import unsupported_custom_tool
from ..fields import OPENAI
from ..interned import Interned, json_key, kept_tools, messages_cache, tools_cache
from .hosted import HOSTED_EXTRA, hosted_tools

__all__ = [
    "ECHOED",
    "conversation_messages",
    "decode_input",
    "decode_settings",
    "instructions_message",
    "is_conversation",
    "type_error",
]

ECHOED = (
    "background", "include", "instructions", "max_tool_calls", "metadata", "previous_response_id",
    "prompt_cache_key", "safety_identifier", "service_tier", "store", "temperature", "text", "tool_choice",
    "top_logprobs", "top_p", "truncation", "user",
)  # fmt: skip
"""Request fields kept verbatim in `ModelRequest.extra` because the response echoes them."""

_INPUT_ROLES = ("user", "assistant", "system", "developer")
_SKIPPED_ITEMS = frozenset(
    {"reasoning", "item_reference", "web_search_call", "file_search_call", "computer_call",
     "computer_call_output", "image_generation_call", "code_interpreter_call", "local_shell_call",
     "local_shell_call_output", "mcp_list_tools", "mcp_approval_request", "mcp_approval_response", "mcp_call",
     "compaction"}
)  # fmt: skip


def _text_of(value: Any, param: str) -> str:
    """A string, or the text of a list of text parts (function_call_output may carry either)."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        try:
            return content_parts(value)[0]
        except ValueError as exc:
            raise RequestError(f"Invalid value for '{param}': Value error, {exc}", param) from None
    raise type_error(param, "a string or an array of content parts", value)


def decode_input(value: Any, history: tuple[Message, ...] = ()) -> list[Message]:
    """The conversation carried by `input`, in order; `history` names the tools of earlier calls.

    A list of several items is a conversation its next turn sends again: each item's decoding is kept in
    `_ITEMS` by its JSON text (`codec.interned`), a tool output's with the name it takes from the calls
    before it, and each turn's assistant message with its calls by the texts of the items it is made of."""
    if isinstance(value, str):
        return [built(Message, role="user", content=value)]
    if not isinstance(value, list):
        raise type_error("input", "a string or an array of input items", value)
    out: list[Message] = []
    keys: list[Any] = []  # each message's key in `_ITEMS` (None: not kept), beside `out`
    keep = is_conversation(value)
    # the calls of one turn share one assistant message: the one they follow, else a new one. They are
    # gathered and the message built once the turn ends (rebuilt per call, 48,000 calls took 18 s)
    run: list[ToolCall] = []
    run_keys: list[bytes | None] = []
    joined: Message | None = None
    joined_key: Any = None
    call_names = {c.id: c.name for msg in history for c in msg.tool_calls}
    for i, item in enumerate(value):
        param = f"input[{i}]"
        if not isinstance(item, dict):
            raise type_error(param, "an object", item)
        kind = item.get("type", "message" if "role" in item else None)
        text = json_key(item) if keep else None
        # each kind of item under keys of its own shape, so a key finds what its kind makes
        if kind == "function_call":
            call = None if text is None else _ITEMS.get(("call", text))
            if call is None:
                call = _function_call(item, param)
                if text is not None:
                    _ITEMS.put(("call", text), call, len(text))
            call_names[call.id] = call.name
            if not run:
                if out and out[-1].role == "assistant":
                    joined, joined_key = out.pop(), keys.pop()
                else:
                    joined, joined_key = None, ()
            run.append(call)
            run_keys.append(text)
            continue
        if run and kind in ("message", "function_call_output"):  # the turn's calls end here
            _end_turn(out, keys, joined, joined_key, run, run_keys)
            run, run_keys = [], []
        key: Any = None  # the message's in `_ITEMS`
        if kind == "message":
            key = None if text is None else ("message", text)
            found = None if key is None else _ITEMS.get(key)
            if found is None:
                found = _message(item, param)
                if key is not None:
                    _ITEMS.put(key, found, len(key[1]))
            out.append(found)
            keys.append(key)
        elif kind == "function_call_output":
            call_id = item.get("call_id")
            if not isinstance(call_id, str) or not call_id:
                raise RequestError(
                    f"Missing required parameter: '{param}.call_id'.",
                    f"{param}.call_id",
                    code="missing_required_parameter",
                )
            if "output" not in item:
                raise RequestError(
                    f"Missing required parameter: '{param}.output'.",
                    f"{param}.output",
                    code="missing_required_parameter",
                )
            name = call_names.get(call_id)
            key = None if text is None else ("output", text, name)
            found = None if key is None else _ITEMS.get(key)
            if found is None:
                found = built(Message, role="tool", content=_text_of(item["output"], f"{param}.output"),
                              tool_call_id=call_id, name=name)  # fmt: skip
                if key is not None:
                    _ITEMS.put(key, found, len(key[1]))
            out.append(found)
            keys.append(key)
        elif isinstance(kind, str) and (
            kind in _SKIPPED_ITEMS or kind.endswith("_call") or kind.endswith("_output")
        ):
            continue
        else:
            raise RequestError(
                f"Invalid value for '{param}.type': {kind!r} is not a supported input item type.",
                f"{param}.type",
                code="invalid_value",
            )
    if run:
        _end_turn(out, keys, joined, joined_key, run, run_keys)
    return out


def _end_turn(
    out: list[Message], keys: list[Any], joined: Message | None, joined_key: Any, run: list[ToolCall],
    run_keys: list[bytes | None],
) -> None:
    """Add the assistant message holding a turn's calls (`_with_calls`), kept by the keys of what it is
    made of when each has one (`joined_key` is `()` when the calls follow no assistant message)."""
    key = None if joined_key is None or None in run_keys else ("turn", joined_key, tuple(run_keys))
    found = None if key is None else _ITEMS.get(key)
    if found is None:
        found = _with_calls(joined, run)
        if key is not None:
            _ITEMS.put(key, found, 0)
    out.append(found)
    keys.append(key)


_ITEMS: Interned[Any] = messages_cache()
"""What each item of a conversation's `input` decoded lately made (see `decode_input`)."""


def is_conversation(value: Any) -> bool:
    """Whether `input` is a conversation its next turn sends again, whose items `_ITEMS` keeps."""
    return type(value) is list and len(value) > 1


def instructions_message(text: str, kept: bool) -> Message:
    """The system message of `instructions` (checked a string), kept with a conversation's items."""
    if not kept:
        return built(Message, role="system", content=text)
    found: Message | None = _ITEMS.get(("instructions", text))
    if found is not None:
        return found
    made = built(Message, role="system", content=text)
    _ITEMS.put(("instructions", text), made, len(text))
    return made


def _with_calls(joined: Message | None, calls: list[ToolCall]) -> Message:
    """The assistant message holding one turn's `calls`: `joined` (the assistant message they follow) with
    them added, or a new one."""
    if joined is None:
        return built(Message, role="assistant", content="", tool_calls=tuple(calls))
    return joined.model_copy(update={"tool_calls": (*joined.tool_calls, *calls)})


def _message(item: Mapping[str, Any], param: str) -> Message:
    role = item.get("role")
    if role not in _INPUT_ROLES:
        raise RequestError(
            f"Invalid value for '{param}.role': expected one of {', '.join(_INPUT_ROLES)}, got {role!r}.",
            f"{param}.role",
            code="invalid_value",
        )
    content = item.get("content")
    if not isinstance(content, str | list):
        raise type_error(f"{param}.content", "a string or an array of content parts", content)
    if isinstance(content, str):
        return built(Message, role=role, content=content)
    try:
        text, parts = content_parts(content)
    except ValueError as exc:
        raise RequestError(f"Invalid value for '{param}.content': {exc}", f"{param}.content") from None
    return built(Message, role=role, content=text, parts=parts)


def _function_call(item: Mapping[str, Any], param: str) -> ToolCall:
    for key in ("call_id", "name"):
        if not isinstance(item.get(key), str) or not item[key]:
            raise RequestError(
                f"Missing required parameter: '{param}.{key}'.",
                f"{param}.{key}",
                code="missing_required_parameter",
            )
    arguments = item.get("arguments", "{}")
    if not isinstance(arguments, str):
        raise type_error(f"{param}.arguments", "a string", arguments)
    return built(ToolCall, id=item["call_id"], name=item["name"], arguments=arguments)


def _tools(value: Any) -> tuple[Tool, ...]:
    """The declared function tools; one decoded before, the same text, taken from `_TOOLS`."""
    if value is None:
        return ()
    if not isinstance(value, list):
        raise type_error("tools", "an array", value)
    return kept_tools(value, _TOOLS, _tool)


_TOOLS: Interned[Tool] = tools_cache()


def _tool(t: Any, i: int) -> Tool | None:
    """`tools[i]` checked, as a neutral Tool; None for a hosted tool."""
    if not isinstance(t, dict):
        raise type_error(f"tools[{i}]", "an object", t)
    kind = t.get("type")
    if kind is not None and not isinstance(kind, str):  # a list here reached a dict look-up: a 500
        raise type_error(f"tools[{i}].type", "a string", kind)
    if t.get("type") == "custom":
        raise unsupported_custom_tool(f"tools[{i}].type")
    if t.get("type", "function") != "function":
        return None  # hosted tools (web search, file search, …) are run by the provider, not the caller
    if not isinstance(t.get("name"), str) or not t["name"]:
        raise RequestError(
            f"Missing required parameter: 'tools[{i}].name'.",
            f"tools[{i}].name",
            code="missing_required_parameter",
        )
    params = t.get("parameters")
    if params is not None and not isinstance(params, dict):
        raise type_error(f"tools[{i}].parameters", "an object", params)
    if params is not None:
        check_schema(params, f"tools[{i}].parameters", f"function '{t['name']}'", tool=True)
    fields = {k: t[k] for k in ("name", "description", "parameters", "strict") if t.get(k) is not None}
    if isinstance(fields.get("description", ""), str) and isinstance(fields.get("strict", False), bool):
        return built(Tool, **fields)
    try:  # rare: a value pydantic coerces (`strict: "yes"`) or refuses, in its own words
        return Tool.model_validate(fields)
    except ValidationError as exc:
        message = f"Invalid value for 'tools[{i}]': {exc.errors()[0]['msg']}"
        raise RequestError(message, f"tools[{i}]") from None


def _tool_choice(value: Any) -> ToolChoice:
    if value is None:
        return _AUTO
    if isinstance(value, str):
        if value not in ("auto", "none", "required"):
            raise RequestError(
                f"Invalid value for 'tool_choice': expected 'none', 'auto' or 'required', got {value!r}.",
                "tool_choice",
                code="invalid_value",
            )
        return built(ToolChoice, mode=value)
    if not isinstance(value, dict):
        raise type_error("tool_choice", "a string or an object", value)
    if value.get("type") == "function":
        if not isinstance(value.get("name"), str):
            raise RequestError(
                "Missing required parameter: 'tool_choice.name'.",
                "tool_choice.name",
                code="missing_required_parameter",
            )
        return built(ToolChoice, mode="named", name=value["name"])
    if value.get("type") == "custom":
        raise unsupported_custom_tool("tool_choice.type")
    if value.get("type") == "allowed_tools":
        mode = value.get("mode", "auto")
        return built(ToolChoice, mode="required" if mode == "required" else "auto")
    # a hosted tool forced (web search, …): the provider would run it and answer, so no function is called
    return built(ToolChoice, mode="none")


_AUTO = ToolChoice()


def _undeclared(param: str, name: str) -> RequestError:
    return RequestError(
        f"Invalid value for '{param}': no function named '{name}' is declared in 'tools'.",
        param,
        code="invalid_value",
    )


def _callable_tools(tools: tuple[Tool, ...], choice: Any) -> tuple[Tool, ...]:
    """The tools the model may call: with `tool_choice` `allowed_tools`, only the functions it lists.
    A named function must be declared (as the API requires)."""
    if not isinstance(choice, dict):
        return tools
    if choice.get("type") == "function" and not any(t.name == choice["name"] for t in tools):
        raise _undeclared("tool_choice", choice["name"])
    if choice.get("type") != "allowed_tools":
        return tools
    listed = choice.get("tools")
    if not isinstance(listed, list):
        raise type_error("tool_choice.tools", "an array", listed)
    # sets: 16,000 allowed tools took 8.8 s checked against the lists
    declared = {t.name for t in tools}
    names: set[str] = set()
    for k, entry in enumerate(listed):
        param = f"tool_choice.tools[{k}]"
        if not isinstance(entry, dict):
            raise type_error(param, "an object", entry)
        if entry.get("type") == "custom":
            raise unsupported_custom_tool(f"{param}.type")
        if entry.get("type", "function") != "function":
            continue  # a hosted tool allowed: nothing the caller runs
        name = entry.get("name")
        if not isinstance(name, str) or name not in declared:
            raise _undeclared(param, str(name))
        names.add(name)
    return tuple(t for t in tools if t.name in names)


def _schema(text: Any) -> ResponseSchema | None:
    if text is None:
        return None
    if not isinstance(text, dict):
        raise type_error("text", "an object", text)
    fmt = text.get("format")
    if fmt is None:
        return None
    if not isinstance(fmt, dict):
        raise type_error("text.format", "an object", fmt)
    kind = fmt.get("type")
    if kind == "text":
        return None
    if kind == "json_object":
        return built(ResponseSchema, kind="json_object")
    if kind != "json_schema":
        raise RequestError(
            "Invalid value for 'text.format.type': expected 'text', 'json_object' or 'json_schema', "
            f"got {kind!r}.",
            "text.format.type",
            code="invalid_value",
        )
    for key, expected, named in (("name", str, "a string"), ("schema", dict, "an object")):
        if key not in fmt:
            raise RequestError(
                f"Missing required parameter: 'text.format.{key}'.",
                f"text.format.{key}",
                code="missing_required_parameter",
            )
        if not isinstance(fmt[key], expected):
            raise type_error(f"text.format.{key}", named, fmt[key])
    check_schema(fmt["schema"], "text.format.schema", f"text.format '{fmt['name']}'")
    return built(ResponseSchema, kind="json_schema", name=fmt["name"], schema_=fmt["schema"],
                 strict=bool(fmt.get("strict")))  # fmt: skip


def _reasoning(value: Any) -> ReasoningRequest | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise type_error("reasoning", "an object", value)
    effort, summary = value.get("effort"), value.get("summary", value.get("generate_summary"))
    if effort == "none":
        return None
    for key, v in (("effort", effort), ("summary", summary)):
        if v is not None and not isinstance(v, str):
            raise type_error(f"reasoning.{key}", "a string", v)
    return built(ReasoningRequest, effort=effort, summary=summary)


def decode_settings(body: Mapping[str, Any]) -> dict[str, Any]:
    """Every ModelRequest field a Responses body sets, except `messages` and `headers`."""
    max_out = OPENAI.integer(body, "max_output_tokens", 1)
    for key in ("stop", "stop_sequences"):
        if key in body:  # Chat and Messages parameters; silently ignoring one would let text run past it
            raise RequestError(f"Unknown parameter: '{key}'.", key, code="unknown_parameter")
    # each check passes when its field is absent: most bodies skip them (in the order refusals are named)
    if not _SAMPLING.isdisjoint(body):
        _check_sampling(body)
    parallel = OPENAI.boolean(body, "parallel_tool_calls")
    stream = OPENAI.boolean(body, "stream")
    if not _STATE.isdisjoint(body):
        OPENAI.boolean(body, "store")
        OPENAI.string(body, "instructions")
        OPENAI.string(body, "previous_response_id")
        OPENAI.object(body, "metadata")
    tools = body.get("tools")
    choice = body.get("tool_choice")
    return {
        "tool_choice": _tool_choice(choice),
        "tools": _callable_tools(_tools(tools), choice) if tools is not None or choice is not None else (),
        "response_schema": _schema(body.get("text")),
        "reasoning": _reasoning(body.get("reasoning")),
        "max_output_tokens": max_out,
        "parallel_tool_calls": True if parallel is None else parallel,
        "stream": bool(stream),
        "extra": ({k: body[k] for k in ECHOED if k in body} if not _ECHOED.isdisjoint(body) else {})
        | (_hosted(tools) if tools is not None else {}),
    }


_SAMPLING = frozenset({"top_logprobs", "temperature", "top_p", "include"})
_STATE = frozenset({"store", "instructions", "previous_response_id", "metadata"})
_ECHOED = frozenset(ECHOED)


def _check_sampling(body: Mapping[str, Any]) -> None:
    OPENAI.integer(body, "top_logprobs", 0, 20)
    OPENAI.sampling(body, "temperature", 0, 2)
    OPENAI.sampling(body, "top_p", 0, 1)
    include = body.get("include")
    if include is not None and not isinstance(include, list):
        raise OPENAI.wording.wrong_type("include", "list", include)
    for i, value in enumerate(include or ()):
        if not isinstance(value, str):
            raise type_error(f"include[{i}]", "a string", value)


def _hosted(tools: Any) -> dict[str, Any]:
    kinds = hosted_tools(tools)
    return {HOSTED_EXTRA: kinds} if kinds else {}


def conversation_messages(messages: tuple[Message, ...], has_instructions: bool) -> tuple[Message, ...]:
    """The messages a stored response carries forward: `instructions` are not carried over."""
    return messages[1:] if has_instructions else messages
