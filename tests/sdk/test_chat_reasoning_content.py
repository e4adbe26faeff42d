"""`reasoning_content` on Chat Completions, as vLLM, DeepSeek and OpenRouter send it when asked; never by
default for OpenAI model names (whose Chat API shows only the reasoning token count)."""

from __future__ import annotations

from typing import Any

import pytest

from synthgpt import MockGPT
from synthgpt.generators import fixed_clock
from synthgpt.testing import openai_client

ASK = [{"role": "user", "content": "Why is the sky blue?"}]


def _create(model: str, stream: bool = False, **extra: Any) -> tuple[Any, MockGPT]:
    mock = MockGPT(seed=2, clock=fixed_clock(1_700_000_000))
    client = openai_client(mock)
    if not stream:
        return client.chat.completions.create(model=model, messages=ASK, extra_body=extra or None), mock
    chunks = list(
        client.chat.completions.create(model=model, messages=ASK, stream=True, extra_body=extra or None)
    )
    return chunks, mock


@pytest.mark.parametrize(
    ("model", "extra"),
    [
        ("Qwen/Qwen3-8B", {"chat_template_kwargs": {"enable_thinking": True}}),
        ("deepseek-reasoner", {}),
        ("deepseek/deepseek-r1", {"include_reasoning": True}),
        ("gpt-4o", {"chat_template_kwargs": {"enable_thinking": True}}),
        ("llama-3.1-8b", {"reasoning_effort": "low"}),
    ],
)
def test_reasoning_content_where_asked(model: str, extra: dict[str, Any]) -> None:
    reply, mock = _create(model, **extra)
    message = reply.choices[0].message
    thought = message.model_extra["reasoning_content"]
    assert thought == mock.records[-1].output.reasoning and thought.startswith("The user is asking about")
    assert reply.usage.completion_tokens_details.reasoning_tokens > 0
    assert message.content


def test_streamed_reasoning_content_comes_before_the_content() -> None:
    chunks, mock = _create("deepseek-reasoner", stream=True)
    deltas = [c.choices[0].delta for c in chunks if c.choices]
    kinds = [("r" if (d.model_extra or {}).get("reasoning_content") else "c") for d in deltas if
             (d.model_extra or {}).get("reasoning_content") or d.content]  # fmt: skip
    assert kinds == sorted(kinds, key=lambda k: k != "r") and kinds[0] == "r" and kinds[-1] == "c"
    joined = "".join((d.model_extra or {}).get("reasoning_content", "") for d in deltas)
    assert joined == mock.records[-1].output.reasoning


@pytest.mark.parametrize(
    ("model", "extra"),
    [
        ("o3", {"reasoning_effort": "high"}),
        ("gpt-4o", {}),
        ("Qwen/Qwen3-8B", {"chat_template_kwargs": {"enable_thinking": False}}),
        ("deepseek-reasoner", {"include_reasoning": False}),
    ],
)
def test_no_reasoning_content_otherwise(model: str, extra: dict[str, Any]) -> None:
    reply, _ = _create(model, **extra)
    assert "reasoning_content" not in (reply.choices[0].message.model_extra or {})
