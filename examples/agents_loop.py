"""An openai-agents tool loop answered by synthgpt: the agent calls a tool, gets its result, answers.

    python examples/agents_loop.py                      # in process: no server, no network
    python examples/agents_loop.py --stream             # the same loop over Runner.run_streamed
    python examples/agents_loop.py --base-url http://127.0.0.1:8000/v1   # against `synthgpt serve`

The built-in rules drive the loop with no configuration: a request that declares tools gets a call to
the first tool with arguments valid against its schema; once the tool result is in the conversation,
a text answer that quotes it ends the loop. Tracing is disabled, so nothing leaves the machine.
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from agents import Agent, OpenAIResponsesModel, Runner, function_tool, set_tracing_disabled
from openai import AsyncOpenAI

from synthgpt import MockGPT
from synthgpt.testing import openai_client

CALLS: list[str] = []


@function_tool
def get_weather(city: str) -> str:
    """Current weather for a city."""
    CALLS.append(city)
    return f"It is 21 degrees and sunny in {city}."


def build_client(base_url: str | None, seed: int) -> AsyncOpenAI:
    if base_url:
        return AsyncOpenAI(api_key="sk-synthgpt", base_url=base_url, max_retries=0)
    return openai_client(MockGPT(seed=seed), async_=True)


async def run(base_url: str | None = None, *, stream: bool = False, seed: int = 0) -> str:
    set_tracing_disabled(True)
    CALLS.clear()
    client = build_client(base_url, seed)
    model = OpenAIResponsesModel(model="gpt-4o", openai_client=client)
    agent = Agent(name="forecaster", instructions="Answer weather questions with the tool.",
                  tools=[get_weather], model=model)  # fmt: skip
    question = "What's the weather in Lisbon?"
    try:
        if stream:
            streamed = Runner.run_streamed(agent, question)
            async for _ in streamed.stream_events():
                pass
            return str(streamed.final_output)
        result = await Runner.run(agent, question)
        return str(result.final_output)
    finally:
        await client.close()  # a real connection pool otherwise leaks sockets when the loop ends


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--base-url", default=None, help="a running synthgpt server (default: in process)")
    parser.add_argument("--stream", action="store_true", help="use Runner.run_streamed")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    answer = asyncio.run(run(args.base_url, stream=args.stream, seed=args.seed))
    print(f"tool calls: {len(CALLS)}")
    print(f"final output: {answer}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
