"""openai-agents 0.24 against a real `synthgpt serve`: an agent with a function tool runs its loop to the end.

The agent talks the Responses API (its default). Tracing is disabled so nothing leaves the machine.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, TypeVar

import pytest

os.environ.setdefault("OPENAI_AGENTS_DISABLE_TRACING", "1")

from agents import (  # tracing must be off before the SDK is imported
    Agent,
    ItemHelpers,
    OpenAIResponsesModel,
    Runner,
    function_tool,
    set_tracing_disabled,
)
from openai import AsyncOpenAI

set_tracing_disabled(True)
T = TypeVar("T")


@pytest.fixture
def with_agent(live_server: str) -> Iterator[tuple[Callable[..., Any], list[str]]]:
    """`with_agent(fn)` runs `await fn(agent)` in a fresh event loop with a client bound to that loop."""
    calls: list[str] = []

    @function_tool
    def get_weather(city: str) -> str:
        """The current weather for a city."""
        calls.append(city)
        return f"18C and sunny in {city}"

    def run(fn: Callable[[Agent], Awaitable[T]]) -> T:
        async def main() -> T:
            async with AsyncOpenAI(
                base_url=live_server + "/v1", api_key="sk-test", _strict_response_validation=True
            ) as client:
                agent = Agent(
                    name="weather",
                    instructions="Answer weather questions with the tool.",
                    tools=[get_weather],
                    model=OpenAIResponsesModel(model="gpt-4o", openai_client=client),
                )
                return await fn(agent)

        return asyncio.run(main())

    yield run, calls


def test_runner_run_loops_to_a_final_answer(with_agent: tuple[Callable[..., Any], list[str]]) -> None:
    run, calls = with_agent
    result = run(lambda agent: Runner.run(agent, "What's the weather in Paris?"))
    assert len(calls) == 1
    assert [type(i).__name__ for i in result.new_items] == [
        "ToolCallItem",
        "ToolCallOutputItem",
        "MessageOutputItem",
    ]
    assert f"get_weather returned: 18C and sunny in {calls[0]}" in result.final_output
    assert len(result.raw_responses) == 2


def test_runner_run_streamed_loops_to_the_same_answer(
    with_agent: tuple[Callable[..., Any], list[str]],
) -> None:
    run, calls = with_agent

    async def streamed(agent: Agent) -> tuple[str, list[str], str]:
        result = Runner.run_streamed(agent, "What's the weather in Paris?")
        kinds: list[str] = []
        text = ""
        async for event in result.stream_events():
            kinds.append(event.type)
            if event.type == "run_item_stream_event" and event.item.type == "message_output_item":
                text = ItemHelpers.text_message_output(event.item)
        return str(result.final_output), kinds, text

    final, kinds, text = run(streamed)
    assert len(calls) == 1 and final == text
    assert {"raw_response_event", "run_item_stream_event"} <= set(kinds)
    plain = run(lambda agent: Runner.run(agent, "What's the weather in Paris?"))
    assert plain.final_output == final  # the same seed answers the same conversation the same way
