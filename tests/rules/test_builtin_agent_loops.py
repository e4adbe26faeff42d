"""The built-in rules in the loops frameworks drive: forced tool choices make progress, tools come before
structured output, documents take what the conversation says, schemas given in the prompt are answered."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest

from synthgpt import MockGPT
from synthgpt.generators import fixed_clock
from synthgpt.generators.tool_pick import is_final_answer_tool
from synthgpt.model import Tool

_NAME_ARG = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
PERSON = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "age": {"type": "integer"}, "city": {"type": "string"}},
    "required": ["name", "age", "city"],
    "additionalProperties": False,
}
TOOLS = [
    {
        "type": "function",
        "function": {"name": "lookup_age", "description": "How old a person is.", "parameters": _NAME_ARG},
    },
    {
        "type": "function",
        "function": {"name": "home_city", "description": "Where a person lives.", "parameters": _NAME_ARG},
    },
    {
        "type": "function",
        "function": {
            "name": "final_result",
            "description": "The final response which ends this conversation",
            "parameters": PERSON,
        },
    },
]


def _mock() -> MockGPT:
    return MockGPT(seed=3, clock=fixed_clock(1_700_000_000))


def _loop(mock: MockGPT, body: dict[str, Any], results: dict[str, str], limit: int = 6) -> list[str]:
    """Run a chat-shaped loop, answering each call from `results`, until an answer without calls."""
    messages = list(body["messages"])
    names: list[str] = []
    for _ in range(limit):
        out = mock.generate({**body, "messages": messages})
        if not out.tool_calls:
            break
        names += [c.name for c in out.tool_calls]
        if any(c.name == "final_result" for c in out.tool_calls):
            break
        messages.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                    for c in out.tool_calls
                ],
            }
        )
        messages += [
            {"role": "tool", "tool_call_id": c.id, "content": results[c.name]} for c in out.tool_calls
        ]
    return names


def test_required_choice_calls_a_work_tool_then_the_final_tool() -> None:
    mock = _mock()
    body = {
        "model": "gpt-4o",
        "tools": TOOLS,
        "tool_choice": "required",
        "messages": [{"role": "user", "content": "How old is Marta Silva?"}],
    }
    assert _loop(mock, body, {"lookup_age": "41", "home_city": "Lisbon"}) == ["lookup_age", "final_result"]
    final = json.loads(mock.records[-1].output.tool_calls[0].arguments)
    assert final["name"] == "Marta Silva" and final["age"] == 41


def test_required_without_a_final_tool_calls_each_tool_once_before_repeating() -> None:
    mock = _mock()
    body = {
        "model": "gpt-4o",
        "tools": TOOLS[:2],
        "tool_choice": "required",
        "messages": [{"role": "user", "content": "Tell me about Marta Silva"}],
    }
    names = _loop(mock, body, {"lookup_age": "41", "home_city": "Lisbon"}, limit=3)
    assert names == ["lookup_age", "home_city", "lookup_age"]


def test_a_named_choice_always_calls_that_tool() -> None:
    mock = _mock()
    body = {
        "model": "gpt-4o",
        "tools": TOOLS,
        "tool_choice": {"type": "function", "function": {"name": "home_city"}},
        "messages": [{"role": "user", "content": "Where does Ana live?"}],
    }
    assert _loop(mock, body, {"lookup_age": "41", "home_city": "Porto"}, limit=3) == ["home_city"] * 3


def test_one_tool_under_required_is_called_again() -> None:
    mock = _mock()
    body = {
        "model": "gpt-4o",
        "tools": TOOLS[:1],
        "tool_choice": "required",
        "messages": [{"role": "user", "content": "How old is Ana?"}],
    }
    assert _loop(mock, body, {"lookup_age": "30"}, limit=2) == ["lookup_age", "lookup_age"]


def test_auto_choice_calls_a_pending_final_tool_after_the_results() -> None:
    mock = _mock()
    body = {
        "model": "gpt-4o",
        "tools": TOOLS,
        "messages": [{"role": "user", "content": "How old is Marta Silva?"}],
    }
    assert _loop(mock, body, {"lookup_age": "41", "home_city": "Lisbon"}) == ["lookup_age", "final_result"]


@pytest.mark.parametrize(
    ("name", "description", "final"),
    [
        ("final_result", "", True),
        ("final_result_Person", "", True),
        ("respond", "", True),
        ("emit", "Use this tool to give the final answer.", True),
        ("lookup_age", "How old a person is.", False),
        ("search", "Search the web for results", False),
    ],
)
def test_final_answer_tools_are_known_by_name_or_description(
    name: str, description: str, final: bool
) -> None:
    assert is_final_answer_tool(Tool(name=name, description=description)) is final


def test_a_forced_choice_wins_over_a_response_schema() -> None:
    mock = _mock()
    fmt = {"name": "Person", "schema": PERSON}
    out = mock.generate(
        {
            "model": "gpt-4o",
            "tools": TOOLS[2:],
            "tool_choice": "required",
            "response_schema": fmt,
            "messages": [{"role": "user", "content": "Jason is 25 years old and lives in Oslo"}],
        }
    )
    assert [c.name for c in out.tool_calls] == ["final_result"]
    assert json.loads(out.tool_calls[0].arguments) == {"name": "Jason", "age": 25, "city": "Oslo"}


def test_tools_come_before_the_schema_whose_document_takes_their_results() -> None:
    mock = _mock()
    weather = {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
        },
    }
    schema = {
        "type": "object",
        "additionalProperties": False,
        "required": ["city", "temperature_c", "summary"],
        "properties": {
            "city": {"type": "string"},
            "temperature_c": {"type": "number"},
            "summary": {"type": "string"},
        },
    }
    body: dict[str, Any] = {
        "model": "gpt-4o",
        "tools": [weather],
        "response_schema": {"name": "report", "schema": schema},
        "messages": [{"role": "user", "content": "What is the weather in Lisbon?"}],
    }
    first = mock.generate(body)
    assert mock.records[-1].rule == "tool_call"
    (call,) = first.tool_calls
    assert json.loads(call.arguments) == {"city": "Lisbon"}
    body["messages"] += [
        {
            "role": "assistant",
            "tool_calls": [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments},
                }
            ],
        },
        {"role": "tool", "tool_call_id": call.id, "content": '{"temperature_c": 21.5, "sky": "clear"}'},
    ]
    second = mock.generate(body)
    assert mock.records[-1].rule == "structured_output"
    doc = json.loads(second.text)
    jsonschema.validate(doc, schema)
    assert (doc["city"], doc["temperature_c"]) == ("Lisbon", 21.5)


def test_structured_output_takes_the_place_the_user_names() -> None:
    schema = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    out = _mock().generate(
        {
            "model": "gpt-4o",
            "messages": [{"role": "user", "content": "weather in Lisbon"}],
            "response_schema": {"name": "w", "schema": schema},
        }
    )
    assert json.loads(out.text) == {"city": "Lisbon"}


def test_values_that_break_the_field_schema_are_not_taken() -> None:
    schema = {
        "type": "object",
        "required": ["age", "city"],
        "properties": {"age": {"type": "integer", "maximum": 20}, "city": {"type": "string", "maxLength": 3}},
    }
    out = _mock().generate(
        {
            "model": "gpt-4o",
            "messages": [{"role": "user", "content": "Jo is 25 years old, in Lisbon"}],
            "response_schema": {"name": "w", "schema": schema},
        }
    )
    doc = json.loads(out.text)
    jsonschema.validate(doc, schema)
    assert doc["age"] != 25 and doc["city"] != "Lisbon"


def test_integer_bounds_as_wide_as_2_to_the_53_keep_realistic_values() -> None:
    big = 2**53 - 1
    schema = {
        "type": "object",
        "required": ["age", "count"],
        "additionalProperties": False,
        "properties": {
            "age": {"type": "integer", "minimum": -big, "maximum": big},
            "count": {"type": "integer", "minimum": -big, "maximum": big},
        },
    }
    mock = _mock()
    for i in range(20):
        out = mock.generate(
            {
                "model": "gpt-4o",
                "messages": [{"role": "user", "content": f"record {i}"}],
                "response_schema": {"name": "r", "schema": schema},
            }
        )
        doc = json.loads(out.text)
        assert 18 <= doc["age"] <= 90 and 0 <= doc["count"] <= 100, doc
