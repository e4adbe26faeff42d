"""Gemini wire-level tests: request decoding (both spellings of every field, Gemini schemas), the body and
stream chunks validated against google-genai's pydantic types (unknown fields forbidden), the JSON-array
stream framing, and faults on it."""

from __future__ import annotations

import json
from typing import Any

import pytest
from google.genai import types

from synthgpt.codec.gemini.encode import GeminiCodec
from synthgpt.codec.gemini.request import decode_gemini_request, gemini_schema_to_json_schema
from synthgpt.codec.sse import plan_wire
from synthgpt.errors import RequestError
from synthgpt.model import (
    Choice,
    Fault,
    ModelOutput,
    ModelRequest,
    ReasoningPart,
    StreamPlan,
    TextOut,
    ToolCallPart,
    Usage,
)

CODEC = GeminiCodec(stream=True)
OUTPUT = ModelOutput(
    choices=(Choice(parts=(ReasoningPart(text="Think."), TextOut(text="Hello!"),
                           ToolCallPart(id="c1", name="get_weather", arguments='{"city":"Paris"}'))),),
    usage=Usage(prompt_tokens=10, completion_tokens=7, reasoning_tokens=2),
    stream=StreamPlan(chunk_chars=3),
    model="gemini-2.5-flash",
    id_seed=42,
)  # fmt: skip


def decode(body: dict[str, Any], **params: str) -> ModelRequest:
    return CODEC.decode(body, {"x-goog-api-key": "secret"}, {"model": "gemini-2.5-flash", **params})


def test_body_is_a_valid_generate_content_response() -> None:
    req = decode({"contents": [{"parts": [{"text": "hi"}]}]})
    body = CODEC.body(OUTPUT, req)
    types.GenerateContentResponse.model_validate(body)
    assert body == {
        "candidates": [{
            "content": {"role": "model", "parts": [
                {"text": "Think.", "thought": True},
                {"text": "Hello!"},
                {"functionCall": {"name": "get_weather", "args": {"city": "Paris"}},
                 "thoughtSignature": body["candidates"][0]["content"]["parts"][2]["thoughtSignature"]},
            ]},
            "finishReason": "STOP",
            "index": 0,
        }],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 17,
                          "thoughtsTokenCount": 2,
                          "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 10}]},
        "modelVersion": "gemini-2.5-flash",
        "responseId": body["responseId"],
    }  # fmt: skip
    assert len(body["responseId"]) == 22


def test_chunks_are_valid_and_split_text_only() -> None:
    req = decode({"contents": [{"parts": [{"text": "hi"}]}]}, alt="sse")
    chunks = CODEC.chunks(OUTPUT, req)
    for c in chunks:
        types.GenerateContentResponse.model_validate(c)
    assert [c["candidates"][0]["content"]["parts"][0].get("text") for c in chunks] == [
        "Thi",
        "nk.",
        "Hel",
        "lo!",
        None,
    ]
    assert [c["candidates"][0].get("finishReason") for c in chunks] == [None] * 4 + ["STOP"]


def test_sse_framing() -> None:
    req = decode({"contents": [{"parts": [{"text": "hi"}]}]}, alt="sse")
    data = plan_wire(CODEC.frames(OUTPUT, req), OUTPUT.stream, CODEC, OUTPUT, req).data
    events = data.split(b"\n\n")
    assert events[-1] == b"" and all(e.startswith(b"data: {") for e in events[:-1]) and len(events) == 6
    assert CODEC.framing(req).media_type == "text/event-stream"


def test_json_array_framing_parses_as_one_array() -> None:
    req = decode({"contents": [{"parts": [{"text": "hi"}]}]})
    assert CODEC.framing(req).media_type == "application/json"
    data = plan_wire(CODEC.frames(OUTPUT, req), OUTPUT.stream, CODEC, OUTPUT, req).data
    assert data.startswith(b'[{"candidates"') and data.endswith(b"}]") and data.count(b",\r\n{") == 4
    assert json.loads(data) == CODEC.chunks(OUTPUT, req)


