"""The one-codec-path property, per API: folding the stream as a client does gives the non-stream body.

Each fold below is written from the wire rules (WIRE.md §2.3, §3.3, §4.4; for Gemini, Ollama and Cohere the
providers' stream references), independently of the codecs,
and applied to arbitrary answers: any mix of reasoning, text and tool calls, any finish reason, any chunk
size, any text (combining marks, emoji, astral code points).
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from synthgpt.codec.anthropic.encode import MessagesCodec
from synthgpt.codec.bedrock.encode import BedrockCodec
from synthgpt.codec.cohere.encode import CohereCodec
from synthgpt.codec.gemini.encode import GeminiCodec
from synthgpt.codec.ollama.encode import OllamaCodec
from synthgpt.codec.openai_chat.encode import ChatCodec, body_message, choice_deltas, fold_deltas
from synthgpt.codec.openai_responses.encode import ResponsesCodec, _as_messages
from synthgpt.codec.openai_responses.events import response_body, response_events
from synthgpt.jsonutil import dumps, dumps_bytes
from synthgpt.model import (
    Choice,
    Fault,
    Message,
    ModelOutput,
    ModelRequest,
    ReasoningPart,
    StreamPlan,
    TextOut,
    ToolCall,
    ToolCallPart,
    Usage,
)

texts = st.text(max_size=30)
json_objects = st.dictionaries(
    st.text(max_size=6), st.one_of(st.integers(), st.text(max_size=8), st.booleans(), st.none()), max_size=3
).map(lambda d: json.dumps(d, ensure_ascii=False, separators=(",", ":")))
tool_calls = st.builds(
    ToolCallPart,
    id=st.text("abcdefXYZ0123", min_size=1, max_size=8).map(lambda s: "call_" + s),
    name=st.sampled_from(["get_weather", "lookup", "search"]),
    arguments=json_objects,
)


@st.composite
def outputs(draw: st.DrawFn) -> ModelOutput:
    parts: list[Any] = []
    if draw(st.booleans()):
        parts.append(ReasoningPart(text=draw(texts), signature=draw(st.text("abcXYZ09", max_size=12))))
    parts.extend(TextOut(text=t) for t in draw(st.lists(texts, max_size=2)))
    parts.extend(draw(st.lists(tool_calls, max_size=3)))
    finish = draw(st.sampled_from(["stop", "length", "tool_calls", "content_filter"]))
    prompt, completion = draw(st.integers(0, 500)), draw(st.integers(0, 500))
    faults = (Fault(kind="unknown_item", after=draw(st.integers(0, 40))),) if draw(st.booleans()) else ()
    return ModelOutput(
        choices=(Choice(parts=tuple(parts), finish_reason=finish),),
        usage=Usage(prompt_tokens=prompt, completion_tokens=completion, reasoning_tokens=min(completion, 3)),
        stream=StreamPlan(chunk_chars=draw(st.integers(1, 12)), faults=faults),
        model=draw(st.sampled_from(["gpt-4o", "claude-sonnet-4-5"])),
        id_seed=draw(st.integers(0, 2**64 - 1)),
        created=1_767_225_600,
    )


# ------------------------------------------------------------------------------------------------- folds


def fold_responses(events: list[dict[str, Any]]) -> dict[str, Any]:
    assert events[0]["type"] == "response.created" and events[0]["response"]["output"] == []
    output: list[dict[str, Any]] = []
    done: set[int] = set()
    for i, e in enumerate(events):
        assert e["sequence_number"] == i
        kind = e["type"]
        if kind == "response.output_item.added":
            assert e["output_index"] == len(output)
            output.append(copy.deepcopy(e["item"]))
        elif kind == "response.content_part.added":
            output[e["output_index"]]["content"].append(copy.deepcopy(e["part"]))
        elif kind == "response.output_text.delta":
            output[e["output_index"]]["content"][e["content_index"]]["text"] += e["delta"]
        elif kind == "response.function_call_arguments.delta":
            output[e["output_index"]]["arguments"] += e["delta"]
        elif kind == "response.reasoning_summary_part.added":
            output[e["output_index"]]["summary"].append(copy.deepcopy(e["part"]))
        elif kind == "response.reasoning_summary_text.delta":
            output[e["output_index"]]["summary"][e["summary_index"]]["text"] += e["delta"]
        elif kind == "response.output_item.done":
            built = output[e["output_index"]]
            assert {**built, "status": e["item"].get("status")} == {**e["item"]} or built == e["item"]
            output[e["output_index"]] = e["item"]
            done.add(e["output_index"])
    terminal = events[-1]
    assert terminal["type"] in ("response.completed", "response.incomplete")
    lifecycle_ids = {e["response"]["id"] for e in events if "response" in e}
    assert len(lifecycle_ids) == 1  # the helpers refuse a response whose id changes
    assert done == set(range(len(output)))
    assert terminal["response"]["output"] == output
    return dict(terminal["response"])


def fold_anthropic(events: list[dict[str, Any]]) -> dict[str, Any]:
    assert events[0]["type"] == "message_start"
    message = copy.deepcopy(events[0]["message"])
    partial: dict[int, str] = {}
    for e in events[1:]:
        kind = e["type"]
        if kind == "content_block_start":
            assert e["index"] == len(message["content"])
            message["content"].append(copy.deepcopy(e["content_block"]))
        elif kind == "content_block_delta":
            block, delta = message["content"][e["index"]], e["delta"]
            if delta["type"] == "text_delta":
                block["text"] += delta["text"]
            elif delta["type"] == "thinking_delta":
                block["thinking"] += delta["thinking"]
            elif delta["type"] == "signature_delta":
                block["signature"] = delta["signature"]
            else:
                partial[e["index"]] = partial.get(e["index"], "") + delta["partial_json"]
        elif kind == "content_block_stop":
            block = message["content"][e["index"]]
            if block["type"] == "tool_use":
                block["input"] = json.loads(partial.get(e["index"]) or "{}")
        elif kind == "message_delta":
            message.update(e["delta"])
            message["usage"].update(e["usage"])
    assert events[-1] == {"type": "message_stop"}
    return message


def fold_chat(chunks: list[dict[str, Any]]) -> dict[str, Any]:
    choice: dict[str, Any] = {"index": 0, "message": {}, "logprobs": None, "finish_reason": None}
    calls: list[dict[str, Any]] = []
    content: str | None = None
    usage = None
    for c in chunks:
        usage = c.get("usage", usage)
        for ch in c["choices"]:
            delta = ch["delta"]
            if delta.get("content") is not None:
                content = (content or "") + delta["content"]
            for tc in delta.get("tool_calls", ()):
                if tc["index"] == len(calls):
                    calls.append(
                        {
                            "id": tc["id"],
                            "type": tc["type"],
                            "function": {"name": tc["function"]["name"], "arguments": ""},
                        }
                    )
                calls[tc["index"]]["function"]["arguments"] += tc["function"].get("arguments", "")
            choice["finish_reason"] = ch["finish_reason"] or choice["finish_reason"]
    message: dict[str, Any] = {"role": "assistant", "content": content, "refusal": None, "annotations": []}
    if calls:
        message["tool_calls"] = calls
    choice["message"] = message
    first = chunks[0]
    return {
        "id": first["id"],
        "object": "chat.completion",
        "created": first["created"],
        "model": first["model"],
        "choices": [choice],
        "usage": usage,
        "service_tier": first["service_tier"],
        "system_fingerprint": first["system_fingerprint"],
    }


def fold_gemini(chunks: list[dict[str, Any]]) -> dict[str, Any]:
    """Candidates by `index`; a text part joins the previous one when both are text of the same kind
    (thought or answer); `finishReason` and `usageMetadata` are the last seen."""
    candidates: dict[int, dict[str, Any]] = {}
    body: dict[str, Any] = {}
    for chunk in chunks:
        for c in chunk["candidates"]:
            built = candidates.setdefault(c["index"], {"content": {"parts": [], "role": "model"}})
            parts = built["content"]["parts"]
            for p in c["content"]["parts"]:
                last = parts[-1] if parts else None
                if (last is not None and set(p) <= {"text", "thought"} and set(last) <= {"text", "thought"}
                        and last.get("thought") == p.get("thought")):  # fmt: skip
                    last["text"] += p["text"]
                else:
                    parts.append(copy.deepcopy(p))
            if "finishReason" in c:
                built["finishReason"] = c["finishReason"]
            built["index"] = c["index"]
        body.update({k: v for k, v in chunk.items() if k != "candidates"})
    return {"candidates": [candidates[i] for i in sorted(candidates)], **body}


def fold_ollama(lines: list[dict[str, Any]], key: str) -> dict[str, Any]:
    """Text (`message.content`, or `response` for generate) and `thinking` joined, tool calls gathered,
    everything else from the last line, which alone says `done: true`."""
    assert [line["done"] for line in lines] == [False] * (len(lines) - 1) + [True]
    text, thinking, calls = "", None, []
    for line in lines:
        part = line["message"] if key == "message" else line
        text += part["content" if key == "message" else "response"]
        if part.get("thinking") is not None:
            thinking = (thinking or "") + part["thinking"]
        calls.extend(part.get("tool_calls", ()))
    folded = copy.deepcopy(lines[-1])
    inner = folded["message"] if key == "message" else folded
    inner["content" if key == "message" else "response"] = text
    if thinking is not None:
        inner["thinking"] = thinking
    if calls:
        inner["tool_calls"] = calls
    return folded


def fold_cohere(events: list[dict[str, Any]]) -> dict[str, Any]:
    """Content items and tool calls built from their start events and deltas, the tool plan joined, the
    finish reason and usage from `message-end`."""
    assert events[0]["type"] == "message-start" and events[-1]["type"] == "message-end"
    message = copy.deepcopy(events[0]["delta"]["message"])
    for e in events[1:-1]:
        kind, inner = e["type"], e.get("delta", {}).get("message", {})
        if kind == "content-start":
            assert e["index"] == len(message.setdefault("content", []))
            message["content"].append(copy.deepcopy(inner["content"]))
        elif kind == "content-delta":
            item = message["content"][e["index"]]
            for key, piece in inner["content"].items():
                item[key] += piece
        elif kind == "tool-plan-delta":
            message["tool_plan"] = message.get("tool_plan", "") + inner["tool_plan"]
        elif kind == "tool-call-start":
            assert e["index"] == len(message.setdefault("tool_calls", []))
            message["tool_calls"].append(copy.deepcopy(inner["tool_calls"]))
        elif kind == "tool-call-delta":
            message["tool_calls"][e["index"]]["function"]["arguments"] += inner["tool_calls"]["function"][
                "arguments"
            ]
    if "tool_calls" in message:
        message.setdefault("tool_plan", "")
    end = events[-1]["delta"]
    return {
        "id": events[0]["id"],
        "message": message,
        "finish_reason": end["finish_reason"],
        "usage": end["usage"],
    }


def fold_bedrock(events: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """Blocks by `contentBlockIndex`: a tool use from its start event, every delta appended (a tool's input
    as JSON text, parsed at the block's stop); the stop reason from `messageStop`, usage from `metadata`."""
    assert events[0] == ("messageStart", {"role": "assistant"})
    blocks: list[dict[str, Any]] = []
    inputs: dict[int, str] = {}
    for name, e in events[1:-2]:
        i = e["contentBlockIndex"]
        if name == "contentBlockStart":
            assert i == len(blocks)
            blocks.append({"toolUse": dict(e["start"]["toolUse"])})
        elif name == "contentBlockDelta":
            delta = e["delta"]
            if i == len(blocks):
                empty = {"reasoningContent": {"reasoningText": {"text": ""}}}
                blocks.append(empty if "reasoningContent" in delta else {"text": ""})
            if "text" in delta:
                blocks[i]["text"] += delta["text"]
            elif "toolUse" in delta:
                inputs[i] = inputs.get(i, "") + delta["toolUse"]["input"]
            elif "text" in delta["reasoningContent"]:
                blocks[i]["reasoningContent"]["reasoningText"]["text"] += delta["reasoningContent"]["text"]
            else:
                blocks[i]["reasoningContent"]["reasoningText"]["signature"] = delta["reasoningContent"][
                    "signature"
                ]
        else:
            assert name == "contentBlockStop" and i == len(blocks) - 1
            if "toolUse" in blocks[i]:
                blocks[i]["toolUse"]["input"] = json.loads(inputs.get(i) or "{}")
    (stop, end), (meta, metadata) = events[-2:]
    assert (stop, meta) == ("messageStop", "metadata")
    return {"output": {"message": {"role": "assistant", "content": blocks}}, **end, **metadata}


# ---------------------------------------------------------------------------------------------- property


@settings(max_examples=100, deadline=None)
@given(outputs())
def test_responses_stream_folds_to_the_body(out: ModelOutput) -> None:
    codec = ResponsesCodec()
    req = ModelRequest(api="responses", model=out.model, reasoning={"summary": "auto"}, stream=True)
    events = [json.loads(f.data) for f in codec.frames(out, req)]
    assert fold_responses(events) == codec.body(out, req)


@settings(max_examples=100, deadline=None)
@given(outputs(), st.sampled_from([None, "auto"]), st.booleans())
def test_responses_body_is_the_terminal_events_response(
    out: ModelOutput, summary: str | None, logprobs: bool
) -> None:
    # the body is built without the events (`response_body`): the same bytes as the terminal event's response
    include = ["message.output_text.logprobs", "reasoning.encrypted_content"] if logprobs else []
    req = ModelRequest(
        api="responses", model=out.model, reasoning={"summary": summary}, extra={"include": include}
    )
    terminal = response_events(out, req)[-1]["response"]
    assert dumps(response_body(out, req)) == dumps(terminal)


@settings(max_examples=100, deadline=None)
@given(outputs(), st.sampled_from([None, "auto"]), st.sampled_from([{}, {"user": "u-1", "store": False}]))
def test_responses_in_progress_shell_is_the_response_object_in_progress(
    out: ModelOutput, summary: str | None, extra: dict[str, Any]
) -> None:
    # the shell is made from the finished response (`events._in_progress`): the same text as building it
    from synthgpt.codec.openai_responses.events import response_object

    tools = [{"name": "f", "parameters": {"type": "object"}}] if extra else []
    req = ModelRequest(
        api="responses", model=out.model, reasoning={"summary": summary}, extra=extra, tools=tools
    )
    created = response_events(out, req)[0]
    assert created["type"] == "response.created"
    assert dumps(created["response"]) == dumps(response_object(out, req, "in_progress", []))


@settings(max_examples=100, deadline=None)
@given(outputs())
def test_anthropic_stream_folds_to_the_body(out: ModelOutput) -> None:
    codec = MessagesCodec()
    req = ModelRequest(api="messages", model=out.model, max_output_tokens=100, stream=True)
    events = [json.loads(f.data) for f in codec.frames(out, req)]
    assert fold_anthropic([e for e in events if e["type"] != "ping"]) == codec.body(out, req)


@settings(max_examples=100, deadline=None)
@given(outputs())
def test_chat_stream_folds_to_the_body(out: ModelOutput) -> None:
    codec = ChatCodec()
    req = ModelRequest(api="chat", model=out.model, stream=True, stream_options={"include_usage": True})
    frames = codec.frames(out, req)
    assert frames[-1].data == "[DONE]"
    assert fold_chat([json.loads(f.data) for f in frames[:-1]]) == codec.body(out, req)


@settings(max_examples=100, deadline=None)
@given(outputs(), st.integers(1, 3))
def test_gemini_stream_folds_to_the_body(out: ModelOutput, n: int) -> None:
    codec = GeminiCodec(stream=True)
    out = out.model_copy(update={"choices": out.choices * n})
    req = ModelRequest(api="gemini", model=out.model, stream=True, stream_options={"alt": "sse"})
    chunks = [json.loads(f.data) for f in codec.frames(out, req)]
    assert "usageMetadata" in chunks[-1] and not any("usageMetadata" in c for c in chunks[:-1])
    assert fold_gemini(chunks) == codec.body(out, req)


@settings(max_examples=100, deadline=None)
@given(outputs(), st.booleans())
def test_ollama_stream_folds_to_the_body(out: ModelOutput, generate: bool) -> None:
    codec = OllamaCodec(generate=generate)
    req = ModelRequest(api="ollama", model=out.model, stream=True)
    lines = [json.loads(f.data) for f in codec.frames(out, req)]
    assert fold_ollama(lines, "response" if generate else "message") == codec.body(out, req)


@settings(max_examples=100, deadline=None)
@given(outputs())
def test_cohere_stream_folds_to_the_body(out: ModelOutput) -> None:
    codec = CohereCodec()
    req = ModelRequest(api="cohere", model=out.model, stream=True)
    frames = codec.frames(out, req)
    assert [f.event for f in frames] == [json.loads(f.data)["type"] for f in frames]
    assert fold_cohere([json.loads(f.data) for f in frames]) == codec.body(out, req)


@settings(max_examples=100, deadline=None)
@given(outputs())
def test_bedrock_stream_folds_to_the_body(out: ModelOutput) -> None:
    codec = BedrockCodec(stream=True)
    req = ModelRequest(api="bedrock", model=out.model, stream=True)
    events = [(f.event or "", json.loads(f.data)) for f in codec.frames(out, req)]
    assert fold_bedrock(events) == codec.body(out, req)


def _none_count(value: Any) -> int:
    if value is None:
        return 1
    if isinstance(value, dict):
        return sum(_none_count(v) for v in value.values())
    if isinstance(value, list):
        return sum(_none_count(v) for v in value)
    return 0


@settings(max_examples=100, deadline=None)
@given(outputs(), st.booleans())
def test_body_nulls_never_counts_more_than_the_body_holds(out: ModelOutput, logprobs: bool) -> None:
    # more would let a NaN pass for a None (`jsonutil.dumps_bytes`); the same bytes either way
    asked = {"logprobs": logprobs, "top_logprobs": 2}
    for codec, req in [
        (ChatCodec(), ModelRequest(api="chat", model=out.model, extra=asked)),
        (ResponsesCodec(), ModelRequest(api="responses", model=out.model, reasoning={"summary": "auto"})),
        (MessagesCodec(), ModelRequest(api="messages", model=out.model, max_output_tokens=100)),
    ]:
        body = codec.body(out, req)
        nulls = codec.body_nulls(body)
        assert 0 < nulls <= _none_count(body)
        assert dumps_bytes(body, nulls=nulls) == dumps(body).encode()


_WEATHER_SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
_COUNTED_BODIES: list[tuple[Any, dict[str, Any]]] = [
    (ChatCodec(), {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}], "n": 2,
                   "logprobs": True, "top_logprobs": 1}),
    (ChatCodec(), {"model": "gpt-4o", "messages": [{"role": "user", "content": "weather in Paris?"}],
                   "tools": [{"type": "function", "function": {"name": "get_weather",
                                                               "parameters": _WEATHER_SCHEMA}}]}),
    (ResponsesCodec(), {"model": "gpt-4o", "input": "hi", "include": ["message.output_text.logprobs"]}),
    (ResponsesCodec(), {"model": "gpt-4o", "input": "weather in Paris?",
                        "tools": [{"type": "function", "name": "get_weather",
                                   "parameters": _WEATHER_SCHEMA}]}),
    (ResponsesCodec(), {"model": "o3", "input": "hi", "reasoning": {"effort": "high", "summary": "auto"}}),
    (MessagesCodec(), {"model": "claude-sonnet-4-5", "max_tokens": 100,
                       "messages": [{"role": "user", "content": "weather in Paris?"}],
                       "tools": [{"name": "get_weather", "input_schema": _WEATHER_SCHEMA}]}),
]  # fmt: skip


