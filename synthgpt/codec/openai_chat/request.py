"""Decoding a Chat Completions request body (WIRE.md §2.1) into the neutral ModelRequest.

Every check raises RequestError with `param` set to the offending field, worded like the OpenAI API
("Invalid type for 'messages[0].content': expected …, but got … instead."), so SDKs surface a
BadRequestError that says exactly what to fix. Unknown top-level fields are kept in `extra` rather than
refused: SDKs add new fields faster than any mock can list them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

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
from ..common import check_schema, json_type_name, type_error
from ..errors import unsupported_custom_tool
from ..fields import CHAT
from ..headers import journal_headers
from ..interned import Interned, json_key, kept_tools, messages_cache, tools_cache
from .reasoning import chat_reasoning

__all__ = ["decode_chat_request"]

ROLES = ("system", "assistant", "user", "function", "tool", "developer")
_PART_TYPES = ("text", "image_url", "input_audio", "file", "refusal")
_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_EFFORTS = ("none", "minimal", "low", "medium", "high", "xhigh")
_SERVICE_TIERS = ("auto", "default", "flex", "scale", "priority", "fast")
# Fields decoded into ModelRequest fields; everything else goes to `extra` verbatim.
_HANDLED = frozenset(
    {
        "model",
        "messages",
        "tools",
        "tool_choice",
        "parallel_tool_calls",
        "response_format",
        "stream",
        "stream_options",
        "n",
        "max_tokens",
        "max_completion_tokens",
        "reasoning_effort",
    }
)


def _type_error(param: str, expected: str, value: Any) -> RequestError:
    return type_error(param, expected, value, code=None)


def _missing(param: str) -> RequestError:
    return RequestError(f"Missing required parameter: '{param}'.", param)


def _bad_value(param: str, value: Any, supported: tuple[str, ...]) -> RequestError:
    listed = ", ".join(f"'{s}'" for s in supported[:-1]) + f", and '{supported[-1]}'"
    return RequestError(f"Invalid value: '{value}'. Supported values are: {listed}.", param)


_string, _boolean, _integer, _number = CHAT.string, CHAT.boolean, CHAT.integer, CHAT.sampling


def _content(msg: Mapping[str, Any], param: str, role: str) -> Any:
    content = msg.get("content")
    if content is None:
        if role in ("assistant", "function"):
            return None
        raise _missing(f"{param}.content")
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise _type_error(f"{param}.content", "one of a string or array of objects", content)
    for j, part in enumerate(content):
        pp = f"{param}.content[{j}]"
        if not isinstance(part, dict):
            raise _type_error(pp, "an object", part)
        ptype = part.get("type")
        if ptype is None:
            raise _missing(f"{pp}.type")
        if ptype not in _PART_TYPES:
            raise _bad_value(f"{pp}.type", ptype, _PART_TYPES)
        if ptype == "text" and "text" not in part:
            raise _missing(f"{pp}.text")
        if ptype == "text" and not isinstance(part["text"], str):
            raise _type_error(f"{pp}.text", "a string", part["text"])
    return content


def _tool_calls(msg: Mapping[str, Any], param: str) -> list[dict[str, Any]]:
    calls = msg.get("tool_calls")
    if calls is None:
        return []
    if not isinstance(calls, list):
        raise _type_error(f"{param}.tool_calls", "an array of objects", calls)
    out = []
    for k, call in enumerate(calls):
        cp = f"{param}.tool_calls[{k}]"
        if not isinstance(call, dict):
            raise _type_error(cp, "an object", call)
        call_id = _string(call, "id", f"{cp}.id", required=True)
        fn = call.get("function")
        if not isinstance(fn, dict):
            raise _missing(f"{cp}.function") if fn is None else _type_error(f"{cp}.function", "an object", fn)
        name = _string(fn, "name", f"{cp}.function.name", required=True)
        arguments = _string(fn, "arguments", f"{cp}.function.arguments", required=True)
        out.append({"id": call_id, "name": name, "arguments": arguments})
    return out


def _function_call_message(msg: Mapping[str, Any], param: str) -> dict[str, Any] | None:
    """The deprecated `function_call` of an assistant message, as a tool call. Legacy calls carry no id: a
    `function` result names the function it answers, so the function's name links the two."""
    call = msg.get("function_call")
    if call is None:
        return None
    if not isinstance(call, dict):
        raise _type_error(f"{param}.function_call", "an object", call)
    name = _string(call, "name", f"{param}.function_call.name", required=True)
    arguments = _string(call, "arguments", f"{param}.function_call.arguments", required=True)
    return {"id": name, "name": name, "arguments": arguments}