@pytest.mark.parametrize(
    ("fault", "closed"),
    [(Fault(kind="truncate", after=2), False), (Fault(kind="stream_error", after=2), True)],
)
def test_faults_on_the_json_array(fault: Fault, closed: bool) -> None:
    req = decode({"contents": [{"parts": [{"text": "hi"}]}]})
    out = OUTPUT.model_copy(update={"stream": StreamPlan(chunk_chars=3, faults=(fault,))})
    data = plan_wire(CODEC.frames(out, req), out.stream, CODEC, out, req).data
    if not closed:
        with pytest.raises(ValueError):
            json.loads(data)
        assert data.count(b'{"candidates"') == 2
        return
    items = json.loads(data)
    assert len(items) == 3
    assert items[-1] == {
        "error": {"code": 500, "status": "INTERNAL", "message": items[-1]["error"]["message"]}
    }


def test_keepalives_are_not_sent_where_the_format_has_none() -> None:
    req = decode({"contents": [{"parts": [{"text": "hi"}]}]}, alt="sse")
    out = OUTPUT.model_copy(update={"stream": StreamPlan(chunk_chars=3, keepalive_every=1)})
    data = plan_wire(CODEC.frames(out, req), out.stream, CODEC, out, req).data
    assert b": ping" not in data


def test_both_spellings_decode_alike() -> None:
    camel = {
        "contents": [{"role": "user", "parts": [{"text": "hi"}]}],
        "systemInstruction": {"parts": [{"text": "Be brief."}]},
        "generationConfig": {
            "maxOutputTokens": 50,
            "stopSequences": ["END"],
            "candidateCount": 2,
            "thinkingConfig": {"includeThoughts": True, "thinkingBudget": 64},
        },
    }
    snake = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}],
             "system_instruction": {"parts": [{"text": "Be brief."}]},
             "generation_config": {"max_output_tokens": 50, "stop_sequences": ["END"], "candidate_count": 2,
                                   "thinking_config": {"include_thoughts": True,
                                                       "thinking_budget": 64}}}  # fmt: skip
    a, b = decode(camel), decode(snake)
    assert a == b and a.fingerprint() == b.fingerprint()
    assert (a.system, a.max_output_tokens, a.n, a.stop_sequences) == ("Be brief.", 50, 2, ("END",))
    assert a.reasoning is not None and a.reasoning.budget_tokens == 64
    assert a.header("x-goog-api-key") is None  # credentials are not recorded


def test_gemini_schema_becomes_json_schema() -> None:
    schema = {"type": "OBJECT", "property_ordering": ["b", "a"], "required": ["a"],
              "properties": {"a": {"type": "STRING", "nullable": True, "enum": ["x", "y"]},
                             "b": {"type": "ARRAY", "items": {"type": "INTEGER"}, "min_items": 1},
                             "c": {"any_of": [{"type": "NUMBER"}, {"type": "BOOLEAN"}]}}}  # fmt: skip
    assert json.dumps(gemini_schema_to_json_schema(schema, "s")) == json.dumps(
        {"type": "object", "required": ["a"],
         "properties": {"b": {"type": "array", "minItems": 1, "items": {"type": "integer"}},
                        "a": {"type": ["string", "null"], "enum": ["x", "y"]},
                        "c": {"anyOf": [{"type": "number"}, {"type": "boolean"}]}}}
    )  # fmt: skip


def test_property_ordering_orders_the_properties_it_names_then_the_rest_as_given() -> None:
    props = {n: {"type": "STRING"} for n in ("a", "b", "c", "d", "e")}
    schema = {"type": "OBJECT", "properties": props, "propertyOrdering": ["d", "zz", "b", "d", "b"]}
    assert list(gemini_schema_to_json_schema(schema, "s")["properties"]) == ["d", "b", "a", "c", "e"]
    unordered = gemini_schema_to_json_schema({**schema, "propertyOrdering": []}, "s")
    assert list(unordered["properties"]) == ["a", "b", "c", "d", "e"]


