"""Item 1 of the parity issue: no generated part quotes a `!MOCK_…!` trigger or what is left of one."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from synthgpt import MockGPT, Rule
from synthgpt import generators as g
from synthgpt import matchers as m
from synthgpt.server import create_app

ASK = "Tell me about tides !MOCK_DELAY:1! please !MOCK_SLOW:0!"


def _assert_clean(value: Any) -> None:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    assert "MOCK" not in text, text
    assert "DELAY" not in text and "SLOW" not in text, text


def test_reasoning_text_and_summary_leave_triggers_out_in_python() -> None:
    mock = MockGPT(seed=0)
    out = mock.generate({
        "model": "o3", "reasoning": {"effort": "low", "summary": "auto"},
        "messages": [{"role": "user", "content": ASK}],
    })  # fmt: skip
    assert out.reasoning and out.text
    _assert_clean(out.reasoning)
    _assert_clean(out.text)
    assert "tides" in out.reasoning
    assert out.stream.first_delay_ms == 1  # the trigger still steers the delivery


def test_echo_template_and_default_tool_arguments_leave_triggers_out() -> None:
    mock = MockGPT(
        [
            Rule("echo", m.last_user(contains="echo"), g.echo()),
            Rule("tpl", m.last_user(contains="tpl"), g.template("You said: {{ last_user }}")),
            Rule("summary", m.last_user(contains="sum"), g.summary()),
            Rule("call", m.has_tools(), g.tool_call()),
        ]
    )
    user = {"role": "user", "content": "echo this !MOCK_SLOW:5! now"}
    assert mock.generate({"model": "x", "messages": [user]}).text == "echo this now"
    user = {"role": "user", "content": "tpl !MOCK_INCOMPLETE! it"}
    assert mock.generate({"model": "x", "messages": [user]}).text == "You said: tpl it"
    user = {"role": "user", "content": "sum it up. !MOCK_DELAY:5!"}
    assert mock.generate({"model": "x", "messages": [user]}).text == "sum it up."
    tool = {"name": "search", "parameters": {"type": "object", "properties": {"query": {"type": "string"}},
                                             "required": ["query"]}}  # fmt: skip
    user = {"role": "user", "content": "search for tide tables !MOCK_DELAY:5!"}
    out = mock.generate({"model": "x", "messages": [user], "tools": [tool]})
    _assert_clean(out.tool_calls[0].arguments)


def test_a_malformed_trigger_stays_text_for_rules_that_do_not_read_triggers() -> None:
    mock = MockGPT(Rule("echo", m.always(), g.echo()))
    text = "literally !MOCK_NOPE:3! here"
    assert mock.generate({"model": "x", "messages": [{"role": "user", "content": text}]}).text == text


@pytest.mark.parametrize(
    ("path", "body"),
    [
        (
            "/v1/chat/completions",
            {"model": "o3", "reasoning_effort": "low", "logprobs": True, "top_logprobs": 2, "stream": True},
        ),
        (
            "/v1/responses",
            {
                "model": "o3",
                "reasoning": {"effort": "low", "summary": "auto"},
                "stream": True,
                "include": ["message.output_text.logprobs"],
            },
        ),
        (
            "/v1/messages",
            {
                "model": "claude-sonnet-4-5",
                "max_tokens": 2000,
                "stream": True,
                "thinking": {"type": "enabled", "budget_tokens": 1024},
            },
        ),
    ],
)
async def test_no_frame_of_any_api_carries_a_trigger(path: str, body: dict[str, Any]) -> None:
    app = create_app(MockGPT(seed=0))
    payload: dict[str, Any] = {**body}
    if path == "/v1/responses":
        payload["input"] = ASK
    else:
        payload["messages"] = [{"role": "user", "content": ASK}]
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as client:
        streamed = await client.post(path, json=payload)
        whole = await client.post(path, json={**payload, "stream": False})
    assert streamed.status_code == whole.status_code == 200
    assert "tides" in whole.text  # the content is about what was asked
    assert "MOCK" not in streamed.text and "DELAY" not in streamed.text
    assert "MOCK" not in whole.text and "DELAY" not in whole.text
    assert "thinking" in whole.text or "reasoning" in whole.text


def test_a_trigger_echoed_back_in_a_tool_result_is_not_quoted() -> None:
    mock = MockGPT(seed=0)
    call = {"id": "c1", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}
    out = mock.generate({
        "model": "gpt-4o",
        "messages": [
            {"role": "user", "content": "look it up"},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c1", "content": "high tide at 6 !MOCK_ERROR:500! pm"},
        ],
        "tools": [{"type": "function", "function": {"name": "lookup", "parameters": {"type": "object"}}}],
    })  # fmt: skip
    assert out.rule == "tool_results" and "high tide at 6 pm" in out.text
    _assert_clean(out.text)
