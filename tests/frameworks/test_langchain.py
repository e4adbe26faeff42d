"""LangChain against the built-in rules: a tool loop whose answer is then structured
(`with_structured_output` after tool use), ChatOpenAI pointed at Azure's v1 surface, and
langchain-anthropic's token counting (`/v1/messages/count_tokens`)."""

from __future__ import annotations

from typing import Any

import httpx
from langchain_anthropic import ChatAnthropic
from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from pydantic import BaseModel

from synthgpt import MockGPT
from synthgpt.generators import fixed_clock
from synthgpt.testing import LiveServer


class Report(BaseModel):
    city: str
    temperature_c: float


@tool
def get_weather(city: str) -> dict[str, Any]:
    """The current weather in a city."""
    return {"city": city, "temperature_c": 21.5}


def _mock() -> MockGPT:
    return MockGPT(seed=4, clock=fixed_clock(1_700_000_000))


def _openai(base_url: str) -> ChatOpenAI:
    # an own httpx client, closed by the test: LangChain's shared default client would outlive the server
    client = httpx.Client()
    return ChatOpenAI(model="gpt-4o", base_url=base_url, api_key="k", max_retries=0, http_client=client)


def test_tools_then_structured_output_from_their_results() -> None:
    mock = _mock()
    with LiveServer(mock) as server:
        llm = _openai(server.url + "/v1")
        messages: list[Any] = [HumanMessage("What is the weather in Lisbon?")]
        ai = llm.bind_tools([get_weather]).invoke(messages)
        (call,) = ai.tool_calls
        assert call["name"] == "get_weather" and call["args"] == {"city": "Lisbon"}
        result = get_weather.invoke(call)  # a ToolMessage, its dict written as JSON
        assert isinstance(result, ToolMessage)
        messages += [ai, result]
        report = llm.with_structured_output(Report).invoke(messages)
        llm.root_client.close()
    assert report == Report(city="Lisbon", temperature_c=21.5)


def test_structured_output_with_tools_bound_calls_the_tool_first() -> None:
    mock = _mock()
    with LiveServer(mock) as server:
        llm = _openai(server.url + "/v1")
        bound = llm.bind_tools([get_weather], response_format=Report, strict=True)
        ai = bound.invoke([HumanMessage("What is the weather in Lisbon?")])
        llm.root_client.close()
    assert [c["name"] for c in ai.tool_calls] == ["get_weather"]
    assert [r.rule for r in mock.records] == ["tool_call"]


def test_chat_openai_at_the_azure_v1_endpoint() -> None:
    with LiveServer(_mock()) as server:
        llm = _openai(server.url + "/openai/v1/")
        reply = llm.invoke("Say hello")
        llm.root_client.close()
    assert isinstance(reply.content, str) and reply.content


def test_langchain_anthropic_counts_tokens_like_usage() -> None:
    mock = _mock()
    with LiveServer(mock) as server:
        llm = ChatAnthropic(model="claude-sonnet-4-5", base_url=server.url, api_key="k", max_retries=0)
        messages = [HumanMessage("How warm is it in Lisbon today?")]
        counted = llm.get_num_tokens_from_messages(messages)
        reply = llm.invoke(messages)
        llm._client.close()
    assert counted == reply.usage_metadata["input_tokens"]  # type: ignore[index]
