"""`render` and the server answer through one pipeline: the same bytes and the same statuses, errors too."""

from __future__ import annotations

import json
from typing import Any

import httpx2
import pytest

from synthgpt import MockGPT, Rule, RuleSet
from synthgpt import generators as g
from synthgpt import matchers as m
from synthgpt.render import RenderApi, render_requests
from synthgpt.rules.defaults import default_rules
from synthgpt.testing import InProcessTransport2

PATHS: dict[RenderApi, str] = {
    "chat": "/v1/chat/completions",
    "responses": "/v1/responses",
    "messages": "/v1/messages",
}


def _rules() -> RuleSet:
    """Triggers, one content rule and nothing else: most questions match no rule."""
    triggers = default_rules()["triggers"]
    weather = Rule("weather", m.last_user(contains="weather"), g.reply("Sunny in Oslo."))
    return RuleSet([triggers, weather], models=("gpt-4o*", "claude-*"))


def _ask(api: RenderApi, text: str, **extra: Any) -> dict[str, Any]:
    if api == "chat":
        return {"model": "gpt-4o", "messages": [{"role": "user", "content": text}], **extra}
    if api == "responses":
        return {"model": "gpt-4o", "input": text, **extra}
    return {"model": "claude-sonnet-4-5", "max_tokens": 64, "messages": [{"role": "user", "content": text}],
            **extra}  # fmt: skip


def _lines(api: RenderApi) -> list[str]:
    asks = [
        _ask(api, "what's the weather?"),
        _ask(api, "what's the weather?", stream=True),
        _ask(api, "tell me a joke"),  # no rule matches
        _ask(api, "!MOCK_ERROR:429!"),  # a rule's error answer, with retry headers
        _ask(api, "!MOCK_ERROR:503!", stream=True),
        _ask(api, "weather !MOCK_STREAM_ERROR:2!", stream=True),
        _ask(api, "weather !MOCK_TRUNCATE:1!", stream=True),
        _ask(api, "!MOCK_NOPE!"),  # a misspelt trigger: the request's fault
        _ask(api, "weather", model="mistral-large"),  # a model the rules do not serve
        {"model": "gpt-4o"},  # the API rejects the body
        [1, 2],
    ]
    return [json.dumps(a) for a in asks] + ["{not json", '{"model": "gpt-4o", "messages": ']


def _pretty(value: Any) -> bytes:
    return (json.dumps(value, indent=2, ensure_ascii=False) + "\n").encode()


@pytest.mark.parametrize("api", ["chat", "responses", "messages"])
def test_render_gives_the_servers_bytes_and_statuses(api: RenderApi) -> None:
    lines = _lines(api)
    rendered = render_requests(MockGPT(_rules(), seed=7), lines, api)
    served_mock = MockGPT(_rules(), seed=7)
    statuses = []
    with httpx2.Client(transport=InProcessTransport2(served_mock), base_url="http://t") as client:
        for r, line in zip(rendered, lines, strict=True):
            served = client.post(PATHS[api], content=line, headers={"content-type": "application/json"})
            statuses.append(served.status_code)
            assert r.status == served.status_code, line
            if r.file.endswith(".sse"):
                assert r.data == served.content, line
            else:  # fixture files are the same JSON, indented for people to read
                assert r.data == _pretty(served.json()), line
            for name, value in r.headers.items():
                assert served.headers[name] == value, line
            assert (r.error is None) == (served.status_code < 400 or r.rule is not None), line
    assert statuses == [200, 200, 400, 429, 503, 200, 200, 400, 404, 400, 400, 400, 400]
    assert len(served_mock.journal) == len(rendered) - 7  # the same calls reached the engine


def test_an_engine_that_fails_is_the_same_hidden_500_in_render_and_the_server() -> None:
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("secret internals")

    line = json.dumps(_ask("chat", "what's the weather?"))
    rendering, serving = MockGPT(_rules(), seed=7), MockGPT(_rules(), seed=7)
    rendering.resolve = broken  # type: ignore[method-assign]
    serving.resolve = broken  # type: ignore[method-assign]
    (rendered,) = render_requests(rendering, [line], "chat")
    with httpx2.Client(transport=InProcessTransport2(serving), base_url="http://t") as client:
        served = client.post(PATHS["chat"], content=line, headers={"content-type": "application/json"})
    assert (rendered.status, served.status_code) == (500, 500)
    assert rendered.data == _pretty(served.json()) and "secret" not in served.text
    assert rendered.error == "line 1: RuntimeError: secret internals"  # the fixture's report says why


@pytest.mark.parametrize("api", ["chat", "responses", "messages"])
@pytest.mark.parametrize("fault", ["TRUNCATE", "DISCONNECT"])
def test_a_cut_json_answer_is_the_servers_bytes(api: RenderApi, fault: str) -> None:
    """A non-streaming `!MOCK_TRUNCATE` (or `!MOCK_DISCONNECT`) answer is cut by the server to the first
    half of its bytes: the fixture holds exactly those bytes (not parseable JSON), not the whole body."""
    line = json.dumps(_ask(api, f"weather !MOCK_{fault}:1!"))
    (rendered,) = render_requests(MockGPT(_rules(), seed=7), [line], api)
    served = b""
    transport = InProcessTransport2(MockGPT(_rules(), seed=7))
    json_type = {"content-type": "application/json"}
    with httpx2.Client(transport=transport, base_url="http://t") as client, \
            client.stream("POST", PATHS[api], content=line, headers=json_type) as r:  # fmt: skip
        try:
            for chunk in r.iter_raw():
                served += chunk
        except httpx2.RemoteProtocolError:
            assert fault == "DISCONNECT"  # announced the whole length, dropped after the half
    assert (rendered.status, rendered.file.endswith(".json")) == (200, True)
    assert rendered.data == served and len(served) > 10
    with pytest.raises(ValueError):
        json.loads(served)
    assert rendered.manifest_entry()["fault"] == fault.lower()
