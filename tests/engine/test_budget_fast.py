"""`prompt_tokens` pinned for messages, tool calls, tools and embeddings inputs, and the budget (limits under
profiles and context windows) following from it."""

from __future__ import annotations

from typing import Any

import pytest

from synthgpt import ModelRequest
from synthgpt.engine.budget import budget_for, prompt_tokens
from synthgpt.profiles import as_profiles, output_limit, profile_for
from synthgpt.tokens import count_message_tokens, count_tokens

_TOOL = {"type": "function", "function": {"name": "get_weather", "description": "Weather in a city",
                                          "parameters": {"type": "object", "properties": {}}}}  # fmt: skip
_CALL = {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city":"Oslo"}'}}

REQUESTS: list[dict[str, Any]] = [
    {"model": "m", "messages": [{"role": "user", "content": "Tell me about tide pools #1"}]},
    {"model": "m", "messages": [{"role": "user", "content": ""}]},
    {"model": "m", "messages": [{"role": "user", "content": "trailing space   "}]},
    {"model": "m", "messages": [{"role": "user", "content": "straße İstanbul 日本 ﬁsh"}]},
    {"model": "m", "messages": [{"role": "system", "content": "be brief"}]},
    {"model": "m", "messages": [{"role": "user", "content": "hi"}], "tools": [_TOOL]},
    {"model": "m", "messages": [{"role": "assistant", "content": "", "tool_calls": [_CALL]}]},
    {"model": "m", "messages": [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b c"}]},
    {"api": "embeddings", "model": "m", "inputs": ["one", "two three"]},
]


PROMPT_TOKENS = [16, 7, 12, 13, 10, 43, 23, 14, 4]
"""`prompt_tokens` of each of `REQUESTS`."""


@pytest.mark.parametrize(("body", "expected"), list(zip(REQUESTS, PROMPT_TOKENS, strict=True)))
def test_prompt_tokens_of_each_kind_of_prompt(body: dict[str, Any], expected: int) -> None:
    req = ModelRequest.from_dict(body)
    if len(req.messages) == 1 and not req.tools and not req.messages[0].tool_calls:  # the priming, the
        assert prompt_tokens(req) == 3 + 4 + count_tokens(req.messages[0].content)  # message, its text
    assert prompt_tokens(req) == expected  # 3 + 4 + 9 for the first; 3 + (4 + 1) + (4 + 2) for "a", "b c"


def test_one_message_count_is_the_priming_the_message_overhead_and_its_text() -> None:
    for text in ["", " ", "hello world", "x" * 9, "a,b;c", "日本語 text\n"]:
        assert count_message_tokens([text]) == 3 + 4 + count_tokens(text)
    assert count_message_tokens(["Tell me about tide pools #1"]) == 3 + 4 + 9  # abou-t, pool-s


@pytest.mark.parametrize(
    "models, window, max_tokens",
    [
        ((), None, None),
        ((), 40, None),
        ((), 40, 10),
        ((), 12, None),  # the prompt fills the window: refused
        (({"name": "m", "context_window": 30, "max_output_tokens": 20},), None, None),
        (({"name": "m", "context_window": 30, "max_output_tokens": 20, "overflow": "clamp"},), None, 25),
        (({"name": "m*", "max_output_tokens": 5, "reasoning": True},), 100, None),
    ],
)
def test_budget_under_profiles_and_windows(
    models: tuple[dict[str, Any], ...], window: int | None, max_tokens: int | None
) -> None:
    body: dict[str, Any] = {"model": "m", "messages": [{"role": "user", "content": "About tide pools"}]}
    if max_tokens is not None:
        body["max_output_tokens"] = max_tokens
    req = ModelRequest.from_dict(body)
    _, profiles = as_profiles(models)
    profile = profile_for(profiles, "m") if profiles else None
    tokens = prompt_tokens(req)  # pinned above
    try:  # a refusal (a window the prompt and the reserved output do not fit) must be the same refusal
        expected: Any = (tokens, output_limit(req, tokens, profile, window),
                         profile is not None and profile.reasoning)  # fmt: skip
    except Exception as exc:
        expected = (type(exc), str(exc))
    try:
        got: Any = tuple(budget_for(req, profiles, window))
    except Exception as exc:
        got = (type(exc), str(exc))
    assert got == expected


def test_a_tool_s_tokens_are_counted_once_and_the_memory_of_them_stays_bounded() -> None:
    from synthgpt.engine import budget

    def tool(name: str, pad: int) -> dict[str, Any]:
        parameters = {"type": "object", "properties": {"x": {"type": "string", "description": "d" * pad}}}
        return {"type": "function", "function": {"name": name, "parameters": parameters}}

    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "tools": [tool("a", 10)]}
    req = ModelRequest.from_dict(body)
    text = "a  " + '{"properties":{"x":{"description":"dddddddddd","type":"string"}},"type":"object"}'
    assert prompt_tokens(req) == prompt_tokens(ModelRequest.from_dict(body)) == 7 + 1 + 8 + count_tokens(text)
    for i in range(400):  # ~3,000 characters each: past the 512 K kept, the memory starts over
        prompt_tokens(ModelRequest.from_dict({**body, "tools": [tool(f"t{i}", 3000)]}))
    assert budget._kept_chars <= 512 * 1024
    assert sum(map(len, budget._KNOWN)) == budget._kept_chars
    huge = ModelRequest.from_dict({**body, "tools": [tool("big", 10_000)]})  # over 4 K: counted, not kept
    assert prompt_tokens(huge) > 2_000 and not any(k.startswith("big ") for k in budget._KNOWN)


def test_a_long_conversation_s_remembered_counts_are_its_counts() -> None:
    from synthgpt.engine import budget

    turns = [{"role": "user" if i % 2 else "assistant", "content": f"turn {i} " + "word " * i}
             for i in range(12)]  # fmt: skip
    req = ModelRequest.from_dict({"model": "m", "messages": turns})
    again = ModelRequest.from_dict({"model": "m", "messages": turns})
    assert prompt_tokens(req) == prompt_tokens(again) == count_message_tokens(m.content for m in req.messages)
    assert "turn 11 " + "word " * 11 in budget._KNOWN  # remembered for the next turn's request
    short = ModelRequest.from_dict({"model": "m", "messages": [{"role": "user", "content": "new prompt 7"}]})
    assert prompt_tokens(short) == 3 + 4 + count_tokens("new prompt 7")
    assert "new prompt 7" not in budget._KNOWN  # a one-message prompt is counted, not remembered
