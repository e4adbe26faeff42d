"""`ModelRequest.from_dict` is the engine's public input (and `explain`'s `neutral` form, and what some
codecs hand on as it came): whatever it is given, it returns a request or raises its RequestError naming
a field, never another exception (a tool's `function` as a string raised AttributeError)."""

from __future__ import annotations

import contextlib
import copy
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from synthgpt.errors import RequestError
from synthgpt.model import ModelRequest
from tests.fuzz._support import fuzz, json_values, nasty, texts
from tests.fuzz.test_http_fuzz import paths, replace

FULL: dict[str, Any] = {
    "api": "chat",
    "model": "gpt-4o",
    "messages": [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": [
            {"type": "text", "text": "Weather?"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,AA=="}},
        ]},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
    ],
    "tools": [{"type": "function", "function": {"name": "get_weather", "description": "d",
                                                "parameters": {"type": "object", "properties": {}}}}],
    "tool_choice": {"type": "function", "function": {"name": "get_weather"}},
    "response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": {"type": "object"}}},
    "max_tokens": 60,
    "n": 1,
    "stream": True,
    "stream_options": {"include_usage": True},
    "stop": ["END"],
    "headers": {"x-a": "b"},
    "extra": {"store": False},
}  # fmt: skip


@st.composite
def mutated(draw: st.DrawFn) -> Any:
    body: Any = copy.deepcopy(FULL)
    for _ in range(draw(st.integers(1, 3))):
        spots = [p for p in paths(body) if p]
        if not spots:
            break
        body = replace(
            body, draw(st.sampled_from(spots)), draw(nasty), delete=draw(st.integers(0, 4)) == 0, shallow=True
        )
    if draw(st.integers(0, 5)) == 0:
        body[draw(texts)] = draw(json_values)
    return body


@fuzz(400)
@given(body=mutated())
def test_from_dict_returns_a_request_or_raises_its_request_error(body: Any) -> None:
    with contextlib.suppress(RequestError):
        ModelRequest.from_dict(body)


@fuzz(100)
@given(body=json_values)
def test_any_json_value_too(body: Any) -> None:
    with contextlib.suppress(RequestError):
        ModelRequest.from_dict(body)


def test_a_request_nested_past_the_recursion_limit_is_its_request_error() -> None:
    # (found by this file's hunt at SYNTHGPT_FUZZ_SCALE=50: a RecursionError out of the defensive copy)
    deep: Any = "x"
    for _ in range(5_000):
        deep = [deep]
    try:
        ModelRequest.from_dict({"model": "m", "messages": [], "extra": {"deep": deep}})
    except RequestError as exc:
        assert exc.message == "The request nests arrays and objects too deeply to read."
    else:
        raise AssertionError("read")