@pytest.mark.parametrize(("codec", "sent"), _COUNTED_BODIES)
def test_body_nulls_counts_every_null_of_the_common_bodies(codec: Any, sent: dict[str, Any]) -> None:
    """A count short of the body's nulls costs every such answer a read-back of its whole text: the chat
    logprobs' `refusal` and a Responses tool's `description` were left out."""
    from synthgpt import MockGPT

    req = codec.decode(sent, {"anthropic-version": "2023-06-01"}, {})
    body = codec.body(MockGPT(seed=1).generate(req), req)
    assert codec.body_nulls(body) == _none_count(body) > 0


@settings(max_examples=100, deadline=None)
@given(outputs())
def test_the_history_a_response_leaves_is_what_validation_makes(out: ModelOutput) -> None:
    # `_as_messages` builds the Messages without validating them: the same requests later, field for field
    kept = _as_messages(out)
    calls = [ToolCall(id=p.id, name=p.name, arguments=p.arguments) for p in out.tool_calls]
    validated = (Message(role="assistant", content=out.text, tool_calls=calls),) if out.text or calls else ()
    assert kept == validated
    assert [m.model_fields_set for m in kept] == [m.model_fields_set for m in validated]
    assert [type(m.tool_calls) for m in kept] == [type(m.tool_calls) for m in validated]
    for a, b in zip(kept, validated, strict=True):
        assert [c.model_fields_set for c in a.tool_calls] == [c.model_fields_set for c in b.tool_calls]


@settings(max_examples=200, deadline=None)
@given(outputs(), st.booleans(), st.booleans())
def test_the_chat_body_message_is_the_fold_of_its_deltas(out: ModelOutput, legacy: bool, shown: bool) -> None:
    # a text-only choice's message is written directly (`body_message`): what folding its deltas gives
    text_only = Choice(parts=tuple(p for p in out.choices[0].parts if isinstance(p, TextOut)))
    for choice in (*out.choices, text_only):
        folded = fold_deltas(choice_deltas(choice, None, legacy=legacy, reasoning=shown))
        assert dumps(body_message(choice, legacy, shown)) == dumps(folded)
