"""Which tool a built-in call picks once the turn has results: the calls are counted once per request."""

from __future__ import annotations

from typing import Any

import pytest

from synthgpt import MockGPT
from synthgpt.generators.tool_pick import pick_tool
from synthgpt.model import ModelRequest

_ARG = {"type": "object", "properties": {"q": {"type": "string"}}}


def _messages(calls: list[str]) -> list[dict[str, Any]]:
    """A turn that called `calls`, each with its result."""
    return [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": f"c{i}", "type": "function", "function": {"name": n, "arguments": "{}"}}
            for i, n in enumerate(calls)
        ]},
        *({"role": "tool", "tool_call_id": f"c{i}", "content": "ok"} for i in range(len(calls))),
    ]  # fmt: skip


def _body(tools: list[str], calls: list[str], choice: Any = "required") -> dict[str, Any]:
    return {
        "model": "gpt-4o",
        "tools": [{"type": "function", "function": {"name": n, "parameters": _ARG}} for n in tools],
        "tool_choice": choice,
        "messages": _messages(calls) if calls else [{"role": "user", "content": "go"}],
    }


def _request(tools: list[str], calls: list[str], choice: Any = "required") -> ModelRequest:
    return ModelRequest.from_dict(_body(tools, calls, choice))


@pytest.mark.parametrize(
    ("tools", "calls", "picked"),
    [
        (["a", "b", "c"], ["a"], "b"),  # a tool not called yet, in declaration order
        (["a", "b", "c"], ["c", "a", "a"], "b"),
        (["a", "b", "final_result"], ["a"], "final_result"),  # a final-answer tool first among those
        (["a", "b", "c"], ["a", "b", "a", "c", "b", "a"], "c"),  # all called: the least called
        (["a", "b", "c"], ["a", "b", "a", "c"], "b"),  # ties: declaration order
        (["a", "b", "c"], ["c", "b", "a"], "a"),
        (["a", "final_result"], ["a", "final_result", "a"], "final_result"),  # all called: the final one
        (["a", "b"], ["zz", "zz", "a"], "b"),  # calls of undeclared tools count for nothing
        (["a", "b"], ["zz", "a", "b", "b"], "a"),
    ],
)
def test_the_pick_after_results(tools: list[str], calls: list[str], picked: str) -> None:
    assert pick_tool(_request(tools, calls)) == picked


def test_a_named_choice_and_no_results() -> None:
    named = {"type": "function", "function": {"name": "b"}}
    assert pick_tool(_request(["a", "b"], ["a", "a"], named)) == "b"
    assert pick_tool(_request(["final_result", "a"], [])) == "a"  # before results: a work tool
    assert pick_tool(_request(["final_result"], [])) == "final_result"


def test_many_tools_all_called_are_picked_from_counts() -> None:
    tools = [f"t{i:04d}" for i in range(2_000)]
    calls = tools * 3 + tools[:1_999]  # every tool 4 times but the last, 3 times
    assert pick_tool(_request(tools, calls)) == "t1999"
    out = MockGPT(seed=1).generate(_body(tools, calls))
    assert [c.name for c in out.tool_calls] == ["t1999"]
