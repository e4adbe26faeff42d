"""The neutral request model: the forms it accepts, derived views, and the fingerprint."""

from __future__ import annotations

import pytest

from synthgpt import ModelRequest, ToolCall
from synthgpt.model import ImagePart, TextPart, ToolChoice


def test_content_parts_are_joined_and_kept() -> None:
    r = ModelRequest.from_dict(
        {
            "messages": [
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "look at"},
                        {"type": "image_url", "image_url": {"url": "https://x/cat.png"}},
                        "this",
                        {"type": "input_text", "text": "please"},
                    ],
                }
            ]
        }
    )
    msg = r.messages[0]
    assert msg.content == "look at\nthis\nplease" == r.last_user
    assert msg.parts == (
        TextPart(text="look at"),
        ImagePart(url="https://x/cat.png"),
        TextPart(text="this"),
        TextPart(text="please"),
    )


def test_openai_and_flat_tool_shapes() -> None:
    r = ModelRequest.from_dict(
        {
            "messages": [
                {"role": "user", "content": "hi"},
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {"id": "a", "type": "function", "function": {"name": "f", "arguments": '{"x":1}'}},
                        {"id": "b", "name": "g", "arguments": {"y": [1, 2]}},
                    ],
                },
                {"role": "tool", "tool_call_id": "a", "content": "done"},
            ],
            "tools": [
                {"type": "function", "function": {"name": "f", "description": "F", "parameters": None}},
                {"name": "g", "parameters": {"type": "object", "properties": {"y": {"type": "array"}}}},
            ],
            "tool_choice": {"type": "function", "function": {"name": "g"}},
        }
    )
    calls = r.messages[1].tool_calls
    assert calls == (
        ToolCall(id="a", name="f", arguments='{"x":1}'),
        ToolCall(id="b", name="g", arguments='{"y":[1,2]}'),
    )
    assert calls[1].parsed_arguments() == {"y": [1, 2]}
    assert r.messages[1].content == ""
    assert [t.name for t in r.tools] == ["f", "g"]
    assert r.tools[0].description == "F" and r.tools[0].parameters == {"type": "object", "properties": {}}
    assert r.tool_choice == ToolChoice(mode="named", name="g")
    assert r.tool("g") is r.tools[1] and r.tool("h") is None
    assert r.tool_results == (r.messages[2],) and r.ends_with_tool_result
    assert r.current_turn == r.messages[1:]
    assert r.turn == 1


def test_tool_choice_forms() -> None:
    for value, expected in [
        (None, ToolChoice()),
        ("none", ToolChoice(mode="none")),
        ("required", ToolChoice(mode="required")),
        ({"name": "x"}, ToolChoice(mode="named", name="x")),
    ]:
        assert ModelRequest.from_dict({"tool_choice": value}).tool_choice == expected


def test_headers_are_lower_cased_and_looked_up_case_insensitively() -> None:
    r = ModelRequest.from_dict({"headers": {"X-Trace": "1", "Authorization": "Bearer k"}})
    assert r.headers == (("x-trace", "1"), ("authorization", "Bearer k"))
    assert r.header("X-TRACE") == "1" and r.header("missing") is None


def test_system_joins_system_and_developer_messages() -> None:
    r = ModelRequest.from_dict(
        {
            "messages": [
                {"role": "system", "content": "a"},
                {"role": "user", "content": "q"},
                {"role": "developer", "content": "b"},
            ]
        }
    )
    assert r.system == "a\nb"


def test_fingerprint_ignores_api_stream_and_headers_but_not_content() -> None:
    base = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    fp = ModelRequest.from_dict(base).fingerprint()
    assert (
        ModelRequest.from_dict({**base, "api": "chat", "stream": True, "headers": {"a": "b"}}).fingerprint()
        == fp
    )
    assert ModelRequest.from_dict({**base, "model": "n"}).fingerprint() != fp
    assert ModelRequest.from_dict({**base, "extra": {"temperature": 0.2}}).fingerprint() != fp
    assert fp == 17450015807823825704  # pinned: fingerprints feed every seed, so they must never drift


def test_equality_ignores_the_cached_fingerprint() -> None:
    body = {"messages": [{"role": "user", "content": "x"}]}
    a, b = ModelRequest.from_dict(body), ModelRequest.from_dict(body)
    a.fingerprint()
    assert a == b


def test_summary_is_short_and_says_what_matters() -> None:
    r = ModelRequest.from_dict(
        {
            "api": "chat",
            "model": "gpt-4o",
            "messages": [{"role": "user", "content": "line one\nline two " + "x" * 80}],
            "response_schema": {"kind": "json_object"},
        }
    )
    assert r.summary() == (
        "request(api=chat, model='gpt-4o', "
        f"last_user='line one line two {'x' * 39}...', schema=json_object)"
    )


def test_from_dict_returns_a_request_unchanged() -> None:
    r = ModelRequest.from_dict({"model": "x"})
    assert ModelRequest.from_dict(r) is r


