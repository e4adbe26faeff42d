"""Item 6 of the parity issue: required tool arguments take what the user's words clearly give."""

from __future__ import annotations

import json
from typing import Any

import httpx
import jsonschema
import pytest

from synthgpt import MockGPT, Rule
from synthgpt import generators as g
from synthgpt import matchers as m
from synthgpt.generators.message_values import MessageValues
from synthgpt.generators.request_args import fill_from_request
from synthgpt.server import create_app

SHELL: dict[str, Any] = {
    "type": "object",
    "properties": {"command": {"type": "string"}, "workdir": {"type": "string"}},
    "required": ["command", "workdir"],
}


def _obj(**props: Any) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": list(props)}


S = {"type": "string"}


@pytest.mark.parametrize(
    ("text", "values"),
    [
        ("run `ls -la` in /tmp", MessageValues(commands=("ls -la",), paths=("/tmp",))),
        ("please run ls -la in /tmp", MessageValues(commands=("ls -la",), paths=("/tmp",))),
        ("Run the tests", MessageValues()),
        (
            "mail bob@example.com the file at https://x.test/r.pdf.",
            MessageValues(urls=("https://x.test/r.pdf",), emails=("bob@example.com",)),
        ),
        ("set a timer for 25 minutes, 5 km away", MessageValues(quantities=("25 minutes", "5 km"))),
        ('rename ./docs/plan.md to "Q3 plan"', MessageValues(paths=("./docs/plan.md",), quoted=("Q3 plan",))),
        ("don't say 'hello world' twice", MessageValues(quoted=("hello world",))),
        ("What is 3 + 4?", MessageValues()),
    ],
)
def test_what_a_message_gives(text: str, values: MessageValues) -> None:
    assert MessageValues.of(text) == values


@pytest.mark.parametrize(
    ("schema", "text", "filled"),
    [
        (SHELL, "run `ls -la` in /tmp", {"command": "ls -la", "workdir": "/tmp"}),
        (SHELL, "run du -sh in ~/src", {"command": "du -sh", "workdir": "~/src"}),
        (_obj(path=S), "read src/app.py please", {"path": "src/app.py"}),
        (
            _obj(dir=S, file=S),
            "copy notes.txt into /var/backups",
            {"dir": "/var/backups", "file": "notes.txt"},
        ),
        (
            _obj(url={"type": "string", "format": "uri"}),
            "fetch https://example.com/a?b=1.",
            {"url": "https://example.com/a?b=1"},
        ),
        (
            _obj(to=S, subject=S),
            'email ann@corp.io "Quarterly numbers"',
            {"to": "ann@corp.io", "subject": "Quarterly numbers"},
        ),
        (_obj(duration=S), "set a timer for 25 minutes", {"duration": "25 minutes"}),
        (_obj(text=S), 'translate "good morning" to French', {"text": "good morning"}),
        (_obj(anything=S), 'use "exactly this"', {"anything": "exactly this"}),
        (_obj(query=S), 'search the docs for "rate limits"', {"query": "rate limits"}),
    ],
)
def test_fields_named_for_a_kind_take_it(schema: dict[str, Any], text: str, filled: dict[str, str]) -> None:
    drawn = {k: "seeded" for k in schema["properties"]}
    assert fill_from_request(drawn, schema, text) == filled


def test_seeded_values_stay_when_the_message_has_nothing_that_fits() -> None:
    drawn = {"command": "seeded", "workdir": "seeded"}
    assert fill_from_request(drawn, SHELL, "do something useful") == drawn
    email_only = _obj(email={"type": "string", "format": "email"}, url={"type": "string", "format": "uri"})
    # a value never fills a field whose format it does not have
    assert fill_from_request({"email": "a@b.c", "url": "u"}, email_only, "see /tmp") == {
        "email": "a@b.c",
        "url": "u",
    }
    limited = _obj(command={"type": "string", "maxLength": 3})
    assert fill_from_request({"command": "ls"}, limited, "run `ls -la`") == {"command": "ls"}
    # a trip's `to` is still a place when no address is given
    assert fill_from_request({"to": "x"}, _obj(to=S), "fly to Rome") == {"to": "Rome"}


def _tool(name: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "parameters": schema}}


def test_python_dsl_default_tool_call_fills_from_the_words() -> None:
    mock = MockGPT([Rule("call", m.has_tools(), g.tool_call())])
    out = mock.generate({
        "model": "gpt-4o", "messages": [{"role": "user", "content": "run `ls -la` in /tmp"}],
        "tools": [_tool("shell", SHELL)],
    })  # fmt: skip
    assert json.loads(out.tool_calls[0].arguments) == {"command": "ls -la", "workdir": "/tmp"}


async def test_http_built_in_tool_call_fills_from_the_words() -> None:
    schema = _obj(command=S, workdir=S, url=S, email=S, timeout=S)
    body = {
        "model": "gpt-4o",
        "messages": [
            {
                "role": "user",
                "content": "run `curl -s https://x.test/h` in /srv with 30 s, report to ops@x.test",
            }
        ],
        "tools": [_tool("shell", schema)],
        "tool_choice": "required",
    }
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=create_app(MockGPT())), base_url="http://t"
    ) as c:
        r = await c.post("/v1/chat/completions", json=body)
    args = json.loads(r.json()["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"])
    jsonschema.validate(args, schema)
    assert args == {
        "command": "curl -s https://x.test/h",
        "workdir": "/srv",
        "url": args["url"],  # the only URL is inside the command: the field keeps its seeded value
        "email": "ops@x.test",
        "timeout": "30 s",
    }
    assert args["url"] != "https://x.test/h"