def _message(msg: Any, i: int, legacy: bool = False) -> dict[str, Any]:
    param = f"messages[{i}]"
    if not isinstance(msg, dict):
        raise _type_error(param, "an object", msg)
    role = msg.get("role")
    if role is None:
        raise _missing(f"{param}.role")
    if role not in ROLES:
        raise _bad_value(f"{param}.role", role, ROLES)
    out: dict[str, Any] = {"role": role, "content": _content(msg, param, role)}
    name = _string(msg, "name", f"{param}.name")
    if name is not None:
        out["name"] = name
    if role == "assistant":
        out["tool_calls"] = _tool_calls(msg, param)
        if legacy and out["tool_calls"]:
            raise RequestError(
                "Invalid parameter: 'tool_calls' cannot be used when 'functions' are present. Please use "
                "'tools' instead of 'functions'.",
                f"messages.[{i}].tool_calls",
            )
        call = _function_call_message(msg, param)
        if call is not None:
            out["tool_calls"].append(call)
    elif role == "tool":
        out["tool_call_id"] = _string(msg, "tool_call_id", f"{param}.tool_call_id", required=True)
    elif role == "function":  # the deprecated form of a tool result: the function's name links it
        if name is None:
            raise _missing(f"{param}.name")
        out.update(role="tool", tool_call_id=name)
    return out


MAX_TOOLS = 128
"""Functions a request may offer ("A max of 128 functions are supported", OpenAI's API reference). More
are refused before any is checked: 20,000 tools took 2.6 s to check and compile."""


def _at_most(items: list[Any], limit: int, param: str) -> None:
    if len(items) > limit:
        raise RequestError(
            f"Invalid '{param}': array too long. Expected an array with maximum length {limit}, but got an "
            f"array with length {len(items)} instead.",
            param,
        )


def _tools(body: Mapping[str, Any]) -> tuple[list[dict[str, Any]], list[Tool]]:
    """The tools checked (read by `tool_choice`'s checks), and each as a neutral `Tool`; a tool decoded
    before, the same text, is taken from `_TOOLS`."""
    tools = body.get("tools")
    if tools is None:
        return [], []
    if not isinstance(tools, list):
        raise _type_error("tools", "an array of objects", tools)
    _at_most(tools, MAX_TOOLS, "tools")
    pairs = kept_tools(tools, _TOOLS, _checked_tool)
    return [pair[0] for pair in pairs], [pair[1] for pair in pairs]


def _checked_tool(tool: Any, i: int) -> tuple[dict[str, Any], Tool]:
    """`tools[i]` checked (the dict `tool_choice`'s checks read), and as a neutral Tool."""
    tp = f"tools[{i}]"
    if not isinstance(tool, dict):
        raise _type_error(tp, "an object", tool)
    ttype = tool.get("type", "function")
    if ttype == "custom":
        raise unsupported_custom_tool(f"{tp}.type")
    if ttype != "function":
        raise _bad_value(f"{tp}.type", ttype, ("function", "custom"))
    fn = tool.get("function")
    if not isinstance(fn, dict):
        raise _missing(f"{tp}.function") if fn is None else _type_error(f"{tp}.function", "an object", fn)
    strict = fn.get("strict")
    if strict is not None and not isinstance(strict, bool):
        raise _type_error(f"{tp}.function.strict", "a boolean", strict)
    checked = {**_function(fn, f"{tp}.function"), "strict": strict}
    return checked, _neutral_tool(checked)


_TOOLS: Interned[tuple[dict[str, Any], Tool]] = tools_cache()
"""Each tool decoded lately, by its JSON text: the checked dict and its `Tool` (see `codec.interned`)."""


