"""A rule whose draw fails answers a 500 naming the rule and a stable code, never the exception's text: a
draw may touch files or the environment, and its errors may quote them (issue 11, section 1)."""

from __future__ import annotations

import json
import logging
from typing import Any

import httpx
import pytest

from synthgpt import MockGPT, Rule
from synthgpt import generators as g
from synthgpt import matchers as m
from synthgpt.limits import Limits
from synthgpt.server import create_app

SECRET = "SECRET-MARKER-4711"
LOGGED = "the server's log has the details."
CHAT = {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]}
MESSAGES = {"model": "claude-sonnet-4-5", "max_tokens": 50, "messages": [{"role": "user", "content": "hi"}]}


def _leak(_: Any) -> Any:
    raise ValueError(f"could not parse {SECRET} from /etc/secrets")


def _client(rule: Rule) -> httpx.AsyncClient:
    app = create_app(MockGPT(rules=[rule], seed=0))
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://synth")


async def test_a_failing_draw_never_echoes_its_exception(caplog: pytest.LogCaptureFixture) -> None:
    async with _client(Rule("leaky", m.always(), g.integer().map(_leak))) as c:
        with caplog.at_level(logging.WARNING, logger="synthgpt.server"):
            r = await c.post("/v1/chat/completions", json=CHAT)
    assert r.status_code == 500
    assert r.json() == {
        "error": {
            "message": f"The rule 'leaky' failed to draw an answer (draw_failed); {LOGGED}",
            "type": "server_error",
            "param": None,
            "code": "draw_failed",
        }
    }
    assert SECRET not in r.text
    assert SECRET in caplog.text  # the operator still sees why


async def test_anthropic_shape_too() -> None:
    async with _client(Rule("leaky", m.always(), g.template("{{ tool_result('x') }}"))) as c:
        r = await c.post("/v1/messages", json=MESSAGES)
    assert r.status_code == 500
    body = r.json()
    assert body.pop("request_id").startswith("req_")
    assert body == {
        "type": "error",
        "error": {
            "type": "api_error",
            "message": f"The rule 'leaky' failed to draw an answer (draw_failed); {LOGGED}",
        },
    }


async def test_a_template_over_budget_is_a_500_with_its_own_code() -> None:
    loops = "{% for i in range(100000) %}{{ i }}{% endfor %}" * 2
    async with _client(Rule("big", m.always(), g.template(loops))) as c:
        r = await c.post("/v1/chat/completions", json=CHAT)
    assert r.status_code == 500
    assert r.json()["error"] == {
        "message": f"The rule 'big' failed to draw an answer (draw_over_budget); {LOGGED}",
        "type": "server_error",
        "param": None,
        "code": "draw_over_budget",
    }


async def test_a_request_schema_with_whole_float_counts_is_answered() -> None:
    # JSON Schema counts such as `"maxItems": 3.0` are integers; they failed the draw with a TypeError (500)
    schema = {
        "type": "object",
        "properties": {
            "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 3.0},
            "code": {"type": "string", "minLength": 2.0, "maxLength": 5.0},
        },
        "required": ["tags", "code"],
        "additionalProperties": False,
    }
    body = {
        **CHAT,
        "response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": schema}},
    }
    app = create_app(MockGPT(seed=0))
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://synth") as c:
        r = await c.post("/v1/chat/completions", json=body)
    assert r.status_code == 200, r.text
    document = json.loads(r.json()["choices"][0]["message"]["content"])
    assert sorted(document) == ["code", "tags"]
    assert 1 <= len(document["tags"]) <= 3 and 2 <= len(document["code"]) <= 5


async def test_number_bounds_past_the_floats_are_a_400_or_a_finite_number() -> None:
    # `minimum: <400 digits>` for a number was a 500 with a traceback (OverflowError), and an exclusive
    # bound near the largest float drew infinity (a 500: not JSON)
    def ask(bound: str) -> bytes:
        schema = f'{{"type":"object","properties":{{"x":{{"type":"number",{bound}}}}},"required":["x"]}}'
        return (
            '{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}],'
            f'"response_format":{{"type":"json_schema","json_schema":{{"name":"x","schema":{schema}}}}}}}'
        ).encode()

    app = create_app(MockGPT(seed=0))
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://synth") as c:
        huge = await c.post("/v1/chat/completions", content=ask('"minimum":1' + "0" * 400))
        edge = await c.post("/v1/chat/completions", content=ask('"exclusiveMinimum":1e308'))
    assert huge.status_code == 400
    assert huge.json()["error"] == {
        "message": "Invalid schema for response_format 'x': schema at '/properties/x': no number satisfies "
        f"minimum {'1' + '0' * 38}…. synthgpt draws documents from a subset of JSON Schema; remove or "
        "rewrite that part of the schema.",
        "type": "invalid_request_error",
        "param": "response_format.json_schema.schema",
        "code": None,
    }
    assert edge.status_code == 200, edge.text
    value = json.loads(edge.json()["choices"][0]["message"]["content"])["x"]
    assert 1e308 < value < float("inf")


async def test_a_request_string_past_the_answer_limit_is_a_400_before_it_is_built() -> None:
    # a nullable string's `minLength: 1e15` passed the check (its smallest document is null), and the
    # draw then built the string: minutes of CPU and gigabytes, one request stalling the server. (Here a
    # server with a 2 KB limit and a 20 KB string: the old code built it and failed with a 500.)
    schema = {
        "type": "object",
        "properties": {"x": {"type": ["string", "null"], "minLength": 20_000}},
        "required": ["x"],
        "additionalProperties": False,
    }
    app = create_app(MockGPT(seed=0, limits=Limits(max_answer_bytes=2048)))
    asked = {"type": "json_schema", "json_schema": {"name": "x", "schema": schema}}
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://synth") as c:
        replies = [
            await c.post(
                "/v1/chat/completions",
                json={**CHAT, "messages": [{"role": "user", "content": f"hi {i}"}], "response_format": asked},
            )
            for i in range(16)
        ]
    assert sorted({r.status_code for r in replies}) == [200, 400]
    refused = next(r for r in replies if r.status_code == 400)
    assert refused.json()["error"] == {
        "message": "Invalid schema for the response format: synthgpt could not draw a document from it: x: "
        "minLength 20000 is over this server's answer limit of 2048 bytes (max_answer_bytes).",
        "type": "invalid_request_error",
        "param": "response_format.json_schema.schema",
        "code": None,
    }
    answered = next(r for r in replies if r.status_code == 200)
    assert json.loads(answered.json()["choices"][0]["message"]["content"]) == {"x": None}


async def test_a_request_enum_beside_a_pattern_is_answered() -> None:
    # the enum's values were checked against the pattern before it was compiled: a KeyError, a 500
    schema = {
        "type": "object",
        "properties": {"currency": {"type": "string", "enum": ["EUR", "USD"], "pattern": "^[A-Z]{3}$"}},
        "required": ["currency"],
        "additionalProperties": False,
    }
    asked = {"type": "json_schema", "json_schema": {"name": "x", "schema": schema}}
    app = create_app(MockGPT(seed=0))
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://synth") as c:
        r = await c.post("/v1/chat/completions", json={**CHAT, "response_format": asked})
    assert r.status_code == 200, r.text
    assert json.loads(r.json()["choices"][0]["message"]["content"])["currency"] in ("EUR", "USD")