def test_tool_result_name_follows_the_call_id_then_the_results_own_name() -> None:
    r = ModelRequest.from_dict({"messages": [
        {"role": "user", "content": "go"},
        {"role": "assistant", "tool_calls": [{"id": "a", "name": "search", "arguments": {}},
                                             {"id": "b", "name": "fetch", "arguments": {}}]},
        {"role": "tool", "tool_call_id": "b", "content": "page"},
        {"role": "tool", "tool_call_id": "zz", "name": "legacy", "content": "x"},
        {"role": "tool", "tool_call_id": "zz", "content": "y"},
    ]})  # fmt: skip
    assert [r.tool_result_name(m) for m in r.tool_results] == ["fetch", "legacy", None]


def test_tool_result_name_takes_the_latest_call_of_an_id_of_the_current_turn_only() -> None:
    def call(i: str, name: str) -> dict[str, object]:
        return {"id": i, "name": name, "arguments": {}}

    r = ModelRequest.from_dict({"messages": [
        {"role": "user", "content": "first"},
        {"role": "assistant", "tool_calls": [call("a", "old_turn")]},
        {"role": "user", "content": "go"},
        {"role": "assistant", "tool_calls": [call("a", "first"), call("b", "")]},
        {"role": "assistant", "tool_calls": [call("a", "second")]},
        {"role": "tool", "tool_call_id": "a", "content": "1"},
        {"role": "tool", "tool_call_id": "b", "name": "own", "content": "2"},
    ]})  # fmt: skip
    assert [r.tool_result_name(m) for m in r.tool_results] == ["second", ""]
    # a copy with other messages names its own calls, not the original's (whose names were looked up)
    other = r.model_copy(update={"messages": (*r.messages[:3], r.messages[5])})
    assert [other.tool_result_name(m) for m in other.tool_results] == [None]
    assert [r.tool_result_name(m) for m in r.tool_results] == ["second", ""]


def _one_piece_fingerprint(req: ModelRequest) -> int:
    """The fingerprint as taken before long conversations were encoded in pieces: one dump, one encode."""
    from synthgpt.model import _NOT_FINGERPRINTED
    from synthgpt.seeding import canonical_json, derive_seed

    return derive_seed(canonical_json(req.model_dump(mode="json", exclude=_NOT_FINGERPRINTED, by_alias=True)))


def test_a_long_conversation_has_the_fingerprint_of_one_piece() -> None:
    """A conversation of thousands of messages is dumped and encoded a few hundred messages at a time (one
    pydantic call over 100,000 messages held the GIL for 0.4 s): the text hashed is the same."""
    turn = [
        {"role": "user", "content": [{"type": "text", "text": "héllo"}, {"type": "text", "text": "ü"}]},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": '{"a": 1}'}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "42"},
        {"role": "assistant", "content": "ok"},
    ]  # fmt: skip
    tool = {"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {
        "schema": {"type": "string", "format": "date"}}}, "strict": True}}  # fmt: skip
    for n in (1, 64, 65, 300, 1001):
        for tools in (1, n):
            req = ModelRequest.from_dict({
                "model": "gpt-4o", "messages": turn * n, "extra": {"temperature": 0.5, "metadata": {"z": 1}},
                "tools": [tool] * tools, "response_schema": {"name": "o", "schema": {"type": "object"}},
            })  # fmt: skip
            assert req.fingerprint() == _one_piece_fingerprint(req), (n, tools)


def test_stop_sequences_are_each_kept_once_in_order_of_first_mention() -> None:
    stops = {"stop": ["b", "a", "", 3, "b"], "stop_sequences": ["c", "a"]}
    r = ModelRequest.from_dict({"model": "x", "extra": stops})
    assert r.stop_sequences == ("b", "a", "c")
    assert ModelRequest.from_dict({"model": "x", "extra": {"stop": "END"}}).stop_sequences == ("END",)


@pytest.mark.parametrize("count", [3, 40])  # looked through, then from a table made once
def test_tool_finds_the_first_declared_tool_of_a_name(count: int) -> None:
    tools = [{"name": f"t{i}", "description": f"d{i}"} for i in range(count)]
    r = ModelRequest.from_dict({"model": "x", "tools": [*tools, {"name": "t1", "description": "again"}]})
    assert [r.tool(f"t{i}").description for i in range(count)] == [f"d{i}" for i in range(count)]  # type: ignore[union-attr]
    assert r.tool("t1").description == "d1" and r.tool("nope") is None  # type: ignore[union-attr]
    other = r.model_copy(update={"tools": (r.tools[2],)})
    assert other.tool("t1") is None and other.tool("t2") is r.tools[2]


def test_the_current_turn_is_found_once_and_a_copy_finds_its_own() -> None:
    r = ModelRequest.from_dict({"model": "x", "messages": [
        {"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}]})  # fmt: skip
    assert r.current_turn is r.current_turn and [m.content for m in r.current_turn] == ["b"]
    later = r.model_copy(update={"messages": (*r.messages, r.messages[0])})
    assert later.current_turn == () and [m.content for m in r.current_turn] == ["b"]
