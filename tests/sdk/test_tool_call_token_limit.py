"""`max_tokens` smaller than a tool call cuts the call like text: finish `length` (`max_tokens`,
`incomplete`), the arguments written so far, and usage within the limit — on every API."""

from __future__ import annotations

import json
from typing import Any

import pytest

from synthgpt import MockGPT
from synthgpt.generators import fixed_clock
from synthgpt.testing import anthropic_client, openai_client

PARAMS = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
    "required": ["city", "days"],
}
ASK = "Forecast for Lisbon for the next 5 days"


def _mock() -> MockGPT:
    return MockGPT(seed=5, clock=fixed_clock(1_700_000_000))


def test_chat_cuts_the_call_arguments() -> None:
    mock = _mock()
    full = openai_client(mock).chat.completions.create(
        model="gpt-4o",
        messages=[{"role": "user", "content": ASK}],
        tool_choice="required",
        tools=[{"type": "function", "function": {"name": "forecast", "parameters": PARAMS}}],
    )
    whole = full.choices[0].message.tool_calls[0].function.arguments  # type: ignore[index,union-attr]
    assert json.loads(whole)["city"] == "Lisbon"
    assert full.usage is not None and full.usage.completion_tokens > 6
    cut = openai_client(mock).chat.completions.create(
        model="gpt-4o",
        messages=[{"role": "user", "content": ASK}],
        tool_choice="required",
        max_tokens=5,
        tools=[{"type": "function", "function": {"name": "forecast", "parameters": PARAMS}}],
    )
    choice = cut.choices[0]
    assert choice.finish_reason == "length"
    (call,) = choice.message.tool_calls or []
    args = call.function.arguments  # type: ignore[union-attr]
    assert call.function.name == "forecast" and whole.startswith(args) and args != whole  # type: ignore[union-attr]
    assert cut.usage is not None and cut.usage.completion_tokens == 5


@pytest.mark.parametrize("stream", [False, True])
def test_messages_cut_call_is_max_tokens_with_the_input_so_far(stream: bool) -> None:
    client = anthropic_client(_mock())
    kwargs: Any = dict(
        model="claude-sonnet-4-5",
        max_tokens=4,
        messages=[{"role": "user", "content": ASK}],
        tools=[{"name": "forecast", "input_schema": PARAMS}],
        tool_choice={"type": "any"},
    )
    if stream:
        with client.messages.stream(**kwargs) as s:
            reply = s.get_final_message()
    else:
        reply = client.messages.create(**kwargs)
    assert reply.stop_reason == "max_tokens"
    assert [b.type for b in reply.content] == ["tool_use"]
    assert reply.usage.output_tokens == 4


def test_responses_cut_call_is_incomplete() -> None:
    reply = openai_client(_mock()).responses.create(
        model="gpt-4o",
        input=ASK,
        max_output_tokens=5,
        tool_choice="required",
        tools=[{"type": "function", "name": "forecast", "parameters": PARAMS, "strict": False}],
    )
    assert reply.status == "incomplete"
    assert reply.incomplete_details is not None and reply.incomplete_details.reason == "max_output_tokens"
    (call,) = [i for i in reply.output if i.type == "function_call"]
    assert (call.name, call.arguments, call.status) == ("forecast", '{"city', "incomplete")
    assert reply.usage is not None and reply.usage.output_tokens == 5


def test_reasoning_then_a_call_that_does_not_fit() -> None:
    out = _mock().generate(
        {
            "model": "o3",
            "messages": [{"role": "user", "content": ASK}],
            "tool_choice": "required",
            "tools": [{"type": "function", "function": {"name": "forecast", "parameters": PARAMS}}],
            "reasoning": {"effort": "low"},
            "max_output_tokens": 60,
        }
    )
    assert out.finish_reason == "length"
    assert out.usage.completion_tokens <= 60
    assert out.reasoning