def _function(fn: Mapping[str, Any], fp: str) -> dict[str, Any]:
    """A function's name, description and parameters (checked), from a tool's `function` or a deprecated
    `functions` entry; `fp` is where it sits in the request."""
    name = _string(fn, "name", f"{fp}.name", required=True)
    assert name is not None
    if not _NAME.match(name):
        raise RequestError(
            f"Invalid '{fp}.name': string does not match pattern. Expected a string that matches the "
            "pattern '^[a-zA-Z0-9_-]{1,64}$'.",
            f"{fp}.name",
        )
    description = _string(fn, "description", f"{fp}.description")
    params = fn.get("parameters")
    if params is not None and not isinstance(params, dict):
        raise _type_error(f"{fp}.parameters", "an object", params)
    if params is not None:
        check_schema(params, f"{fp}.parameters", f"function '{name}'", tool=True)
    return {"name": name, "description": description, "parameters": params}


def _functions(body: Mapping[str, Any]) -> list[dict[str, Any]] | None:
    """The deprecated `functions`, as neutral tools; None when the request has none."""
    functions = body.get("functions")
    if functions is None:
        return None
    if body.get("tools") is not None:
        raise RequestError(
            "Invalid request: 'functions' and 'tools' cannot both be provided. 'functions' are deprecated; "
            "use the 'tools' parameter instead."
        )
    if not isinstance(functions, list):
        raise _type_error("functions", "an array of objects", functions)
    if not functions:
        raise RequestError(
            "Invalid 'functions': empty array. Expected an array with minimum length 1, but got an empty "
            "array instead.",
            "functions",
        )
    _at_most(functions, MAX_TOOLS, "functions")
    out = []
    for i, fn in enumerate(functions):
        fp = f"functions[{i}]"
        if not isinstance(fn, dict):
            raise _type_error(fp, "an object", fn)
        out.append(_function(fn, fp))
    return out


def _function_call(body: Mapping[str, Any], functions: list[dict[str, Any]] | None) -> Any:
    """The deprecated `function_call`, as a neutral tool choice (None: the default, `auto`)."""
    choice = body.get("function_call")
    if choice is None:
        return None
    if functions is None:
        raise RequestError(
            "Invalid value for 'function_call': 'function_call' is only allowed when 'functions' are "
            "specified.",
            "function_call",
        )
    if isinstance(choice, str):
        if choice not in ("none", "auto"):
            raise _bad_value("function_call", choice, ("none", "auto"))
        return choice
    if not isinstance(choice, dict):
        raise _type_error("function_call", "one of a string or object", choice)
    name = _string(choice, "name", "function_call.name", required=True)
    if not any(f["name"] == name for f in functions):
        raise RequestError(
            f"Invalid value for 'function_call': no function named '{name}' is declared in 'functions'.",
            "function_call",
        )
    return {"mode": "named", "name": name}


def _tool_choice(body: Mapping[str, Any], tools: list[dict[str, Any]]) -> Any:
    choice = body.get("tool_choice")
    if choice is None:
        return None
    if not tools and "tools" not in body:
        raise RequestError(
            "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified.",
            "tool_choice",
        )
    if isinstance(choice, str):
        if choice not in ("none", "auto", "required"):
            raise _bad_value("tool_choice", choice, ("none", "auto", "required"))
        return choice
    if not isinstance(choice, dict):
        raise _type_error("tool_choice", "one of a string or object", choice)
    ctype = choice.get("type")
    if ctype == "allowed_tools":
        mode = (choice.get("allowed_tools") or {}).get("mode", "auto")
        if mode not in ("auto", "required"):
            raise _bad_value("tool_choice.allowed_tools.mode", mode, ("auto", "required"))
        return mode
    if ctype == "custom":
        raise unsupported_custom_tool("tool_choice.type")
    if ctype != "function":
        raise _bad_value("tool_choice.type", ctype, ("function", "custom", "allowed_tools"))
    inner = choice.get(ctype)
    if not isinstance(inner, dict):
        raise _missing(f"tool_choice.{ctype}")
    name = _string(inner, "name", f"tool_choice.{ctype}.name", required=True)
    if ctype == "function" and not any(t["name"] == name for t in tools):
        raise RequestError(
            f"Invalid value for 'tool_choice': no function named '{name}' is declared in 'tools'.",
            "tool_choice",
        )
    return {"mode": "named", "name": name}


