"""Any JSON schema a request sends is answered or refused, never a 500: a property test over schemas with
the awkward values a fuzz of the server found failing (whole-float and huge counts, bounds at the ends of
the floats, a tiny `multipleOf`, an `enum` beside a `pattern`), sent as a chat `response_format` and as a
tool's parameters, then as a Messages tool's `input_schema`, a Responses `text.format`, Gemini's two
schema fields and Ollama's `format`. An answer to `response_format` (or its like) is a document the schema
accepts, `multipleOf` included, where its numbers stay within 1e300 (past that, jsonschema's own float
division of a huge integer raises).
"""
from __future__ import annotations

import json
import math
from typing import Any

import httpx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from synthgpt import MockGPT
from synthgpt.limits import Limits
from synthgpt.testing import InProcessTransport

NUMBERS = st.sampled_from(
    [0, 1, 3, 3.0, 2.5, -1, -0.0, 7, 0.1, 1e-7, 1e9, 1e15, 1e308, -1e308, 1.7976931348623157e308, 5e-324,
     10**20, 2**63, -(2**64), 10**400]
)  # fmt: skip
COUNTS = st.sampled_from([0, 1, 2, 3.0, 40, 10**15, 1e15, 20_000])
PATTERNS = st.sampled_from(["^[a-z]{3}$", "^\\d{2,40}$", "x*", "(a|b)+", "^[A-Z]{3}$"])
TYPES = st.sampled_from(
    ["string", "integer", "number", "boolean", "null", ["string", "null"], ["integer", "number"]]
)
KEYWORDS = ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minLength",
            "maxLength", "pattern", "enum"]  # fmt: skip


@st.composite
def leaf(draw: st.DrawFn) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": draw(TYPES)}
    for keyword in draw(st.lists(st.sampled_from(KEYWORDS), max_size=3, unique=True)):
        if keyword == "pattern":
            schema[keyword] = draw(PATTERNS)
        elif keyword == "enum":
            schema[keyword] = draw(st.sampled_from([["EUR", "usd"], [1, 2.5], ["ab", "12"], [None, "x"]]))
        elif keyword in ("minLength", "maxLength", "minItems", "maxItems"):
            schema[keyword] = draw(COUNTS)
        else:
            schema[keyword] = draw(NUMBERS)
    return schema



