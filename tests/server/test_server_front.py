"""The app's front (`server.front`): API routes dispatched without Starlette's routing give the very bytes
the routed path gives, and the Host check refuses the same hosts Starlette's TrustedHostMiddleware does."""

from __future__ import annotations

import json
from typing import Any

import pytest

from synthgpt import MockGPT
from synthgpt.server import create_app
from synthgpt.server.front import Front
from synthgpt.server.hosts import LOOPBACK_HOSTS

Sent = tuple[int, list[tuple[bytes, bytes]], bytes]


async def _call(app: Any, path: str, body: bytes, host: bytes = b"127.0.0.1:8000", method: str = "POST",
                via_starlette: bool = False) -> Sent:  # fmt: skip
    scope: dict[str, Any] = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": method, "scheme": "http",
        "path": path, "raw_path": path.encode(), "root_path": "", "query_string": b"",
        "headers": [(b"host", host), (b"content-length", str(len(body)).encode()),
                    (b"content-type", b"application/json"), (b"anthropic-version", b"2023-06-01")],
        "client": ("127.0.0.1", 5000), "server": ("127.0.0.1", 8000), "state": {},
    }  # fmt: skip
    pending = [{"type": "http.request", "body": body, "more_body": False}]

    async def receive() -> dict[str, Any]:
        return pending.pop() if pending else {"type": "http.disconnect"}

    out: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        out.append(message)

    if via_starlette:  # the app's own Starlette stack, past the front
        app.middleware_stack = app.build_middleware_stack()
        assert isinstance(app.middleware_stack, Front)
        scope["app"] = app
        await app.middleware_stack.inner(scope, receive, send)
    else:
        await app(scope, receive, send)
    start = out[0]
    return start["status"], start["headers"], b"".join(m.get("body", b"") for m in out[1:])


HI = [{"role": "user", "content": "hi"}]
CHAT = {"model": "gpt-4o", "messages": [{"role": "user", "content": "Explain tides"}]}
REQUESTS = [
    ("/v1/chat/completions", json.dumps(CHAT).encode()),
    ("/v1/chat/completions", json.dumps({**CHAT, "stream": True}).encode()),
    ("/v1/chat/completions", b'{"model": "gpt-4o", "messages": '),  # 400: not JSON
    ("/v1/chat/completions", json.dumps({**CHAT, "temperature": 9}).encode()),  # 400: out of range
    ("/v1/responses", json.dumps({"model": "gpt-4o", "input": "hi", "stream": True}).encode()),
    ("/v1/messages", json.dumps({"model": "claude-sonnet-4-5", "max_tokens": 50, "messages": HI}).encode()),
    ("/v1/embeddings", json.dumps({"model": "text-embedding-3-small", "input": ["a", "b"]}).encode()),
    ("/api/chat", json.dumps({"model": "llama3", "messages": HI}).encode()),
    ("/v2/chat", json.dumps({"model": "command-r", "messages": HI}).encode()),
]


async def test_the_front_sends_what_the_routed_path_sends() -> None:
    fronted = create_app(MockGPT(seed=3), allowed_hosts=LOOPBACK_HOSTS, memo_entries=0)
    routed = create_app(MockGPT(seed=3), allowed_hosts=LOOPBACK_HOSTS, memo_entries=0)
    assert "/v1/chat/completions" in fronted.front_api and "/v2/chat" in fronted.front_api
    for path, body in REQUESTS:
        got = await _call(fronted, path, body)
        want = await _call(routed, path, body, via_starlette=True)
        assert got == want, path
    assert len(fronted.state.mock.journal) == len(routed.state.mock.journal) == 7  # two refused at decoding


async def test_a_body_over_the_limit_is_refused_on_the_front_too() -> None:
    app = create_app(MockGPT(seed=3), max_body_bytes=10)
    status, _, body = await _call(app, "/v1/chat/completions", json.dumps(CHAT).encode())
    assert status == 413 and json.loads(body)["error"]["code"] == "request_too_large"


@pytest.mark.parametrize(
    ("host", "allowed"),
    [
        (b"127.0.0.1:8000", True),
        (b"localhost", True),
        (b"api.localhost:1", True),
        (b"[::1]:8000", True),
        (b"LOCALHOST:9", True),
        (b"evil.example:8000", False),
        (b"127.0.0.1.evil.example", False),
        (b"", False),
        (b"[::1", False),
    ],
)
async def test_the_host_check_is_trustedhostmiddleware_s(host: bytes, allowed: bool) -> None:
    app = create_app(MockGPT(seed=3), allowed_hosts=LOOPBACK_HOSTS)
    for _ in range(2):  # the second time from the front's memory of the decision
        for path, method in (("/v1/chat/completions", "POST"), ("/healthz", "GET")):
            status, _, body = await _call(app, path, json.dumps(CHAT).encode(), host=host, method=method)
            if allowed:
                assert status == 200
            else:
                assert (status, body) == (400, b"Invalid host header")


async def test_an_error_escaping_the_route_is_answered_in_shape(monkeypatch: pytest.MonkeyPatch) -> None:
    import synthgpt.server.offload as offload  # where the route's worker runs pipeline.accept

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("a bug")

    monkeypatch.setattr(offload, "accept", broken)
    app = create_app(MockGPT(seed=3))
    with pytest.raises(RuntimeError, match="a bug"):  # raised again for the server, as Starlette does
        await _call(app, "/v1/chat/completions", json.dumps(CHAT).encode())
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"{}", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {"type": "http", "method": "POST", "path": "/v1/chat/completions", "root_path": "",
             "query_string": b"", "headers": [(b"content-length", b"2")], "state": {}}  # fmt: skip
    with pytest.raises(RuntimeError):
        await app(scope, receive, send)
    assert sent[0]["status"] == 500
    assert json.loads(sent[1]["body"])["error"]["type"] == "server_error"