def _allowed(body: Mapping[str, Any], tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The tools the model may call: with `tool_choice.allowed_tools`, only those it lists (by name)."""
    choice = body.get("tool_choice")
    if not isinstance(choice, dict) or choice.get("type") != "allowed_tools":
        return tools
    listed = (choice.get("allowed_tools") or {}).get("tools")
    param = "tool_choice.allowed_tools.tools"
    if listed is None:
        raise _missing(param)
    if not isinstance(listed, list):
        raise _type_error(param, "an array of objects", listed)
    names: list[str] = []
    for k, entry in enumerate(listed):
        if not isinstance(entry, dict):
            raise _type_error(f"{param}[{k}]", "an object", entry)
        if entry.get("type") == "custom":
            raise unsupported_custom_tool(f"{param}[{k}].type")
        fn = entry.get("function")
        fn = fn if isinstance(fn, dict) else {}
        name = _string(fn, "name", f"{param}[{k}].function.name", required=True)
        if not any(t["name"] == name for t in tools):
            raise RequestError(
                f"Invalid value for '{param}[{k}]': no function named '{name}' is declared in 'tools'.",
                f"{param}[{k}]",
            )
        names.append(str(name))
    return [t for t in tools if t["name"] in names]


def _response_format(body: Mapping[str, Any]) -> dict[str, Any] | None:
    rf = body.get("response_format")
    if rf is None:
        return None
    if not isinstance(rf, dict):
        raise _type_error("response_format", "an object", rf)
    rtype = rf.get("type")
    if rtype is None:
        raise _missing("response_format.type")
    if rtype == "text":
        return None
    if rtype == "json_object":
        return {"kind": "json_object"}
    if rtype != "json_schema":
        raise _bad_value("response_format.type", rtype, ("text", "json_object", "json_schema"))
    js = rf.get("json_schema")
    if not isinstance(js, dict):
        raise (
            _missing("response_format.json_schema")
            if js is None
            else _type_error("response_format.json_schema", "an object", js)
        )
    name = _string(js, "name", "response_format.json_schema.name", required=True)
    schema = js.get("schema")
    if schema is not None and not isinstance(schema, dict):
        raise _type_error("response_format.json_schema.schema", "an object", schema)
    strict = js.get("strict")
    if strict is not None and not isinstance(strict, bool):
        raise _type_error("response_format.json_schema.strict", "a boolean", strict)
    if schema is not None:
        check_schema(schema, "response_format.json_schema.schema", f"response_format '{name}'")
    return {"kind": "json_schema", "name": name, "schema": schema, "strict": bool(strict)}


_EXTRAS = frozenset(
    {"temperature", "top_p", "presence_penalty", "frequency_penalty", "logprobs", "top_logprobs", "seed",
     "store", "user", "stop", "metadata", "service_tier"}
)  # fmt: skip
"""The fields `_validate_extras` reads."""


def _validate_extras(body: Mapping[str, Any]) -> None:
    _number(body, "temperature", 0, 2)
    _number(body, "top_p", 0, 1)
    _number(body, "presence_penalty", -2, 2)
    _number(body, "frequency_penalty", -2, 2)
    logprobs = _boolean(body, "logprobs")
    if _integer(body, "top_logprobs", 0, 20) is not None and not logprobs:
        raise RequestError(
            "Invalid value for 'top_logprobs': 'logprobs' must be set to true when 'top_logprobs' is used.",
            "top_logprobs",
        )
    _integer(body, "seed")
    _boolean(body, "store")
    _string(body, "user", "user")
    stop = body.get("stop")
    if stop is not None and not isinstance(stop, str):
        if not isinstance(stop, list) or not all(isinstance(s, str) for s in stop):
            raise _type_error("stop", "one of a string or array of strings", stop)
        _at_most(stop, 4, "stop")
    CHAT.object(body, "metadata")
    tier = _string(body, "service_tier", "service_tier")
    if tier is not None and tier not in _SERVICE_TIERS:
        raise _bad_value("service_tier", tier, _SERVICE_TIERS)


_NO_TOOLS: tuple[list[dict[str, Any]], list[Tool]] = ([], [])


def _decoded_messages(messages: list[Any], legacy: bool) -> tuple[Message, ...]:
    """The neutral messages, each checked (`_message`, in order: the first fault is the one refused) or,
    decoded before, taken from `_MESSAGES`. A tool result gets the name of the call it answers, as the
    Messages and Responses decoders do: the same conversation must read (and hash) the same whichever API
    carried it. That name comes from the calls before it, so it is part of the key (with `legacy`, which
    only refuses more)."""
    out = []
    names: dict[str, str] = {}  # each earlier call's id -> its function's name
    for i, msg in enumerate(messages):
        key = None
        if type(msg) is dict:
            text = json_key(msg)
            if text is not None:
                named = None
                if msg.get("role") == "tool" and msg.get("name") is None:
                    call_id = msg.get("tool_call_id")
                    if type(call_id) is str:
                        named = names.get(call_id)
                key = (text, legacy, named)
                found = _MESSAGES.get(key)
                if found is not None:
                    for call in found.tool_calls:
                        names[call.id] = call.name
                    out.append(found)
                    continue
        checked = _message(msg, i, legacy)
        if checked["role"] == "tool" and "name" not in checked and checked["tool_call_id"] in names:
            checked["name"] = names[checked["tool_call_id"]]
        for call in checked.get("tool_calls", ()):
            names[call["id"]] = call["name"]
        neutral = _neutral_message(checked)
        if key is not None:
            _MESSAGES.put(key, neutral, len(key[0]))
        out.append(neutral)
    return tuple(out)


_MESSAGES: Interned[Message] = messages_cache()
"""Each message decoded lately, by its JSON text and what else its decoding read (see `codec.interned`)."""


def decode_chat_request(body: Any, headers: Mapping[str, str], params: Mapping[str, str]) -> ModelRequest:
    """The neutral request for a Chat Completions body. `params` may hold the Azure `deployment`, which
    stands in for a missing `model`."""
    if not isinstance(body, dict):
        raise RequestError(f"The request body must be a JSON object, but got {json_type_name(body)} instead.")
    if body.get("model") is None and params.get("deployment"):
        model: str | None = params["deployment"]
    else:
        model = _string(body, "model", "model")
        if model is None:
            raise RequestError("You must provide a model parameter.", "model")
    messages = body.get("messages")
    if messages is None:
        raise _missing("messages")
    if not isinstance(messages, list):
        raise _type_error("messages", "an array of objects", messages)
    if not messages:
        raise RequestError(
            "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty "
            "array instead.",
            "messages",
        )
    # each reader below passes an absent field: `in` tests spare most bodies the calls
    functions = _functions(body) if "functions" in body else None
    tools, tool_models = _tools(body) if "tools" in body else _NO_TOOLS
    stream = bool(_boolean(body, "stream"))
    stream_options = body.get("stream_options")
    if stream_options is not None:
        if not isinstance(stream_options, dict):
            raise _type_error("stream_options", "an object", stream_options)
        if not stream:
            raise RequestError(
                "The 'stream_options' parameter is only allowed when 'stream' is enabled.", "stream_options"
            )
        if not isinstance(stream_options.get("include_usage", False), bool):
            raise _type_error("stream_options.include_usage", "a boolean", stream_options["include_usage"])
    limit = _integer(body, "max_completion_tokens", 1) if "max_completion_tokens" in body else None
    legacy_limit = _integer(body, "max_tokens", 1) if "max_tokens" in body else None
    effort = _string(body, "reasoning_effort", "reasoning_effort") if "reasoning_effort" in body else None
    if effort is not None and effort not in _EFFORTS:
        raise _bad_value("reasoning_effort", effort, _EFFORTS)
    parallel = _boolean(body, "parallel_tool_calls") if "parallel_tool_calls" in body else None
    if not _EXTRAS.isdisjoint(body):  # each check passes when its field is absent: most bodies skip them all
        _validate_extras(body)
    # both checked whichever is used: each is refused without the list it chooses from
    tool_choice = _tool_choice(body, tools) if "tool_choice" in body else None
    function_call = _function_call(body, functions) if "function_call" in body else None
    if functions is not None:
        tool_choice = function_call
    neutral_messages = _plain_messages(messages)
    if neutral_messages is None:
        neutral_messages = _decoded_messages(messages, functions is not None)
    if functions is not None:
        neutral_tools = tuple(map(_neutral_tool, functions))
    elif tools:
        allowed = _allowed(body, tools)
        neutral_tools = tuple(tool_models) if allowed is tools else tuple(map(_neutral_tool, allowed))
    else:
        neutral_tools = ()
    request = built(
        ModelRequest,
        api="chat",
        model=model,
        messages=neutral_messages,
        tool_choice=_AUTO if tool_choice is None else _neutral_choice(tool_choice),
        tools=neutral_tools,
        response_schema=_neutral_schema(_response_format(body)) if "response_format" in body else None,
        max_output_tokens=limit if limit is not None else legacy_limit,
        n=_integer(body, "n", 1, 128) or 1 if "n" in body else 1,
        stream=stream,
        stream_options=dict(stream_options) if stream_options else {},
        # a legacy answer holds one function call at most
        parallel_tool_calls=(True if parallel is None else parallel) and functions is None,
        reasoning=_neutral_reasoning(chat_reasoning(body, model or "", effort)),
        headers=journal_headers(headers),
        extra={} if _HANDLED.issuperset(body) else {k: v for k, v in body.items() if k not in _HANDLED},
    )
    if functions is None:  # its tools, and its messages if a conversation, are kept ones (`_interned`)
        request.__pydantic_private__["_interned"] = True  # type: ignore[index]
    return request


# The checked wire values as neutral models, built without validating them again (`model.built`): each
# holds what `ModelRequest.model_validate` made of the same dicts (`test_decode_equivalence.py`).


_AUTO = ToolChoice()
_PLAIN_ROLES = frozenset({"system", "developer", "user", "assistant"})


def _plain_messages(messages: list[Any]) -> tuple[Message, ...] | None:
    """The messages, when every one is `{"role": ..., "content": "text"}` without a tool in sight (most
    requests): what `_message` and `_neutral_message` make of them, in one pass. None for any other. A
    conversation's are kept in `_MESSAGES` by their role and text (its next turn sends them again)."""
    out = []
    keep = len(messages) >= CONVERSATION
    for msg in messages:
        if type(msg) is not dict or len(msg) != 2:
            return None
        role, content = msg.get("role"), msg.get("content")
        if type(content) is not str or type(role) is not str or role not in _PLAIN_ROLES:
            return None
        if keep:
            found = _MESSAGES.get((role, content))
            if found is not None:
                out.append(found)
                continue
        if role == "assistant":  # `_message` gives an assistant message its (here empty) tool calls
            made = built(Message, role=role, content=content, tool_calls=())
        else:
            made = built(Message, role=role, content=content)
        if keep:
            _MESSAGES.put((role, content), made, len(content))
        out.append(made)
    return tuple(out)


def _neutral_message(msg: dict[str, Any]) -> Message:
    content = msg["content"]
    fields: dict[str, Any] = {}
    if isinstance(content, list):  # `_content` checked each part
        fields["content"], fields["parts"] = content_parts(content)
    else:
        fields["content"] = "" if content is None else content
    for key in ("role", "name", "tool_call_id"):
        if key in msg:
            fields[key] = msg[key]
    if "tool_calls" in msg:
        fields["tool_calls"] = tuple(built(ToolCall, **call) for call in msg["tool_calls"])
    return built(Message, **fields)


def _neutral_tool(tool: dict[str, Any]) -> Tool:
    return built(Tool, **{k: v for k, v in tool.items() if v is not None})


def _neutral_choice(choice: str | dict[str, Any] | None) -> ToolChoice:
    if choice is None:
        return _AUTO
    if isinstance(choice, str):
        return built(ToolChoice, mode=choice)
    return built(ToolChoice, **choice)


def _neutral_schema(schema: dict[str, Any] | None) -> ResponseSchema | None:
    if schema is None:
        return None
    fields = dict(schema)
    if "schema" in fields:
        fields["schema_"] = fields.pop("schema")
    return built(ResponseSchema, **fields)


def _neutral_reasoning(reasoning: dict[str, Any] | None) -> ReasoningRequest | None:
    return None if reasoning is None else built(ReasoningRequest, **reasoning)
