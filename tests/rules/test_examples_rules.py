"""The example rule files: each loads cleanly, is pinned by a snapshot of what it answers, and the ones
that need a wire (the agent loop, the chaos suite) are driven through a real `synthgpt serve`."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
import yaml
from jsonschema import Draft202012Validator
from syrupy.assertion import SnapshotAssertion

from synthgpt import MockGPT
from synthgpt.rules.check import check_files
from synthgpt.rules.loader import LoadedRules, load_files
from synthgpt.rules.spec import SCHEMA_PATH, json_schema

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples" / "rules"
FILES = sorted(p.name for p in EXAMPLES.glob("*.yaml"))
StartServer = Callable[..., AbstractContextManager[str]]


def mock_for(name: str) -> MockGPT:
    loaded: LoadedRules = load_files([EXAMPLES / name])
    return MockGPT(loaded.ruleset, seed=loaded.seed or 0, clock=loaded.clock)


def test_the_four_examples_exist() -> None:
    assert FILES == ["agent-loop.yaml", "chaos.yaml", "frontend-fixtures.yaml", "structured-output.yaml"]


@pytest.mark.parametrize("name", FILES)
def test_example_checks_clean(name: str) -> None:
    assert check_files([str(EXAMPLES / name)]) == []


@pytest.fixture(scope="module")
def schema_validator() -> Draft202012Validator:
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def test_shipped_schema_is_generated() -> None:
    shipped = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    assert shipped == json_schema(), "rulefile.schema.json is stale: run `python -m synthgpt.rules.spec`"


@pytest.mark.parametrize("name", FILES)
def test_example_is_valid_against_the_schema(name: str, schema_validator: Draft202012Validator) -> None:
    data = yaml.safe_load((EXAMPLES / name).read_text(encoding="utf-8"))
    errors = [f"{list(e.absolute_path)}: {e.message[:200]}" for e in schema_validator.iter_errors(data)]
    assert errors == []


def test_schema_rejects_what_the_loader_rejects(schema_validator: Draft202012Validator) -> None:
    bad = {"rules": [{"name": "r", "match": {"last_usr": "x"}, "genrate": {"intger": 1}}]}
    assert not schema_validator.is_valid(bad)
    assert not schema_validator.is_valid(
        {"rules": [{"name": "r", "match": "always", "generate": {"intger": 1}}]}
    )
    assert schema_validator.is_valid(
        {"rules": [{"name": "r", "match": "always", "generate": {"integer": 1}}]}
    )


# ------------------------------------------------------------------------------------------- snapshots

FLIGHTS = {"flights": [{"id": "AF1234", "price": 420}, {"id": "BA99", "price": 390}]}
TRIP_TOOLS = [
    {"type": "function", "function": {"name": n, "parameters": {"type": "object", "properties": {}}}}
    for n in ("search_flights", "book_flight", "get_weather")
]


def chat(text: str, **extra: Any) -> dict[str, Any]:
    return {"model": "gpt-4o", "messages": [{"role": "user", "content": text}], **extra}


def after(request: dict[str, Any], name: str, args: str, result: Any, cid: str) -> dict[str, Any]:
    call = {"id": cid, "type": "function", "function": {"name": name, "arguments": args}}
    messages = [
        *request["messages"],
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": cid, "content": json.dumps(result)},
    ]
    return {**request, "messages": messages}


TRIP = chat("Book me a trip to Paris next week", tools=TRIP_TOOLS)
TRIP_2 = after(TRIP, "search_flights", '{"destination":"Paris"}', FLIGHTS, "call_1")
TRIP_3 = after(
    TRIP_2,
    "book_flight",
    '{"flight_id":"AF1234"}',
    {"flight_id": "AF1234", "confirmation": "XK7Q2"},
    "call_2",
)
WEATHER = chat("What's the weather in Lisbon", tools=TRIP_TOOLS)
LOOPING = after(
    after(after(after(TRIP, "x", "{}", 1, "a"), "x", "{}", 2, "b"), "x", "{}", 3, "c"), "x", "{}", 4, "d"
)
SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "email": {"type": "string"},
        "age": {"type": "integer", "minimum": 18, "maximum": 99},
        "address": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
            "additionalProperties": False,
        },
    },
    "required": ["name", "email", "age", "address"],
    "additionalProperties": False,
}
REQUESTS: dict[str, list[tuple[str, dict[str, Any]]]] = {
    "agent-loop.yaml": [
        ("trip step 1", TRIP),
        ("trip step 2", TRIP_2),
        ("trip step 3", TRIP_3),
        ("weather call", WEATHER),
        (
            "weather answer",
            after(WEATHER, "get_weather", '{"city":"Lisbon"}', {"temp_c": 21, "sky": "sunny"}, "w"),
        ),
        ("four rounds", LOOPING),
        ("chat", chat("Tell me about trains")),
    ],
    "chaos.yaml": [
        *(
            (f"chaos:{w}", chat(f"chaos:{w}", stream=True))
            for w in (
                "disconnect",
                "truncate",
                "stream_error",
                "malformed",
                "unknown_item",
                "429",
                "500",
                "503",
                "529",
                "teapot",
                "delay",
                "slow",
                "choppy",
                "length",
            )
        ),
        ("flaky 1", chat("chaos:flaky")),
        ("flaky 2", chat("chaos:flaky")),
        ("flaky 3", chat("chaos:flaky")),
        ("flaky 4", chat("chaos:flaky")),
        ("calm", chat("hello")),
    ],
    "frontend-fixtures.yaml": [
        (q, chat(q))
        for q in (
            "hello there",
            "list the users",
            "show my profile",
            "products please",
            "release notes",
            "a table of scores",
            "what is up",
        )
    ],
    "structured-output.yaml": [
        ("user_profile", chat("me", response_schema={"name": "user_profile", "schema": SCHEMA})),
        ("invoice", chat("the invoice please")),
        (
            "other schema",
            chat(
                "x",
                response_schema={
                    "name": "other",
                    "schema": {
                        "type": "object",
                        "properties": {"ok": {"type": "boolean"}},
                        "required": ["ok"],
                    },
                },
            ),
        ),
        ("json_object", chat("x", response_schema={"kind": "json_object"})),
        ("plain", chat("no schema")),
    ],
}


@pytest.mark.parametrize("name", FILES)
def test_example_answers(name: str, snapshot: SnapshotAssertion) -> None:
    mock = mock_for(name)
    outputs = {label: mock.generate(body).model_dump(mode="json") for label, body in REQUESTS[name]}
    assert outputs == snapshot
    assert {label: out["rule"] for label, out in outputs.items()} == EXPECTED_RULES[name]


EXPECTED_RULES = {
    "agent-loop.yaml": {
        "trip step 1": "trip",
        "trip step 2": "trip",
        "trip step 3": "trip",
        "weather call": "weather-call",
        "weather answer": "weather-answer",
        "four rounds": "too-many-rounds",
        "chat": "chat",
    },
    "chaos.yaml": {
        "chaos:disconnect": "disconnect",
        "chaos:truncate": "truncate",
        "chaos:stream_error": "stream-error",
        "chaos:malformed": "malformed",
        "chaos:unknown_item": "unknown-item",
        "chaos:429": "rate-limited",
        "chaos:500": "server-error",
        "chaos:503": "unavailable",
        "chaos:529": "overloaded",
        "chaos:teapot": "custom-body",
        "chaos:delay": "delay",
        "chaos:slow": "slow",
        "chaos:choppy": "choppy",
        "chaos:length": "cut-short",
        "flaky 1": "flaky",
        "flaky 2": "flaky",
        "flaky 3": "flaky",
        "flaky 4": "flaky",
        "calm": "calm",
    },
    "frontend-fixtures.yaml": {
        "hello there": "greeting",
        "list the users": "user-list",
        "show my profile": "profile",
        "products please": "products",
        "release notes": "release-notes",
        "a table of scores": "table",
        "what is up": "markdown-answer",
    },
    "structured-output.yaml": {
        "user_profile": "user-profile",
        "invoice": "invoice",
        "other schema": "any-schema",
        "json_object": "any-schema",
        "plain": "plain",
    },
}


def test_chaos_covers_every_fault_and_error() -> None:
    rules = list(mock_for("chaos.yaml").rules)
    faults = {f.kind for r in rules if r.stream for f in r.stream.faults}
    assert faults == {"disconnect", "truncate", "stream_error", "malformed", "unknown_item"}
    statuses = {r.error.status for r in rules if r.error}
    assert {429, 500, 503, 529} <= statuses
    plans = [r.stream for r in rules if r.stream]
    assert any(p.first_delay_ms for p in plans) and any(p.interval_ms for p in plans)


def test_structured_outputs_are_valid() -> None:
    mock = mock_for("structured-output.yaml")
    doc = json.loads(mock.generate(REQUESTS["structured-output.yaml"][0][1]).text)
    Draft202012Validator(SCHEMA).validate(doc)
    invoice = json.loads(mock.generate(chat("invoice")).text)
    schema = yaml.safe_load((EXAMPLES / "structured-output.yaml").read_text())["rules"][1]["schema"]
    Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER).validate(invoice)
    assert all(item["sku"].startswith("SKU-") for item in invoice["items"])


# ------------------------------------------------------------------------------------ through the server


@pytest.fixture(scope="module")
def agent_server(start_server: StartServer) -> Iterator[str]:
    with start_server("examples/rules/agent-loop.yaml") as url:
        yield url


def fake_tools(name: str, args: dict[str, Any]) -> Any:
    if name == "search_flights":
        return {"flights": [{"id": f"AF{len(args['destination'])}00", "price": 420}]}
    if name == "book_flight":
        return {"flight_id": args["flight_id"], "confirmation": "XK7Q2"}
    if name == "get_weather":
        return {"temp_c": 19, "sky": "cloudy"}
    raise AssertionError(f"unexpected tool {name}")


SDK_TOOLS: list[Any] = [
    {
        "type": "function",
        "function": {
            "name": "search_flights",
            "description": "Find flights",
            "parameters": {
                "type": "object",
                "properties": {"destination": {"type": "string"}, "passengers": {"type": "integer"}},
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "book_flight",
            "description": "Book a flight",
            "parameters": {
                "type": "object",
                "properties": {"flight_id": {"type": "string"}, "passenger": {"type": "string"}},
            },
        },
    },
]


@pytest.mark.slow
def test_agent_loop_through_the_openai_sdk(agent_server: str) -> None:
    client = openai.OpenAI(base_url=agent_server + "/v1", api_key="sk-test", max_retries=0)
    messages: list[Any] = [{"role": "user", "content": "Please book a trip to Rome for me"}]
    called: list[tuple[str, dict[str, Any]]] = []
    for _ in range(10):
        reply = client.chat.completions.create(model="gpt-4o", messages=messages, tools=SDK_TOOLS)
        message = reply.choices[0].message
        if not message.tool_calls:
            break
        messages.append(message.model_dump(exclude_none=True))
        for tc in message.tool_calls:
            assert tc.type == "function"
            args = json.loads(tc.function.arguments)
            called.append((tc.function.name, args))
            result = json.dumps(fake_tools(tc.function.name, args))
            messages.append({"role": "tool", "tool_call_id": tc.id, "content": result})
    assert [name for name, _ in called] == ["search_flights", "book_flight"]
    assert called[0][1] == {"destination": "Rome", "passengers": 1}
    assert called[1][1]["flight_id"] == "AF400"  # taken from the search result
    assert reply.choices[0].finish_reason == "stop"
    assert message.content == "You are booked on flight AF400 to Rome (confirmation XK7Q2). Have a good trip!"


@pytest.mark.slow
def test_agent_loop_through_the_responses_api(agent_server: str) -> None:
    client = openai.OpenAI(base_url=agent_server + "/v1", api_key="sk-test", max_retries=0)
    tools: list[Any] = [
        {
            "type": "function",
            "name": "get_weather",
            "description": "Weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        }
    ]
    items: list[Any] = [{"role": "user", "content": "What's the weather in Oslo"}]
    for _ in range(5):
        response = client.responses.create(model="gpt-4o", input=items, tools=tools)
        calls = [o for o in response.output if o.type == "function_call"]
        if not calls:
            break
        for c in calls:
            items.append(
                {"type": "function_call", "call_id": c.call_id, "name": c.name, "arguments": c.arguments}
            )
            items.append(
                {
                    "type": "function_call_output",
                    "call_id": c.call_id,
                    "output": json.dumps(fake_tools(c.name, json.loads(c.arguments))),
                }
            )
    assert response.output_text == "It is 19°C and cloudy in Oslo right now."
    assert len(items) == 3


@pytest.fixture(scope="module")
def chaos_server(start_server: StartServer) -> Iterator[str]:
    with start_server("examples/rules/chaos.yaml") as url:
        yield url


@pytest.mark.slow
@pytest.mark.parametrize(("word", "status"), [("429", 429), ("500", 500), ("503", 503), ("529", 529)])
def test_chaos_errors_on_the_wire(chaos_server: str, word: str, status: int) -> None:
    r = httpx.post(chaos_server + "/v1/chat/completions", json=chat(f"chaos:{word}"), timeout=30)
    assert r.status_code == status
    assert "message" in r.json()["error"]
    if status == 429:
        assert (r.headers["retry-after-ms"], r.headers["x-ratelimit-remaining-requests"]) == ("2000", "0")


@pytest.mark.slow
def test_chaos_stream_faults_on_the_wire(chaos_server: str) -> None:
    def stream(word: str) -> str:
        body = b""
        try:
            with httpx.stream(
                "POST",
                chaos_server + "/v1/chat/completions",
                json=chat(f"chaos:{word}", stream=True),
                timeout=30,
            ) as r:
                for chunk in r.iter_bytes():
                    body += chunk
        except httpx.RemoteProtocolError:
            body += b"<cut>"
        return body.decode()

    cut = stream("disconnect")
    assert cut.count("data: {") == 3 and cut.endswith("<cut>")
    truncated = stream("truncate")
    assert truncated.count("data: {") == 4 and "[DONE]" not in truncated and "<cut>" not in truncated
    assert '"message":"The model is overloaded mid-stream."' in stream("stream_error")
    frames = [line[6:] for line in stream("malformed").splitlines() if line.startswith("data: {")]
    bad = []
    for i, frame in enumerate(frames):
        try:
            json.loads(frame)
        except ValueError:
            bad.append(i)
    assert bad == [1]


@pytest.mark.slow
def test_flaky_rule_through_sdk_retries(chaos_server: str) -> None:
    # forget earlier calls, so the sequence starts from its first step
    assert httpx.delete(chaos_server + "/_synthgpt/calls", timeout=10).status_code == 200
    client = openai.OpenAI(base_url=chaos_server + "/v1", api_key="sk-test", max_retries=2)
    reply = client.chat.completions.create(
        model="gpt-4o", messages=[{"role": "user", "content": "chaos:flaky"}]
    )
    assert reply.choices[0].message.content == "Third time lucky."
    calls = httpx.get(chaos_server + "/_synthgpt/calls", timeout=10).json()
    assert [c["rule"] for c in calls] == ["flaky", "flaky", "flaky"]
