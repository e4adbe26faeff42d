"""pydantic-ai against the built-in rules: an agent with function tools and a structured `output_type`
sends `final_result` beside its tools with a forced tool choice on every round; the loop must end.

Before the fix synthgpt called the first tool every round and the run died with `UsageLimitExceeded`.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from pydantic import BaseModel
from pydantic_ai import Agent, UsageLimits
from pydantic_ai.models.openai import OpenAIChatModel, OpenAIResponsesModel
from pydantic_ai.providers.openai import OpenAIProvider

from synthgpt import MockGPT
from synthgpt.generators import fixed_clock
from synthgpt.testing import anthropic_client, openai_client


class Person(BaseModel):
    name: str
    age: int
    city: str


def _model(api: str, mock: MockGPT) -> Any:
    provider = OpenAIProvider(openai_client=openai_client(mock, async_=True))
    if api == "responses":
        return OpenAIResponsesModel("gpt-4o", provider=provider)
    return OpenAIChatModel("gpt-4o", provider=provider)


def _agent(api: str, mock: MockGPT, calls: list[str]) -> Agent[None, Person]:
    agent = Agent(_model(api, mock), output_type=Person, instructions="Answer with the person's record.")

    @agent.tool_plain
    def lookup_age(name: str) -> int:
        """How old a person is."""
        calls.append(f"lookup_age({name})")
        return 41

    @agent.tool_plain
    def home_city(name: str) -> str:
        """Where a person lives."""
        calls.append(f"home_city({name})")
        return "Lisbon"

    return agent


# pydantic-ai 2.44's Anthropic model cannot build a request with the anthropic SDK of the dev extra (2.16:
# `BetaMessageParam` became a Union it tries to instantiate), so Messages is driven by the loop below.
@pytest.mark.parametrize("api", ["chat", "responses"])
def test_an_output_type_and_two_tools_end_within_four_requests(api: str) -> None:
    mock = MockGPT(seed=7, clock=fixed_clock(1_700_000_000))
    calls: list[str] = []
    agent = _agent(api, mock, calls)
    result = asyncio.run(
        agent.run(
            "How old is Marta Silva and where does she live?", usage_limits=UsageLimits(request_limit=4)
        )
    )
    assert isinstance(result.output, Person)
    assert len(mock.records) <= 4
    # the work tool first, then `final_result`; the age the tool returned flows into the document
    assert calls == ["lookup_age(Marta Silva)"]
    assert result.output.age == 41
    assert result.output.name == "Marta Silva"
    assert [r.rule for r in mock.records] == ["tool_call", "tool_call"]
    sent = mock.records[-1].request
    assert sent.tool_choice.mode == "required"
    assert [tc.name for tc in mock.records[-1].output.tool_calls] == ["final_result"]


def test_the_same_loop_on_messages_with_tool_choice_any() -> None:
    """What pydantic-ai sends on Messages: its tools plus `final_result`, `tool_choice: {"type": "any"}`."""
    mock = MockGPT(seed=7, clock=fixed_clock(1_700_000_000))
    client = anthropic_client(mock)
    person = Person.model_json_schema()
    by_name = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
    tools: list[Any] = [
        {"name": "lookup_age", "description": "How old a person is.", "input_schema": by_name},
        {"name": "home_city", "description": "Where a person lives.", "input_schema": by_name},
        {"name": "final_result", "description": "The final response which ends this conversation",
         "input_schema": person},
    ]  # fmt: skip
    messages: list[Any] = [{"role": "user", "content": "How old is Marta Silva and where does she live?"}]
    for _ in range(4):
        reply = client.messages.create(
            model="claude-sonnet-4-5", max_tokens=1024, messages=messages, tools=tools,
            tool_choice={"type": "any"},
        )  # fmt: skip
        assert reply.stop_reason == "tool_use"
        (call,) = [b for b in reply.content if b.type == "tool_use"]
        if call.name == "final_result":
            break
        messages += [
            {"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in reply.content]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call.id, "content": "41"}]},
        ]
    assert [c.name for r in mock.records for c in r.output.tool_calls] == ["lookup_age", "final_result"]
    assert call.input == {"name": "Marta Silva", "age": 41, "city": call.input["city"]}
