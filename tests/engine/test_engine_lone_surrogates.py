"""A request built in Python holding a lone surrogate ("\\ud800": a str, but not Unicode text) is refused when
it is built, naming the field, as the server refuses a body carrying one; before, it failed later, as a
UnicodeEncodeError while its fingerprint was taken. Taking the fingerprint at construction is what checks it,
so the fingerprint itself (every answer's seed) must stay what it was."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from pydantic import ValidationError

from synthgpt import MockGPT, Rule
from synthgpt import matchers as m
from synthgpt.errors import RequestError
from synthgpt.model import ModelRequest
from synthgpt.seeding import canonical_json, derive_seed
from synthgpt.server.app import create_app

USER = [{"role": "user", "content": "hi"}]


def why(char: str, at: int) -> str:
    return (
        f"a lone surrogate ({char} at index {at}) is not valid Unicode text; write the character it is "
        "half of (a str holds code points, not UTF-16 halves), or remove it"
    )


def test_construction_is_a_validation_error_at_the_field() -> None:
    with pytest.raises(ValidationError) as info:
        ModelRequest(messages=[{"role": "user", "content": "ok \ud800"}])
    assert info.value.errors() == [
        {
            "type": "lone_surrogate",
            "loc": ("messages", 0, "content"),
            "msg": why("\\ud800", 3),
            "input": "ok \ud800",
        }
    ]
    assert info.value.title == "ModelRequest"


@pytest.mark.parametrize(
    ("request_", "param", "char", "at"),
    [
        (
            {"model": "synth-1", "messages": [{"role": "user", "content": "a\udc00"}]},
            "messages[0].content",
            "\\udc00",
            1,
        ),
        # parts: the joined `content` comes first in field order
        (
            {
                "messages": [
                    {
                        "role": "user",
                        "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "\ud800"}],
                    }
                ]
            },
            "messages[0].content",
            "\\ud800",
            2,
        ),
        (
            {
                "messages": [
                    *USER,
                    {"role": "assistant", "tool_calls": [{"id": "c", "name": "f", "arguments": '"\ud800"'}]},
                ]
            },
            "messages[1].tool_calls[0].arguments",
            "\\ud800",
            1,
        ),
        ({"messages": USER, "model": "gpt\ud800"}, "model", "\\ud800", 3),
        ({"inputs": ["fine", "x\ud800"]}, "inputs[1]", "\\ud800", 1),
        ({"messages": USER, "tools": [{"name": "f\ud800"}]}, "tools[0].name", "\\ud800", 1),
        # a key of a dict field: pydantic's JSON form would write it as U+FFFD rather than fail
        (
            {
                "messages": USER,
                "tools": [{"name": "f", "parameters": {"type": "object", "properties": {"\ud83d": {}}}}],
            },
            "tools[0].parameters.properties.\\ud83d",
            "\\ud83d",
            0,
        ),
        ({"messages": USER, "extra": {"k\ud800": 1}}, "extra.k\\ud800", "\\ud800", 1),
        ({"messages": USER, "extra": {"metadata": {"k\ud800": 1}}}, "extra.metadata.k\\ud800", "\\ud800", 1),
        ({"messages": USER, "extra": {"stop": ["ok", "\udfff"]}}, "extra.stop[1]", "\\udfff", 0),
        (
            {"messages": USER, "response_schema": {"schema": {"type": "object", "description": "\ud800"}}},
            "response_schema.schema.description",
            "\\ud800",
            0,
        ),
        # wire-only fields are not fingerprinted, and checked all the same
        ({"messages": USER, "headers": {"x-trace": "v\ud800"}}, "headers[0][1]", "\\ud800", 1),
        ({"messages": USER, "stream_options": {"\ud800": True}}, "stream_options.\\ud800", "\\ud800", 0),
        # the two halves of a pair held as two code points are two lone surrogates to UTF-8
        (
            {"model": "synth-1", "messages": [{"role": "user", "content": "\ud83d\ude00"}]},
            "messages[0].content",
            "\\ud83d",
            0,
        ),
    ],
)
def test_from_dict_and_generate_refuse_naming_the_field(
    request_: dict[str, Any], param: str, char: str, at: int
) -> None:
    expected = f"Invalid value for '{param}': {why(char, at)}"
    with pytest.raises(RequestError) as info:
        ModelRequest.from_dict(request_)
    assert (info.value.message, info.value.param) == (expected, param)
    mock = MockGPT(seed=0)
    with pytest.raises(RequestError) as info:
        mock.generate(request_)
    assert (info.value.message, info.value.param) == (expected, param)
    assert mock.records == []  # refused before any rule answered


async def test_agenerate_and_a_matcher_refuse_alike() -> None:
    bad = {"model": "synth-1", "messages": [{"role": "user", "content": "\ud800"}]}
    with pytest.raises(RequestError, match=r"^Invalid value for 'messages\[0\]\.content': a lone surrogate"):
        await MockGPT(seed=0).agenerate(bad)
    with pytest.raises(RequestError, match=r"^Invalid value for 'messages\[0\]\.content': a lone surrogate"):
        m.last_user(contains="x")(bad)


def test_valid_text_near_the_checks_is_answered() -> None:
    mock = MockGPT([Rule("echo", m.always(), "ok")], seed=0)
    for text in ("\U0001f600", "\ufffd", "a\ufffdb", "\ue000"):  # a real pair, U+FFFD, a private-use char
        out = mock.generate(
            {"model": "synth-1", "messages": [{"role": "user", "content": text}], "extra": {"k\ufffd": text}}
        )
        assert out.text == "ok"
    assert len(mock.records) == 4


@pytest.mark.parametrize(
    ("data", "fingerprint"),
    [
        # values taken before the check moved into construction: every answer's seed stays the same
        (
            {"messages": USER, "model": "gpt-4o", "extra": {"temperature": 0.5}, "headers": {"x-a": "1"}},
            17388743312198072596,
        ),
        (
            {
                "messages": USER,
                "tools": [{"name": "f", "parameters": {"type": "object", "properties": {"k\ufffd": {}}}}],
                "extra": {"k\ufffd": "a\ufffdb"},
            },
            12143716486411076754,
        ),
    ],
)
def test_the_fingerprint_is_unchanged_and_taken_at_construction(
    data: dict[str, Any], fingerprint: int
) -> None:
    req = ModelRequest.from_dict(data)
    assert req._fingerprint == fingerprint
    body = req.model_dump(mode="json", exclude={"api", "stream", "stream_options", "headers"}, by_alias=True)
    assert req.fingerprint() == derive_seed(canonical_json(body)) == fingerprint
    assert ModelRequest.from_dict(data) == req


def test_a_copy_with_other_fields_gets_its_own_fingerprint() -> None:
    req = ModelRequest.from_dict({"messages": USER})
    other = {"model": "synth-1", "messages": [{"role": "user", "content": "bye"}]}
    changed = req.model_copy(update={"messages": ModelRequest.from_dict(other).messages})
    assert changed.fingerprint() == ModelRequest.from_dict(other).fingerprint() != req.fingerprint()
    # only wire-only fields changed: the fingerprint is the same and stays cached
    wire = req.model_copy(update={"stream": True, "headers": (("x-a", "1"),)})
    assert wire._fingerprint == req.fingerprint()


async def test_the_server_refuses_the_same_text_sent_as_an_escape() -> None:
    app = create_app(MockGPT(seed=0))
    body = b'{"model":"gpt-4o","messages":[{"role":"user","content":"ok \\ud800"}]}'
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://synth") as c:
        r = await c.post("/v1/chat/completions", content=body, headers={"content-type": "application/json"})
    assert r.status_code == 400
    assert r.json()["error"]["message"] == (
        "We could not parse the JSON body of your request: a lone surrogate escape at line 1 column 60 is "
        "not valid Unicode text. Escape both halves of a surrogate pair, or send the character as UTF-8."
    )
