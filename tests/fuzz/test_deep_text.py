"""JSON nested thousands of levels deep inside a request's text (the body itself is shallow): a tool call's
arguments, a tool result, a trigger's arguments, a schema pasted into a prompt, Bedrock's schema string.
The standard parser raised RecursionError there, which its readers did not expect, and each request was
answered with a 500 (found by a probe of request shapes). Read as text that is not JSON, each is answered
as such text is."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from synthgpt import MockGPT, Rule
from synthgpt import generators as g
from synthgpt import matchers as m
from synthgpt.server import create_app
from synthgpt.testing import InProcessTransport

DEEP = "[" * 5_000 + "]" * 5_000
TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {}}}}]


@pytest.fixture(scope="module")
def client() -> Iterator[httpx.Client]:
    rules = [
        Rule("quote", m.last_user("quote the result"), g.template("got {{ tool_result('f') }}")),
        *MockGPT().rules,
    ]
    app = create_app(MockGPT(rules, seed=0))
    with httpx.Client(transport=InProcessTransport(app), base_url="http://s") as c:
        yield c


def _turn(user: str, arguments: str, result: str) -> dict[str, Any]:
    return {"model": "gpt-4o", "tools": TOOLS, "messages": [
        {"role": "user", "content": user},
        {"role": "assistant", "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "f", "arguments": arguments}},
        ]},
        {"role": "tool", "tool_call_id": "c1", "content": result},
    ]}  # fmt: skip


@pytest.mark.parametrize(
    "body",
    [
        _turn("go", "{}", DEEP),  # a tool result
        # a forced call reads the turn's results and calls' arguments for the facts they give
        {**_turn("go", "{}", DEEP), "tool_choice": "required"},
        {**_turn("go", DEEP, "ok"), "tool_choice": "required"},
        {"model": "gpt-4o", "messages": [
            {"role": "user", "content": 'Answer in JSON. "properties" ' + '{"a":[' * 1_000},
        ]},
    ],
    ids=["tool-result", "forced-call-result", "forced-call-arguments", "prompt-schema"],
)  # fmt: skip
def test_deep_json_in_a_message_is_read_as_text(client: httpx.Client, body: dict[str, Any]) -> None:
    r = client.post("/v1/chat/completions", json=body)
    assert r.status_code == 200, r.text[:300]
    assert r.json()["object"] == "chat.completion"


def test_a_template_reading_a_deep_tool_result_gets_its_text(client: httpx.Client) -> None:
    r = client.post("/v1/chat/completions", json=_turn("quote the result", "{}", DEEP))
    assert r.status_code == 200, r.text[:300]
    assert r.json()["choices"][0]["message"]["content"] == "got " + DEEP


def test_deep_trigger_arguments_are_refused_as_any_bad_arguments(client: httpx.Client) -> None:
    body = {"model": "gpt-4o", "tools": TOOLS,
            "messages": [{"role": "user", "content": '!MOCK_TOOL_CALL:f:{"a":' + DEEP + "}!"}]}  # fmt: skip
    r = client.post("/v1/chat/completions", json=body)
    assert r.status_code == 400
    assert r.json()["error"]["message"].startswith(
        "!MOCK_TOOL_CALL:f:…! needs JSON arguments: the JSON is nested too deeply to read. Triggers: "
    )


def test_a_deep_bedrock_schema_string_is_refused_as_json_it_cannot_read(client: httpx.Client) -> None:
    structure = {"jsonSchema": {"schema": DEEP}}
    body = {
        "messages": [{"role": "user", "content": [{"text": "hi"}]}],
        "outputConfig": {"textFormat": {"type": "json_schema", "structure": structure}},
    }
    r = client.post("/model/anthropic.claude-3-haiku/converse", json=body)
    assert r.status_code == 400
    assert r.json() == {
        "message": "The JSON schema in outputConfig is not valid JSON: the JSON is nested too deeply to "
        "read: line 1 column 10001 (char 10000)"
    }
