"""Wire requirements closed after the first codec pass (issues 3 and 4, WIRE.md): stop sequences on every
API, custom tools refused, an embeddings rule without vectors, provider-worded error messages, the models
list, Azure paths. In process, through the ASGI app, so routes and codecs are exercised together."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from synthgpt import MockGPT, Rule, RuleSet
from synthgpt import generators as g
from synthgpt import matchers as m
from synthgpt.codec.errors import restate_default
from synthgpt.server.app import create_app
from synthgpt.tokens import count_tokens

TEXT = "Alpha beta. Gamma delta END epsilon zeta. Omega."
ANTHROPIC = {"anthropic-version": "2023-06-01", "x-api-key": "k"}
WEATHER = {
    "type": "function",
    "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {}}},
}


def fixed_mock(*extra: Rule, models: tuple[str, ...] = ()) -> MockGPT:
    """A fixed text answers everything, so a request with and without `stop` differ only by the cut."""
    return MockGPT(RuleSet([*extra, Rule("fixed", m.always(), TEXT)], models=models), seed=0)


def client_for(mock: MockGPT) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=create_app(mock)), base_url="http://synth")


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with client_for(fixed_mock()) as c:
        yield c


def sse_payloads(text: str) -> list[tuple[str | None, Any]]:
    out: list[tuple[str | None, Any]] = []
    for frame in text.split("\n\n"):
        if not frame.strip():
            continue
        event = None
        data = ""
        for line in frame.split("\n"):
            if line.startswith("event: "):
                event = line[len("event: ") :]
            elif line.startswith("data: "):
                data = line[len("data: ") :]
        out.append((event, data if data == "[DONE]" else json.loads(data)))
    return out


def chat(content: str = "hi", **extra: Any) -> dict[str, Any]:
    return {"model": "gpt-4o", "messages": [{"role": "user", "content": content}], **extra}


def messages(content: str = "hi", **extra: Any) -> dict[str, Any]:
    turn = [{"role": "user", "content": content}]
    return {"model": "claude-sonnet-4-5", "max_tokens": 256, "messages": turn, **extra}


def err(message: str, param: str | None, code: str | None, etype: str = "invalid_request_error") -> Any:
    return {"error": {"message": message, "type": etype, "param": param, "code": code}}


# ------------------------------------------------------------------------------------------ stop sequences


@pytest.mark.parametrize(
    ("stop", "content"),
    [
        ("END", "Alpha beta. Gamma delta "),
        (["zeta", "END"], "Alpha beta. Gamma delta "),
        # both end at the same character: generation stops there, before the longer one
        (["ta END", "END"], "Alpha beta. Gamma del"),
        (["nowhere"], TEXT),
        ([". G"], "Alpha beta"),
    ],
)
async def test_chat_stop_cuts_before_the_sequence(
    client: httpx.AsyncClient, stop: Any, content: str, openai_spec: Any
) -> None:
    r = await client.post("/v1/chat/completions", json=chat(stop=stop))
    assert r.status_code == 200
    body = r.json()
    openai_spec("CreateChatCompletionResponse", body)
    [choice] = body["choices"]
    assert (choice["message"]["content"], choice["finish_reason"]) == (content, "stop")
    prompt = body["usage"]["prompt_tokens"]
    assert body["usage"]["completion_tokens"] == count_tokens(content)
    assert body["usage"]["total_tokens"] == prompt + count_tokens(content)


async def test_chat_stop_stream_agrees_with_the_body(client: httpx.AsyncClient) -> None:
    full = (await client.post("/v1/chat/completions", json=chat(stop=["END"], n=2))).json()
    r = await client.post(
        "/v1/chat/completions",
        json=chat(stop=["END"], n=2, stream=True, stream_options={"include_usage": True}),
    )
    events = [data for _, data in sse_payloads(r.text)]
    assert events[-1] == "[DONE]"
    texts: dict[int, str] = {}
    finishes: dict[int, str] = {}
    for ev in events[:-2]:
        [c] = ev["choices"]
        texts[c["index"]] = texts.get(c["index"], "") + (c["delta"].get("content") or "")
        if c["finish_reason"]:
            finishes[c["index"]] = c["finish_reason"]
    assert texts == {c["index"]: c["message"]["content"] for c in full["choices"]}
    assert texts == {0: "Alpha beta. Gamma delta ", 1: "Alpha beta. Gamma delta "}
    assert finishes == {0: "stop", 1: "stop"}
    assert events[-2]["usage"] == full["usage"]
    assert full["usage"]["completion_tokens"] == 2 * count_tokens("Alpha beta. Gamma delta ")


async def test_chat_token_limit_before_the_stop_finishes_with_length(client: httpx.AsyncClient) -> None:
    body = (await client.post("/v1/chat/completions", json=chat(stop="END", max_tokens=2))).json()
    [choice] = body["choices"]
    assert choice["finish_reason"] == "length"
    assert body["usage"]["completion_tokens"] == 2
    assert "END" not in choice["message"]["content"]


async def test_chat_stop_drops_the_tool_call_after_the_text() -> None:
    said = g.reply(text=TEXT, tool_calls=[g.tool_call("get_weather", {})])
    mock = MockGPT([Rule("both", m.always(), said)], seed=0)
    async with client_for(mock) as c:
        body = (await c.post("/v1/chat/completions", json=chat(stop="END", tools=[WEATHER]))).json()
    [choice] = body["choices"]
    assert (choice["message"]["content"], choice["finish_reason"]) == ("Alpha beta. Gamma delta ", "stop")
    assert "tool_calls" not in choice["message"]


async def test_chat_stop_with_default_rules_never_shows_the_sequence() -> None:
    async with client_for(MockGPT(seed=0)) as c:
        plain = (await c.post("/v1/chat/completions", json=chat("tell me about rivers"))).json()
        word = plain["choices"][0]["message"]["content"].split()[2]
        body = (await c.post("/v1/chat/completions", json=chat("tell me about rivers", stop=[word]))).json()
    content = body["choices"][0]["message"]["content"]
    assert word not in content
    assert body["usage"]["completion_tokens"] == count_tokens(content)


async def test_anthropic_stop_sequences(client: httpx.AsyncClient, anthropic_spec: Any) -> None:
    r = await client.post("/v1/messages", json=messages(stop_sequences=["zeta", "END"]), headers=ANTHROPIC)
    assert r.status_code == 200
    body = r.json()
    anthropic_spec("Message", body)
    assert body["content"] == [{"type": "text", "text": "Alpha beta. Gamma delta "}]
    assert (body["stop_reason"], body["stop_sequence"]) == ("stop_sequence", "END")
    assert body["usage"]["output_tokens"] == count_tokens("Alpha beta. Gamma delta ")

    r = await client.post(
        "/v1/messages", json=messages(stop_sequences=["zeta", "END"], stream=True), headers=ANTHROPIC
    )
    events = sse_payloads(r.text)
    for name, data in events:
        assert name == data["type"]
        if name != "ping":  # not in the SDK's event union; both SDK lines skip it
            anthropic_spec("RawMessageStreamEvent", data)
    start = events[0][1]["message"]
    assert (start["stop_reason"], start["stop_sequence"]) == (None, None)
    text = "".join(d["delta"]["text"] for _, d in events if d["type"] == "content_block_delta")
    assert text == "Alpha beta. Gamma delta "
    [delta] = [d for _, d in events if d["type"] == "message_delta"]
    assert delta["delta"] == {"stop_reason": "stop_sequence", "stop_sequence": "END"}
    assert delta["usage"]["output_tokens"] == body["usage"]["output_tokens"]


async def test_anthropic_unmatched_stop_sequences_end_the_turn(client: httpx.AsyncClient) -> None:
    body = (
        await client.post("/v1/messages", json=messages(stop_sequences=["nowhere"]), headers=ANTHROPIC)
    ).json()
    assert (body["stop_reason"], body["stop_sequence"]) == ("end_turn", None)
    assert body["content"][0]["text"] == TEXT


@pytest.mark.parametrize(
    ("value", "message", "param"),
    [
        ("END", "stop_sequences: Input should be a valid list", "stop_sequences"),
        (["END", 3], "stop_sequences.1: Input should be a valid string", "stop_sequences.1"),
    ],
)
async def test_anthropic_bad_stop_sequences(
    client: httpx.AsyncClient, value: Any, message: str, param: str
) -> None:
    r = await client.post("/v1/messages", json=messages(stop_sequences=value), headers=ANTHROPIC)
    assert r.status_code == 400
    assert r.json()["error"] == {"type": "invalid_request_error", "message": message}
    assert param in message


@pytest.mark.parametrize("key", ["stop", "stop_sequences"])
async def test_responses_has_no_stop_parameter(client: httpx.AsyncClient, key: str) -> None:
    r = await client.post("/v1/responses", json={"model": "gpt-4o", "input": "hi", key: ["END"]})
    assert r.status_code == 400
    assert r.json() == err(f"Unknown parameter: '{key}'.", key, "unknown_parameter")


# ------------------------------------------------------------------------------------------- custom tools

CUSTOM = {"type": "custom", "custom": {"name": "sql", "description": "free-form SQL"}}


def custom_refused(param: str) -> Any:
    return err(
        f"Unsupported value: '{param}' does not support 'custom' with synthgpt. Custom (free-form) tools are "
        "not simulated; declare a function tool (type 'function') instead.",
        param,
        "unsupported_value",
    )


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        ({"tools": [WEATHER, CUSTOM]}, custom_refused("tools[1].type")),
        (
            {"tools": [WEATHER], "tool_choice": {"type": "custom", "custom": {"name": "sql"}}},
            custom_refused("tool_choice.type"),
        ),
        (
            {"tools": [{"type": "web_search"}]},
            err(
                "Invalid value: 'web_search'. Supported values are: 'function', and 'custom'.",
                "tools[0].type",
                None,
            ),
        ),
    ],
)
async def test_chat_custom_and_unknown_tools_are_a_400(
    client: httpx.AsyncClient, extra: dict[str, Any], expected: Any, openai_spec: Any
) -> None:
    r = await client.post("/v1/chat/completions", json=chat(**extra))
    assert (r.status_code, r.json()) == (400, expected)
    openai_spec("ErrorResponse", r.json())


@pytest.mark.parametrize(
    ("extra", "param"),
    [
        ({"tools": [{"type": "custom", "name": "sql"}]}, "tools[0].type"),
        ({"tool_choice": {"type": "custom", "name": "sql"}}, "tool_choice.type"),
    ],
)
async def test_responses_custom_tools_are_a_400(
    client: httpx.AsyncClient, extra: dict[str, Any], param: str
) -> None:
    r = await client.post("/v1/responses", json={"model": "gpt-4o", "input": "hi", **extra})
    assert (r.status_code, r.json()) == (400, custom_refused(param))


async def test_responses_hosted_tools_are_still_skipped(client: httpx.AsyncClient) -> None:
    r = await client.post(
        "/v1/responses", json={"model": "gpt-4o", "input": "hi", "tools": [{"type": "web_search"}]}
    )
    assert r.status_code == 200
    assert r.json()["output"][-1]["content"][0]["text"] == TEXT


# ---------------------------------------------------------------------------- embeddings without vectors


async def test_embeddings_answered_by_a_text_rule_is_a_clear_500(caplog: pytest.LogCaptureFixture) -> None:
    async with client_for(fixed_mock()) as c:
        with caplog.at_level(logging.WARNING, logger="synthgpt.server"):
            r = await c.post("/v1/embeddings", json={"model": "text-embedding-3-small", "input": ["a", "b"]})
    assert r.status_code == 500
    assert r.json() == err(
        "rule 'fixed' answered an embeddings request without one vector per input (0 for 2); "
        "use the `embeddings` generator",
        None,
        "rule_error",
        "server_error",
    )
    assert r.headers["content-type"] == "application/json"
    assert "Traceback" not in caplog.text
    assert [rec.exc_info for rec in caplog.records] == [None] * len(caplog.records)


async def test_embeddings_answered_by_an_error_rule_keeps_its_error() -> None:
    mock = fixed_mock(Rule("busy", m.api("embeddings"), error={"status": 503}))
    async with client_for(mock) as c:
        r = await c.post("/v1/embeddings", json={"model": "text-embedding-3-small", "input": "a"})
    assert r.status_code == 503
    assert r.json()["error"]["type"] == "server_error"


# ------------------------------------------------------------------------------ provider-worded messages


@pytest.mark.parametrize(
    ("status", "etype", "message"),
    [
        (529, "overloaded_error", "Overloaded"),
        (429, "rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit."),
        (500, "api_error", "Internal server error"),
        (503, "api_error", "Internal server error"),
    ],
)
async def test_anthropic_trigger_errors_are_worded_like_anthropic(
    status: int, etype: str, message: str, anthropic_spec: Any
) -> None:
    async with client_for(MockGPT(seed=0)) as c:
        r = await c.post("/v1/messages", json=messages(f"!MOCK_ERROR:{status}!"), headers=ANTHROPIC)
    assert r.status_code == status
    assert r.json() == {
        "type": "error",
        "error": {"type": etype, "message": f"{message} (synthgpt trigger !MOCK_ERROR:{status}!)"},
        "request_id": r.headers["request-id"],
    }
    anthropic_spec("ErrorResponse", r.json())


async def test_a_rule_message_is_kept_on_every_api() -> None:
    mock = fixed_mock(Rule("busy", m.always(), error={"status": 529, "message": "Try the other region."}))
    async with client_for(mock) as c:
        ant = await c.post("/v1/messages", json=messages(), headers=ANTHROPIC)
        oai = await c.post("/v1/chat/completions", json=chat())
    assert ant.json()["error"] == {"type": "overloaded_error", "message": "Try the other region."}
    assert oai.json()["error"]["message"] == "Try the other region."


def test_restate_default() -> None:
    assert restate_default(None, 529, "Overloaded") == "Overloaded"
    assert restate_default("", 529, "Overloaded") == "Overloaded"
    assert restate_default("The server had an error. (note)", 529, "Overloaded") == "Overloaded (note)"
    assert restate_default("Mine.", 529, "Overloaded") == "Mine."


# ------------------------------------------------------------------------------------------------ models


def models_mock(models: tuple[str, ...] = ()) -> MockGPT:
    named = Rule("named", m.model("my-model") & m.last_user(contains="x"), "x")
    globbed = Rule("globbed", m.model("gpt-5*") | ~m.model("not-listed"), "y")
    return fixed_mock(named, globbed, models=models)


async def ids(c: httpx.AsyncClient, path: str = "/v1/models", **headers: str) -> list[str]:
    r = await c.get(path, headers=headers)
    assert r.status_code == 200
    body = r.json()
    return [d["id"] for d in body["data"]]


async def test_models_unrestricted_are_the_rule_named_plus_the_defaults(openai_spec: Any) -> None:
    async with client_for(models_mock()) as c:
        body = (await c.get("/v1/models")).json()
        openai_spec("ListModelsResponse", body)
        assert [d["id"] for d in body["data"]] == [
            "my-model", "gpt-4o", "gpt-4o-mini", "gpt-4.1", "gpt-4.1-mini", "gpt-5", "gpt-5-mini", "o3",
            "o4-mini", "text-embedding-3-small", "text-embedding-3-large",
        ]  # fmt: skip
        assert await ids(c, **ANTHROPIC) == [
            "my-model",
            "claude-opus-4-5",
            "claude-sonnet-4-5",
            "claude-haiku-4-5",
        ]
        assert (await c.get("/v1/models/my-model")).json()["id"] == "my-model"


async def test_models_restricted_lists_only_what_is_served(openai_spec: Any, anthropic_spec: Any) -> None:
    async with client_for(models_mock(("team-model", "gpt-5*", "claude-*"))) as c:
        body = (await c.get("/v1/models")).json()
        openai_spec("ListModelsResponse", body)
        assert [d["id"] for d in body["data"]] == ["team-model", "gpt-5", "gpt-5-mini"]
        page = (await c.get("/v1/models", headers=ANTHROPIC)).json()
        for item in page["data"]:
            anthropic_spec("ModelInfo", item)
        names = [
            ("team-model", "Team Model"),
            ("claude-opus-4-5", "Claude Opus 4.5"),
            ("claude-sonnet-4-5", "Claude Sonnet 4.5"),
            ("claude-haiku-4-5", "Claude Haiku 4.5"),
        ]
        info = {"type": "model", "created_at": "2025-02-19T00:00:00Z", "lifecycle": "active"}
        assert page == {
            "data": [{**info, "id": i, "display_name": n} for i, n in names],
            "has_more": False,
            "first_id": "team-model",
            "last_id": "claude-haiku-4-5",
        }
        # my-model is named by a rule but not served: listing it would promise a model that answers 404
        assert (await c.post("/v1/chat/completions", json={**chat(), "model": "my-model"})).status_code == 404


async def test_anthropic_models_list_pages_with_its_query_parameters() -> None:
    async with client_for(models_mock()) as c:
        r = await c.get("/v1/models?limit=2&after_id=my-model", headers=ANTHROPIC)
        assert r.json()["data"][0]["id"] == "claude-opus-4-5"
        assert (r.json()["has_more"], r.json()["last_id"]) == (True, "claude-sonnet-4-5")
        bad = await c.get("/v1/models?limit=lots", headers=ANTHROPIC)
    assert bad.status_code == 400
    assert bad.json()["error"] == {
        "type": "invalid_request_error",
        "message": "limit: Input should be a valid integer",
    }


@pytest.mark.parametrize("prefix", ["/openai", "/openai/v1"])
async def test_azure_model_paths(prefix: str) -> None:
    async with client_for(models_mock()) as c:
        assert (await ids(c, prefix + "/models"))[:2] == ["my-model", "gpt-4o"]
        assert (await c.get(prefix + "/models/gpt-4o?api-version=2024-10-21")).json()["id"] == "gpt-4o"


async def test_azure_deployment_embeddings_and_responses_paths() -> None:
    async with client_for(MockGPT(seed=0)) as c:
        emb = await c.post(
            "/openai/deployments/emb-dep/embeddings?api-version=2024-10-21", json={"input": "hello"}
        )
        resp = await c.post("/openai/responses?api-version=2024-10-21", json={"model": "dep", "input": "hi"})
    assert (emb.status_code, emb.json()["model"], len(emb.json()["data"])) == (200, "emb-dep", 1)
    assert (resp.status_code, resp.json()["object"], resp.json()["status"]) == (200, "response", "completed")


# ----------------------------------------------------------------------------------- other request fields


async def test_chat_service_tier_is_checked(client: httpx.AsyncClient) -> None:
    ok = await client.post("/v1/chat/completions", json=chat(service_tier="flex"))
    assert ok.status_code == 200
    r = await client.post("/v1/chat/completions", json=chat(service_tier="turbo"))
    assert (r.status_code, r.json()) == (
        400,
        err(
            "Invalid value: 'turbo'. Supported values are: 'auto', 'default', 'flex', 'scale', 'priority', "
            "and 'fast'.",
            "service_tier",
            None,
        ),
    )


@pytest.mark.parametrize(
    ("extra", "message", "param", "code"),
    [
        (
            {"seed": "7"},
            "Invalid type for 'seed': expected an integer, but got a string instead.",
            "seed",
            None,
        ),
        (
            {"user": 3},
            "Invalid type for 'user': expected a string, but got an integer instead.",
            "user",
            None,
        ),
        (
            {"metadata": []},
            "Invalid type for 'metadata': expected an object, but got an array instead.",
            "metadata",
            None,
        ),
        (
            {"top_logprobs": 2},
            "Invalid value for 'top_logprobs': 'logprobs' must be set to true when 'top_logprobs' is used.",
            "top_logprobs",
            None,
        ),
        (
            {"parallel_tool_calls": "no"},
            "Invalid type for 'parallel_tool_calls': expected a boolean, but got a string instead.",
            "parallel_tool_calls",
            None,
        ),
        (
            {"n": 1.5},
            "Invalid type for 'n': expected an integer, but got a decimal instead.",
            "n",
            None,
        ),
    ],
)
async def test_chat_optional_fields_are_type_checked(
    client: httpx.AsyncClient, extra: dict[str, Any], message: str, param: str, code: str | None
) -> None:
    # one builder words the type errors of Chat and Responses alike ("a decimal" on both)
    r = await client.post("/v1/chat/completions", json=chat(**extra))
    assert (r.status_code, r.json()) == (400, err(message, param, code))


async def test_responses_names_a_decimal_as_chat_does(client: httpx.AsyncClient) -> None:
    r = await client.post("/v1/responses", json={"model": "m", "input": "hi", "text": {"format": {
        "type": "json_schema", "name": 1.5, "schema": {"type": "object"}}}})
    assert (r.status_code, r.json()) == (400, err(
        "Invalid type for 'text.format.name': expected a string, but got a decimal instead.",
        "text.format.name", "invalid_type",
    ))


async def test_chat_logprobs_request_answers_with_token_logprobs(
    client: httpx.AsyncClient, openai_spec: Any
) -> None:
    # Asked for, log-probabilities come one per token of the answer (tests/codec/test_logprobs.py has the
    # values); not asked for, the choice keeps `logprobs: null`.
    body = (await client.post("/v1/chat/completions", json=chat(logprobs=True, top_logprobs=2))).json()
    openai_spec("CreateChatCompletionResponse", body)
    logprobs = body["choices"][0]["logprobs"]
    assert logprobs["refusal"] is None
    assert "".join(e["token"] for e in logprobs["content"]) == body["choices"][0]["message"]["content"]
    assert all(len(e["top_logprobs"]) == 2 for e in logprobs["content"])
    plain = (await client.post("/v1/chat/completions", json=chat())).json()
    assert plain["choices"][0]["logprobs"] is None


# ------------------------------------------------------------------------------- which tools may be called

TIME = {
    "type": "function",
    "function": {"name": "get_time", "parameters": {"type": "object", "properties": {}}},
}
FLAT = [{"type": "function", "name": t["function"]["name"], "parameters": t["function"]["parameters"]}
        for t in (WEATHER, TIME)]  # fmt: skip


async def test_chat_allowed_tools_limit_the_calls() -> None:
    allowed = {"type": "allowed_tools", "allowed_tools": {"mode": "required", "tools": [
        {"type": "function", "function": {"name": "get_time"}}]}}  # fmt: skip
    async with client_for(MockGPT(seed=0)) as c:
        body = (
            await c.post("/v1/chat/completions", json=chat(tools=[WEATHER, TIME], tool_choice=allowed))
        ).json()
        bad = {
            **allowed,
            "allowed_tools": {"mode": "auto", "tools": [{"type": "function", "function": {"name": "x"}}]},
        }
        r = await c.post("/v1/chat/completions", json=chat(tools=[WEATHER, TIME], tool_choice=bad))
    [call] = body["choices"][0]["message"]["tool_calls"]
    assert (call["function"]["name"], body["choices"][0]["finish_reason"]) == ("get_time", "tool_calls")
    assert (r.status_code, r.json()) == (
        400,
        err(
            "Invalid value for 'tool_choice.allowed_tools.tools[0]': no function named 'x' is declared in "
            "'tools'.",
            "tool_choice.allowed_tools.tools[0]",
            None,
        ),
    )


async def test_responses_tool_choice_forms() -> None:
    async with client_for(MockGPT(seed=0)) as c:

        async def post(choice: Any) -> httpx.Response:
            body = {
                "model": "gpt-4o",
                "input": "hi",
                "tools": [*FLAT, {"type": "web_search"}],
                "tool_choice": choice,
            }
            return await c.post("/v1/responses", json=body)

        allowed = await post(
            {"type": "allowed_tools", "mode": "required", "tools": [{"type": "function", "name": "get_time"}]}
        )
        hosted = await post({"type": "web_search"})
        undeclared = await post({"type": "function", "name": "nope"})
    assert [(o["type"], o.get("name")) for o in allowed.json()["output"]] == [("function_call", "get_time")]
    # a hosted tool forced: the provider would run it and answer; no function of the caller's is called
    assert [o["type"] for o in hosted.json()["output"]] == ["message"]
    assert (undeclared.status_code, undeclared.json()) == (
        400,
        err(
            "Invalid value for 'tool_choice': no function named 'nope' is declared in 'tools'.",
            "tool_choice",
            "invalid_value",
        ),
    )


async def test_anthropic_named_tool_must_be_declared() -> None:
    async with client_for(MockGPT(seed=0)) as c:
        r = await c.post(
            "/v1/messages", json=messages(tool_choice={"type": "tool", "name": "nope"}), headers=ANTHROPIC
        )
    assert r.status_code == 400
    assert r.json()["error"] == {
        "type": "invalid_request_error",
        "message": "tool_choice.name: Tool 'nope' not found in tools",
    }


@pytest.mark.parametrize(("asked", "served"), [(None, "default"), ("auto", "default"), ("flex", "flex"),
                                               ("priority", "priority")])  # fmt: skip
async def test_chat_reports_the_service_tier_asked_for(
    client: httpx.AsyncClient, asked: str | None, served: str
) -> None:
    extra = {} if asked is None else {"service_tier": asked}
    body = (await client.post("/v1/chat/completions", json=chat(**extra))).json()
    assert body["service_tier"] == served
    streamed = await client.post("/v1/chat/completions", json=chat(stream=True, **extra))
    chunks = [data for _, data in sse_payloads(streamed.text) if isinstance(data, dict)]
    assert chunks and {c["service_tier"] for c in chunks} == {served}