def test_function_turns_become_tool_calls_and_results() -> None:
    req = decode({"contents": [
        {"role": "user", "parts": [{"text": "Weather?"}]},
        {"role": "model", "parts": [{"functionCall": {"name": "get_weather", "args": {"city": "Oslo"}}}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "get_weather", "response": {"t": 3}}}]},
    ], "tools": [{"functionDeclarations": [{"name": "get_weather", "parameters": {
        "type": "OBJECT", "properties": {"city": {"type": "STRING"}}}}]}],
        "toolConfig": {"functionCallingConfig": {"mode": "NONE"}}})  # fmt: skip
    assert [m.role for m in req.messages] == ["user", "assistant", "tool"]
    assert req.messages[1].tool_calls[0].parsed_arguments() == {"city": "Oslo"}
    assert req.tool_result_name(req.messages[2]) == "get_weather" and req.ends_with_tool_result
    assert req.tools[0].parameters == {"type": "object", "properties": {"city": {"type": "string"}}}
    assert req.tool_choice.mode == "none"


@pytest.mark.parametrize(
    ("body", "message", "param"),
    [
        ({}, "contents is not specified", "contents"),
        ({"contents": [{"role": "bot", "parts": []}]}, "valid role", "contents[0].role"),
        ({"contents": [{"parts": [{"text": "x"}]}],
          "generationConfig": {"responseSchema": {"type": "STRING"}}},
         "response_mime_type", "generationConfig.responseMimeType"),
        ({"contents": [{"parts": [{"text": "x"}]}], "tools": [{"googleSearch": {}}]},
         "not simulated", "tools[0].googleSearch"),
        ({"contents": [{"parts": [{"text": "x"}]}], "generationConfig": {"candidateCount": 9}},
         "candidate_count", "generationConfig.candidateCount"),
    ],
)  # fmt: skip
def test_bad_requests_name_the_field(body: dict[str, Any], message: str, param: str) -> None:
    with pytest.raises(RequestError) as caught:
        decode_gemini_request(body, "m")
    assert message in caught.value.message and caught.value.param == param


def test_error_body_shape() -> None:
    from synthgpt.model import ErrorSpec

    assert CODEC.error_body(ErrorSpec(status=404), 404) == {
        "error": {"code": 404, "message": "Requested entity was not found.", "status": "NOT_FOUND"}
    }
    assert CODEC.error_body(ErrorSpec(status=500, message="boom"), 500)["error"]["status"] == "INTERNAL"


ORDERING = "s.propertyOrdering"


@pytest.mark.parametrize(
    ("ordering", "message", "param"),
    [
        (5, f"Invalid value at '{ORDERING}': expected an array, got an integer.", ORDERING),
        ("ab", f"Invalid value at '{ORDERING}': expected an array, got a string.", ORDERING),
        (["a", {}], f"Invalid value at '{ORDERING}[1]': expected a string, got an object.", f"{ORDERING}[1]"),
        ([True], f"Invalid value at '{ORDERING}[0]': expected a string, got a boolean.", f"{ORDERING}[0]"),
    ],
)
def test_a_property_ordering_that_is_no_array_of_names_is_refused(
    ordering: Any, message: str, param: str
) -> None:
    """It was a 500 (a number, or an object among the names) or read as the names a string contains."""
    schema = {"type": "OBJECT", "properties": {"a": {"type": "STRING"}}, "propertyOrdering": ordering}
    with pytest.raises(RequestError) as info:
        gemini_schema_to_json_schema(schema, "s")
    assert (info.value.message, info.value.param, info.value.code) == (message, param, "INVALID_ARGUMENT")
