"""Paths agent frameworks post to: Azure v1 Chat (`<endpoint>/openai/v1/`), Azure AI Foundry projects, and
Anthropic's `count_tokens` (anthropic's `messages.count_tokens`, langchain-anthropic's token counting)."""

from __future__ import annotations

from typing import Any

import anthropic
import httpx
import openai
import pytest


def test_azure_v1_chat_completions(live_server: str) -> None:
    with openai.OpenAI(
        base_url=live_server + "/openai/v1/", api_key="k", _strict_response_validation=True
    ) as c:
        reply = c.chat.completions.create(
            model="gpt-4o", messages=[{"role": "user", "content": "hello Azure"}]
        )
    assert reply.object == "chat.completion" and reply.choices[0].message.content


@pytest.mark.parametrize("path", ["chat/completions", "responses", "embeddings"])
def test_foundry_project_paths(live_server: str, path: str) -> None:
    body: dict[str, Any] = {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]}
    if path == "responses":
        body = {"model": "gpt-4o", "input": "hi"}
    elif path == "embeddings":
        body = {"model": "text-embedding-3-small", "input": "hi"}
    url = f"{live_server}/api/projects/my-project/openai/v1/{path}?api-version=v1"
    direct = httpx.post(f"{live_server}/v1/{path}", json=body)
    via_project = httpx.post(url, json=body, headers={"api-key": "k"})
    assert via_project.status_code == 200
    assert via_project.json() == direct.json()


def test_foundry_project_models(live_server: str) -> None:
    listed = httpx.get(f"{live_server}/api/projects/p/openai/v1/models")
    assert listed.status_code == 200 and listed.json()["object"] == "list"


TOOLS: Any = [
    {
        "name": "get_weather",
        "description": "Weather for a city.",
        "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
    }
]


def test_count_tokens_is_the_usage_of_the_same_request(live_server: str) -> None:
    messages: Any = [{"role": "user", "content": "How warm is it in Lisbon today?"}]
    with anthropic.Anthropic(base_url=live_server, api_key="k", _strict_response_validation=True) as c:
        counted = c.messages.count_tokens(
            model="claude-sonnet-4-5", messages=messages, tools=TOOLS, system="Be brief."
        )
        reply = c.messages.create(
            model="claude-sonnet-4-5",
            max_tokens=200,
            messages=messages,
            tools=TOOLS,
            system="Be brief.",
            tool_choice={"type": "none"},
        )
    assert counted.input_tokens == reply.usage.input_tokens
    assert counted.input_tokens > 20


def test_count_tokens_with_extended_thinking(live_server: str) -> None:
    # count_tokens takes `thinking` but no `max_tokens`: the budget was held to the route's stand-in
    # max_tokens of 1 and refused ("`max_tokens` must be greater than `thinking.budget_tokens`.")
    messages: Any = [{"role": "user", "content": "How warm is it in Lisbon today?"}]
    thinking: Any = {"type": "enabled", "budget_tokens": 2048}
    with anthropic.Anthropic(base_url=live_server, api_key="k", _strict_response_validation=True) as c:
        counted = c.messages.count_tokens(model="claude-sonnet-4-5", messages=messages, thinking=thinking)
        reply = c.messages.create(
            model="claude-sonnet-4-5", max_tokens=4096, messages=messages, thinking=thinking
        )
        with pytest.raises(anthropic.BadRequestError, match="budget_tokens"):
            c.messages.count_tokens(
                model="claude-sonnet-4-5", messages=messages, thinking={"type": "enabled", "budget_tokens": 5}
            )
    assert counted.input_tokens == reply.usage.input_tokens


def test_count_tokens_errors_are_anthropic_shaped(live_server: str) -> None:
    bad = httpx.post(live_server + "/v1/messages/count_tokens", json={"model": "claude-sonnet-4-5"})
    assert bad.status_code == 400
    assert bad.json()["type"] == "error"
    assert bad.json()["error"] == {"type": "invalid_request_error", "message": "messages: Field required"}
    extra = httpx.post(
        live_server + "/v1/messages/count_tokens",
        json={"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "x"}]},
    )
    assert extra.status_code == 400
    assert extra.json()["error"]["message"] == "max_tokens: Extra inputs are not permitted"