def schemas() -> st.SearchStrategy[dict[str, Any]]:
    def wrap(children: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
        arrays = st.builds(
            lambda items, lo, hi: {"type": ["array", "null"], "items": items, "minItems": lo, "maxItems": hi},
            children, COUNTS, COUNTS,
        )  # fmt: skip
        objects = st.builds(
            lambda props: {"type": "object", "properties": props},
            st.dictionaries(st.sampled_from(["name", "price", "age", "city", "code"]), children, max_size=3),
        )
        return arrays | objects

    return st.recursive(leaf(), wrap, max_leaves=6)


def _in_floats(schema: Any) -> bool:
    """Whether a document drawn for `schema` can be held to it by jsonschema: no number past 1e300, where
    an integer multiple past the floats makes its float division raise."""
    return all(
        not isinstance(v, int | float) or isinstance(v, bool) or abs(v) <= 1e300 for v in _numbers(schema)
    )


def _numbers(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [n for v in value.values() for n in _numbers(v)]
    if isinstance(value, list):
        return [n for v in value for n in _numbers(v)]
    return [value]


MOCK = MockGPT(seed=0, limits=Limits(max_answer_bytes=64 * 1024))


@settings(max_examples=150, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(schemas(), st.integers(0, 10**6))
def test_a_request_schema_is_answered_or_refused_never_a_500(schema: dict[str, Any], n: int) -> None:
    wrapped = {"type": "object", "properties": {"x": schema}, "required": ["x"]}
    chat = {"model": "gpt-4o", "messages": [{"role": "user", "content": f"order {n} for Ada, aged 36"}]}
    with httpx.Client(transport=InProcessTransport(MOCK), base_url="http://synth") as client:
        asked = {"type": "json_schema", "json_schema": {"name": "x", "schema": wrapped}}
        answer = client.post("/v1/chat/completions", json={**chat, "response_format": asked})
        tools = [{"type": "function", "function": {"name": "f", "parameters": wrapped}}]
        called = client.post("/v1/chat/completions", json={**chat, "tools": tools, "tool_choice": "required"})
    for reply in (answer, called):
        assert reply.status_code in (200, 400), (reply.status_code, reply.text)
        if reply.status_code == 400:
            assert reply.json()["error"]["type"] == "invalid_request_error"
    if answer.status_code == 200 and _in_floats(wrapped):
        document = json.loads(answer.json()["choices"][0]["message"]["content"])
        assert all(math.isfinite(v) for v in _numbers(document) if type(v) is float)
        Draft202012Validator(wrapped).validate(document)


@settings(max_examples=100, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(schemas(), st.integers(0, 10**6))
def test_the_messages_and_responses_apis_answer_or_refuse_them_too(schema: dict[str, Any], n: int) -> None:
    # the same generator behind each API's own schema check: a Messages tool's `input_schema`, a
    # Responses `text.format`
    wrapped = {"type": "object", "properties": {"x": schema}, "required": ["x"]}
    messages = {
        "model": "claude-sonnet-4-5",
        "max_tokens": 200,
        "messages": [{"role": "user", "content": f"use it for order {n}"}],
        "tools": [{"name": "f", "input_schema": wrapped}],
        "tool_choice": {"type": "any"},
    }
    text = {"format": {"type": "json_schema", "name": "x", "schema": wrapped}}
    with httpx.Client(transport=InProcessTransport(MOCK), base_url="http://synth") as client:
        called = client.post("/v1/messages", json=messages)
        answer = client.post("/v1/responses", json={"model": "gpt-4o", "input": f"order {n}", "text": text})
    assert called.status_code in (200, 400), (called.status_code, called.text)
    if called.status_code == 400:
        assert called.json()["error"]["type"] == "invalid_request_error"
    assert answer.status_code in (200, 400), (answer.status_code, answer.text)
    if answer.status_code == 200 and _in_floats(wrapped):
        document = json.loads(answer.json()["output"][0]["content"][0]["text"])
        Draft202012Validator(wrapped).validate(document)


def _as_gemini(schema: Any) -> Any:
    """`schema` in Gemini's OpenAPI subset: upper-case types, `["t", "null"]` as `nullable`."""
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "type":
            kinds = value if isinstance(value, list) else [value]
            named = [k for k in kinds if k != "null"]
            out["type"] = (named[0] if named else "null").upper()
            if "null" in kinds and named:
                out["nullable"] = True
        elif key in ("properties",):
            out[key] = {name: _as_gemini(s) for name, s in value.items()}
        elif key == "items":
            out[key] = _as_gemini(value)
        elif key not in ("additionalProperties", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"):
            out[key] = value
    return out


@settings(max_examples=100, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(schemas(), st.integers(0, 10**6))
def test_gemini_and_ollama_answer_or_refuse_them_too(schema: dict[str, Any], n: int) -> None:
    # Gemini's two schema fields (JSON Schema as it is, and its OpenAPI subset translated) and Ollama's
    # `format`: each API's own decoder, then the same generator; each refuses in its own error shape
    wrapped = {"type": "object", "properties": {"x": schema}, "required": ["x"]}
    contents = [{"role": "user", "parts": [{"text": f"order {n} for Ada"}]}]
    as_json = {"responseMimeType": "application/json", "responseJsonSchema": wrapped}
    as_openapi = {"responseMimeType": "application/json", "responseSchema": _as_gemini(wrapped)}
    ollama = {"model": "llama3.2", "stream": False, "format": wrapped,
              "messages": [{"role": "user", "content": f"order {n}"}]}  # fmt: skip
    with httpx.Client(transport=InProcessTransport(MOCK), base_url="http://synth") as client:
        gemini = [
            client.post("/v1beta/models/gemini-2.5-flash:generateContent",
                        json={"contents": contents, "generationConfig": config})
            for config in (as_json, as_openapi)
        ]  # fmt: skip
        llama = client.post("/api/chat", json=ollama)
    for reply in gemini:
        assert reply.status_code in (200, 400), (reply.status_code, reply.text)
        if reply.status_code == 400:
            assert reply.json()["error"]["status"] == "INVALID_ARGUMENT"
    assert llama.status_code in (200, 400), (llama.status_code, llama.text)
    if llama.status_code == 400:
        assert isinstance(llama.json()["error"], str)
    if gemini[0].status_code == 200 and _in_floats(wrapped):
        text = gemini[0].json()["candidates"][0]["content"]["parts"][0]["text"]
        Draft202012Validator(wrapped).validate(json.loads(text))
    if llama.status_code == 200 and _in_floats(wrapped):
        Draft202012Validator(wrapped).validate(json.loads(llama.json()["message"]["content"]))
