"""The Starlette app in process (httpx ASGI transport): routes, errors in the provider shape, headers,
models, the journal routes."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from starlette.testclient import TestClient

from synthgpt import MockGPT, Rule, RuleSet
from synthgpt import generators as g
from synthgpt import matchers as m
from synthgpt.codec.sse import StreamAborted
from synthgpt.server import create_app

HI = {"model": "gpt-4o", "messages": [{"role": "user", "content": "Tell me about tides"}]}


def client_for(mock: MockGPT | None = None, **kwargs: Any) -> httpx.AsyncClient:
    app = create_app(mock or MockGPT(seed=0), **kwargs)
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://synth")


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with client_for() as c:
        yield c


def err(
    message: str, param: str | None = None, code: str | None = None, type_: str = "invalid_request_error"
) -> dict[str, Any]:
    return {"error": {"message": message, "type": type_, "param": param, "code": code}}


async def test_chat_completion(client: httpx.AsyncClient) -> None:
    r = await client.post("/v1/chat/completions", json=HI)
    assert r.status_code == 200
    assert r.headers["content-type"] == "application/json"
    assert r.headers["openai-version"] == "2020-10-01"
    assert r.headers["x-request-id"].startswith("req_") and len(r.headers["x-request-id"]) == 36
    assert int(r.headers["openai-processing-ms"]) >= 40
    assert r.json()["object"] == "chat.completion"


async def test_same_request_same_bytes_and_headers(client: httpx.AsyncClient) -> None:
    a = await client.post("/v1/chat/completions", json=HI)
    b = await client.post("/v1/chat/completions", content=json.dumps(HI, indent=2))
    other = await client.post("/v1/chat/completions", json={**HI, "model": "gpt-4.1"})
    assert a.content == b.content
    assert a.headers["x-request-id"] == b.headers["x-request-id"] != other.headers["x-request-id"]
    assert a.headers["openai-processing-ms"] == b.headers["openai-processing-ms"]


async def test_stream_response(client: httpx.AsyncClient) -> None:
    r = await client.post("/v1/chat/completions", json={**HI, "stream": True})
    assert r.status_code == 200
    assert r.headers["content-type"] == "text/event-stream; charset=utf-8"
    assert r.headers["cache-control"] == "no-cache"
    assert r.text.endswith("data: [DONE]\n\n")
    assert (
        r.headers["x-request-id"]
        == (await client.post("/v1/chat/completions", json=HI)).headers["x-request-id"]
    )


async def test_azure_deployment_route(client: httpx.AsyncClient) -> None:
    body = {"messages": HI["messages"]}
    r = await client.post(
        "/openai/deployments/my-gpt/chat/completions?api-version=2024-10-21",
        json=body,
        headers={"api-key": "k"},
    )
    assert r.status_code == 200
    assert r.json()["model"] == "my-gpt"


BAD_INPUTS = [
    (
        b"{not json",
        err(
            "We could not parse the JSON body of your request (Expecting property name enclosed in "
            "double quotes: line 1 column 2 (char 1)). The API expects a JSON object; check that the "
            "body is valid JSON and sent with content-type application/json."
        ),
    ),
    (
        b"",
        err(
            "We could not parse the JSON body of your request (Expecting value: line 1 column 1 (char 0)). "
            "The API expects a JSON object; check that the body is valid JSON and sent with content-type "
            "application/json."
        ),
    ),
    (b"[1]", err("The request body must be a JSON object, but got an array instead.")),
    (
        b'{"messages": [{"role": "user", "content": "x"}]}',
        err("You must provide a model parameter.", "model"),
    ),
    (b'{"model": "m"}', err("Missing required parameter: 'messages'.", "messages")),
    (
        b'{"model": "m", "messages": []}',
        err(
            "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty "
            "array "
            "instead.",
            "messages",
        ),
    ),
    (
        b'{"model": "m", "messages": [{"role": "robot", "content": "x"}]}',
        err(
            "Invalid value: 'robot'. Supported values are: 'system', 'assistant', 'user', 'function', "
            "'tool', and "
            "'developer'.",
            "messages[0].role",
        ),
    ),
    (
        b'{"model": 1, "messages": [{"role": "user", "content": "x"}]}',
        err("Invalid type for 'model': expected a string, but got an integer instead.", "model"),
    ),
    (
        b'{"model": "m", "messages": [{"role": "user", "content": "x"}], "n": "2"}',
        err("Invalid type for 'n': expected an integer, but got a string instead.", "n"),
    ),
    (
        b'{"model": "m", "messages": [{"role": "user", "content": "x !MOCK_NOPE!"}]}',
        err(
            "Unknown trigger !MOCK_NOPE!. Triggers: !MOCK_TOOL_CALL!, "
            "!MOCK_PARALLEL_TOOL_CALLS!, !MOCK_ERROR!, !MOCK_INCOMPLETE!, !MOCK_TRUNCATE!, "
            "!MOCK_DISCONNECT!, "
            "!MOCK_STREAM_ERROR!, !MOCK_MALFORMED!, !MOCK_UNKNOWN_ITEM!, !MOCK_DELAY!, !MOCK_SLOW!.",
            "messages",
        ),
    ),
]


@pytest.mark.parametrize(("raw", "expected"), BAD_INPUTS)
async def test_bad_input_is_a_400_in_openai_shape(
    client: httpx.AsyncClient, raw: bytes, expected: Any, openai_spec: Any
) -> None:
    r = await client.post("/v1/chat/completions", content=raw, headers={"content-type": "application/json"})
    assert (r.status_code, r.json()) == (400, expected)
    assert r.headers["x-request-id"].startswith("req_")
    openai_spec("ErrorResponse", r.json())


async def test_unknown_path_is_a_json_404(client: httpx.AsyncClient) -> None:
    r = await client.post("/v1/nothing/here", json=HI)
    assert (r.status_code, r.json()) == (
        404,
        err("Unknown request URL: POST /v1/nothing/here. Check the URL and method.", code="unknown_url"),
    )


async def test_wrong_method_is_a_json_405(client: httpx.AsyncClient) -> None:
    r = await client.get("/v1/chat/completions")
    assert (r.status_code, r.json()) == (
        405,
        err("Method GET is not allowed for /v1/chat/completions. Allowed: POST.", code="method_not_allowed"),
    )
    assert r.headers["allow"] == "POST"


async def test_body_over_the_limit_is_a_413() -> None:
    async with client_for(max_body_bytes=100) as c:
        big = json.dumps({"model": "m", "messages": [{"role": "user", "content": "x" * 200}]}).encode()
        assert len(big) == 261
        r = await c.post("/v1/chat/completions", content=big)
        expected = err(
            "Request body too large: 261 bytes exceeds the limit of 100 bytes.", code="request_too_large"
        )
        assert (r.status_code, r.json()) == (413, expected)

        async def chunked() -> AsyncIterator[bytes]:  # no content-length: counted while reading
            for _ in range(5):
                yield b"x" * 30

        r = await c.post("/v1/chat/completions", content=chunked())
        assert (r.status_code, r.json()) == (
            413,
            err(
                "Request body too large: 120 bytes exceeds the limit of 100 bytes.", code="request_too_large"
            ),
        )


async def test_429_carries_retry_and_rate_limit_headers(client: httpx.AsyncClient) -> None:
    r = await client.post(
        "/v1/chat/completions", json={**HI, "messages": [{"role": "user", "content": "!MOCK_ERROR:429!"}]}
    )
    assert r.status_code == 429
    assert r.json() == err(
        "Rate limit reached for requests. Please try again shortly. (synthgpt trigger !MOCK_ERROR:429!)",
        type_="requests",
        code="rate_limit_exceeded",
    )
    headers = {k: v for k, v in r.headers.items() if k.startswith(("retry-after", "x-ratelimit"))}
    assert headers == {
        "retry-after": "1",
        "retry-after-ms": "10",
        "x-ratelimit-limit-requests": "500",
        "x-ratelimit-remaining-requests": "0",
        "x-ratelimit-reset-requests": "10ms",
        "x-ratelimit-limit-tokens": "30000",
        "x-ratelimit-remaining-tokens": "0",
        "x-ratelimit-reset-tokens": "10ms",
    }


async def test_rule_errors_use_the_spec_headers() -> None:
    mock = MockGPT(rules=[Rule("e", m.always(), g.error(503, "down", headers={"x-should-retry": "false"}))])
    async with client_for(mock) as c:
        r = await c.post("/v1/chat/completions", json=HI)
    assert (r.status_code, r.json()) == (503, err("down", type_="server_error"))
    assert r.headers["x-should-retry"] == "false"
    assert "retry-after" not in r.headers


async def test_no_rule_matched_is_a_clear_400() -> None:
    mock = MockGPT(rules=[Rule("only-x", m.model("x"), "hi")])
    async with client_for(mock) as c:
        r = await c.post("/v1/chat/completions", json=HI)
    assert r.status_code == 400
    body = r.json()["error"]
    assert (body["type"], body["code"], body["param"]) == ("invalid_request_error", "no_rule_matched", None)
    assert body["message"] == (
        "no rule matched request(api=chat, model='gpt-4o', last_user='Tell me about tides')\n"
        "rules tried, in order:\n  - only-x: model('x')"
    )


async def test_a_failing_rule_is_a_500_naming_it() -> None:
    mock = MockGPT(rules=[Rule("broken", m.always(), g.integer().map(lambda v: 1 / 0))])
    async with client_for(mock) as c:
        r = await c.post("/v1/chat/completions", json=HI)
    assert r.status_code == 500
    assert r.json() == err(
        "The rule 'broken' failed to draw an answer (draw_failed); the server's log has the details.",
        type_="server_error",
        code="draw_failed",
    )


async def test_unexpected_errors_are_a_500_without_details(caplog: pytest.LogCaptureFixture) -> None:
    mock = MockGPT(seed=0)

    def explode(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("secret internals")

    mock.resolve = explode  # type: ignore[method-assign]
    async with client_for(mock) as c:
        r = await c.post("/v1/chat/completions", json=HI)
    assert (r.status_code, r.json()) == (
        500,
        err("The server had an error while processing your request. Sorry about that!", type_="server_error"),
    )
    assert "secret" not in r.text
    assert "RuntimeError: secret internals" in caplog.text


async def test_disconnect_fault_aborts_the_response(client: httpx.AsyncClient) -> None:
    body = {**HI, "stream": True, "messages": [{"role": "user", "content": "hi !MOCK_DISCONNECT:2!"}]}
    with pytest.raises(StreamAborted):
        await client.post("/v1/chat/completions", json=body)


async def test_first_delay_holds_back_every_kind_of_answer(
    monkeypatch: pytest.MonkeyPatch, client: httpx.AsyncClient
) -> None:
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    monkeypatch.setattr(asyncio, "sleep", sleep)
    delayed = {**HI, "messages": [{"role": "user", "content": "hi !MOCK_DELAY:250!"}]}
    r = await client.post("/v1/chat/completions", json=delayed)
    assert r.status_code == 200
    errored = {**HI, "messages": [{"role": "user", "content": "hi !MOCK_DELAY:120! !MOCK_ERROR:500!"}]}
    assert (await client.post("/v1/chat/completions", json=errored)).status_code == 500
    streamed = {
        **HI,
        "stream": True,
        "messages": [{"role": "user", "content": "hi !MOCK_DELAY:70! !MOCK_SLOW:3!"}],
    }
    assert (await client.post("/v1/chat/completions", json=streamed)).text.endswith("data: [DONE]\n\n")
    assert slept == [0.25, 0.12, 0.07]  # a stream's first delay too (its intervals are the SSE layer's)


# --------------------------------------------------------------------------------------------------- models


async def test_models_list_and_retrieve(client: httpx.AsyncClient, openai_spec: Any) -> None:
    r = await client.get("/v1/models")
    body = r.json()
    openai_spec("ListModelsResponse", body)
    assert [m["id"] for m in body["data"]][:2] == ["gpt-4o", "gpt-4o-mini"]
    one = (await client.get("/v1/models/gpt-4o")).json()
    assert one == {"id": "gpt-4o", "object": "model", "created": 1704067200, "owned_by": "synthgpt"}
    openai_spec("Model", one)
    missing = await client.get("/v1/models/gpt-nope")
    assert (missing.status_code, missing.json()) == (
        404,
        err("The model `gpt-nope` does not exist or you do not have access to it.", code="model_not_found"),
    )


async def test_rules_that_name_models_restrict_them() -> None:
    rules = RuleSet([Rule("any", m.always(), "hello")], models=["gpt-test", "synth-*"])
    async with client_for(MockGPT(rules)) as c:
        assert [x["id"] for x in (await c.get("/v1/models")).json()["data"]] == ["gpt-test"]
        assert (await c.get("/v1/models/synth-large")).status_code == 200
        assert (await c.post("/v1/chat/completions", json={**HI, "model": "synth-2"})).status_code == 200
        r = await c.post("/v1/chat/completions", json=HI)
        assert (r.status_code, r.json()) == (
            404,
            err("The model `gpt-4o` does not exist or you do not have access to it.", code="model_not_found"),
        )


# -------------------------------------------------------------------------------------------- admin, state


async def test_health_and_journal_routes(client: httpx.AsyncClient) -> None:
    assert (await client.get("/healthz")).json() == {"status": "ok"}
    await client.post("/v1/chat/completions", json=HI, headers={"x-stainless-retry-count": "0"})
    await client.post(
        "/v1/chat/completions", json={**HI, "messages": [{"role": "user", "content": "!MOCK_ERROR:429!"}]}
    )
    calls = (await client.get("/_synthgpt/calls")).json()
    assert [c["index"] for c in calls] == [0, 1]
    first = calls[0]
    assert (first["rule"], first["api"], first["model"], first["at"]) == (
        "default",
        "chat",
        "gpt-4o",
        1767225600.0,
    )
    assert first["request"]["last_user"] == "Tell me about tides"
    assert first["request"]["retry_count"] == "0"
    assert first["output"]["finish_reason"] == "stop" and first["output"]["text"]
    assert calls[1]["output"]["error"]["status"] == 429
    assert (await client.delete("/_synthgpt/calls")).json() == {"deleted": 2}
    assert (await client.get("/_synthgpt/calls")).json() == []


async def test_the_engine_is_read_per_request() -> None:
    app = create_app(MockGPT(rules=[Rule("a", m.always(), "first")]))
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://synth") as c:
        assert (await c.post("/v1/chat/completions", json=HI)).json()["choices"][0]["message"][
            "content"
        ] == "first"
        app.state.mock.rules = RuleSet([Rule("b", m.always(), "second")])
        assert (await c.post("/v1/chat/completions", json=HI)).json()["choices"][0]["message"][
            "content"
        ] == "second"


def test_lifespan_hooks_run_around_serving() -> None:
    events: list[str] = []
    app = create_app(
        MockGPT(), on_startup=[lambda: events.append("start")], on_shutdown=[lambda: events.append("stop")]
    )
    with TestClient(app) as c:
        assert c.get("/healthz").status_code == 200
        assert events == ["start"]
    assert events == ["start", "stop"]


def test_max_body_bytes_must_be_positive() -> None:
    with pytest.raises(ValueError, match="max_body_bytes must be >= 1, got 0"):
        create_app(MockGPT(), max_body_bytes=0)


def test_app_state_reads_as_attributes_and_as_a_mapping() -> None:
    """`app.state` keeps Starlette's State behaviour (attributes, items, iteration, a missing name is an
    AttributeError) while its attributes are plain ones (read on every request)."""
    from synthgpt.server.app import AppState

    state = AppState()
    state.mock = "m"
    state["memo"] = None
    assert (state.mock, state["mock"], state.memo) == ("m", "m", None)
    assert (sorted(state), len(state)) == (["memo", "mock"], 2)
    assert vars(state)["mock"] == "m"  # found without State.__getattr__
    del state.mock
    del state["memo"]
    assert len(state) == 0 and getattr(state, "mock", "gone") == "gone"
    with pytest.raises(AttributeError):
        _ = state.memo
