"""The Chat Completions decoder keeps each message and tool it decoded by its JSON text (`codec.interned`),
and the fingerprint and the token count keep what they wrote of those models: an agent loop's next turn takes
them instead of deciding them again. Proof that a request decodes, hashes and counts alike whether its
parts were seen before or not, and that what a part's decoding reads besides its text is in its key."""

from __future__ import annotations

import json
from typing import Any

import pytest

from synthgpt import MockGPT
from synthgpt.codec import ChatCodec, GeminiCodec, MessagesCodec, ResponsesCodec, interned
from synthgpt.codec.anthropic import request as messages_request
from synthgpt.codec.envelope import decode_request
from synthgpt.codec.headers import KeptHeaders
from synthgpt.codec.interned import Interned, json_key
from synthgpt.codec.openai_chat import request as chat_request
from synthgpt.codec.openai_responses import request as responses_request
from synthgpt.engine import budget
from synthgpt.errors import RequestError
from synthgpt.model import ModelRequest, _fingerprinted_fields
from synthgpt.pipeline import answer
from tests.codec import decode_corpus
from tests.codec.test_decode_equivalence import _same_types

HEADERS = KeptHeaders((("content-type", "application/json"),))
CHAT = ChatCodec()


MESSAGES = MessagesCodec()


def _forget() -> None:
    interned.forget()
    assert not chat_request._MESSAGES and not messages_request._TOOLS and not responses_request._ITEMS


def _decode(body: dict[str, Any], codec: Any = CHAT) -> ModelRequest:
    return decode_request(codec, json.dumps(body).encode(), HEADERS, {})[0]


def _outcome(codec: Any, params: dict[str, str], raw: bytes) -> ModelRequest | str:
    try:
        return decode_request(codec, raw, HEADERS, params)[0]
    except RequestError as exc:
        return f"{exc.param}: {exc.message}"


@pytest.mark.parametrize("api", ["chat", "messages", "responses"])
def test_every_body_of_the_corpus_decodes_alike_seen_before_or_not(api: str) -> None:
    """Each body decoded with nothing kept, then again once the whole corpus has been decoded (its parts
    kept): the same request, type for type, fields set, fingerprint and prompt tokens, or the same refusal."""
    codecs = decode_corpus._codecs()
    bodies = [(route, raw) for route, raw in decode_corpus.corpus() if codecs[route][0].api == api]
    cold: list[ModelRequest | str] = []
    for route, raw in bodies:
        _forget()
        cold.append(_outcome(*codecs[route], raw))
    for route, raw in bodies:  # fill the caches
        _outcome(*codecs[route], raw)
    accepted = 0
    for (route, raw), first in zip(bodies, cold, strict=True):
        again = _outcome(*codecs[route], raw)
        if isinstance(first, str):
            assert again == first, (route, raw[:200])
            continue
        accepted += 1
        assert isinstance(again, ModelRequest) and again == first, (route, raw[:200])
        _same_types(again, first, route)
        assert again.model_fields_set == first.model_fields_set
        assert again.fingerprint() == first.fingerprint()
        assert _fingerprinted_fields(again) in (None, again._fingerprinted_json())
        assert budget.prompt_tokens(again) == budget.prompt_tokens(first)
    assert accepted > {"chat": 300, "messages": 150, "responses": 150}[api]


def _agent(turns: int, user: str = "Plan a weekend in Lisbon") -> dict[str, Any]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": "Use the tools."},
                                      {"role": "user", "content": user}]  # fmt: skip
    for t in range(turns):
        function = {"name": "search", "arguments": f'{{"t":{t}}}'}
        call = {"id": f"call_{t}", "type": "function", "function": function}
        messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        messages.append({"role": "tool", "tool_call_id": f"call_{t}", "content": f"result {t}"})
    tool = {"type": "function", "function": {"name": "search", "description": "Search the web",
                                             "parameters": {"type": "object", "properties": {
                                                 "t": {"type": "number", "minimum": 1e-7}}}}}  # fmt: skip
    return {"model": "gpt-4o", "messages": messages, "tools": [tool]}


def test_an_agent_loops_next_turn_takes_the_messages_and_tools_it_decoded() -> None:
    _forget()
    turn_5, turn_6 = _decode(_agent(5)), _decode(_agent(6))
    assert all(a is b for a, b in zip(turn_5.messages, turn_6.messages, strict=False))
    assert turn_6.tools[0] is turn_5.tools[0]
    assert turn_6.messages[-1].name == "search"  # named after the call it answers
    _forget()
    fresh = _decode(_agent(6))
    assert fresh == turn_6 and fresh.messages[0] is not turn_6.messages[0]
    assert fresh.fingerprint() == turn_6.fingerprint()
    assert _fingerprinted_fields(turn_6) == turn_6._fingerprinted_json()  # tiny floats in repr's form
    assert budget.prompt_tokens(fresh) == budget.prompt_tokens(turn_6)


def test_a_tool_result_is_named_by_the_calls_before_it_each_time() -> None:
    """The same result text answers a call of `search` in one request and of `fetch` in the next."""
    _forget()
    result = {"role": "tool", "tool_call_id": "c1", "content": "42"}

    def asked(name: str | None) -> ModelRequest:
        messages: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
        if name is not None:
            call = {"id": "c1", "type": "function", "function": {"name": name, "arguments": "{}"}}
            messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        return _decode({"model": "gpt-4o", "messages": [*messages, result]})

    assert asked("search").messages[-1].name == "search"
    assert asked("fetch").messages[-1].name == "fetch"
    assert asked(None).messages[-1].name is None
    assert asked("search").messages[-1] is asked("search").messages[-1]


def test_a_message_seen_before_is_still_refused_where_its_request_refuses_it() -> None:
    """With the deprecated `functions`, an assistant message may not hold `tool_calls`."""
    _forget()
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    said = {"role": "assistant", "content": None, "tool_calls": [call]}
    body = {"model": "gpt-4o", "messages": [{"role": "user", "content": "go"}, said]}
    assert _decode(body).messages[1].tool_calls[0].name == "f"
    with pytest.raises(RequestError) as refused:
        _decode({**body, "functions": [{"name": "f", "parameters": {"type": "object", "properties": {}}}]})
    assert refused.value.param == "messages.[1].tool_calls"


def test_a_refused_message_is_refused_at_its_own_place_each_time() -> None:
    _forget()
    bad = {"role": "tool", "content": "no id"}
    for at in (1, 2, 1):
        messages = [{"role": "user", "content": "go"}] * at + [bad]
        with pytest.raises(RequestError) as refused:
            _decode({"model": "gpt-4o", "messages": messages})
        assert refused.value.param == f"messages[{at}].tool_call_id"
    assert chat_request._MESSAGES.get((json_key(bad), False, None)) is None  # the refused one is not kept
    assert chat_request._MESSAGES.get((json_key(messages[0]), False, None)) is not None


def test_the_kept_parts_are_bounded_by_what_they_are_reckoned_to_hold() -> None:
    kept: Interned[int] = Interned(100, entry_bytes=4, per_char=1)
    for i in range(30):
        kept.put(f"key {i}".encode(), i, 6)  # reckoned 10 bytes each
        assert kept.nbytes <= 100
    assert len(kept) == 10 and kept.get(b"key 29") == 29 and kept.get(b"key 19") is None
    kept.put(b"huge", 1, 97)  # larger than the whole bound: not kept, nothing dropped for it
    assert kept.get(b"huge") is None and len(kept) == 10
    assert json_key({"a": 1}) == b'{"a":1}' and json_key({"a": 1}) is not json_key({"a": 1})


def test_a_value_orjson_does_not_write_has_no_key_and_decodes_each_time() -> None:
    assert json_key({"a": 2**70}) is None and json_key({"a": [1, "b"]}) == b'{"a":[1,"b"]}'
    _forget()
    body = _agent(1)
    body["messages"][2]["tool_calls"][0]["extra"] = 2**70  # (a field the decoder does not read)
    first, second = _decode(body), _decode(body)
    assert first == second and first.messages[2] is not second.messages[2]


def test_a_served_loop_is_answered_alike_with_its_parts_kept_or_not() -> None:
    """Through the engine: a loop's turns answered with the parts kept, or forgotten before each turn."""

    def answers(forget: bool) -> list[bytes]:
        mock, out = MockGPT(seed=9), []
        for turn in range(1, 6):
            if forget:
                _forget()
            raw = json.dumps(_agent(turn)).encode()
            answered = answer(mock, CHAT, raw, HEADERS, {}, path="/v1/chat/completions")
            assert answered.status == 200
            out.append(answered.data)
        return out

    assert answers(False) == answers(True)


def _claude_agent(turns: int) -> dict[str, Any]:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Plan a weekend in Lisbon"}]
    for t in range(turns):
        use = {"type": "tool_use", "id": f"toolu_{t}", "name": "search", "input": {"t": t}}
        messages.append({"role": "assistant", "content": [{"type": "text", "text": "Looking."}, use]})
        result = {"type": "tool_result", "tool_use_id": f"toolu_{t}", "content": f"result {t}"}
        messages.append({"role": "user", "content": [result]})
    tools = [{"name": "search", "description": "Search", "input_schema": {"type": "object"}},
             {"type": "web_search_20250305", "name": "web_search"}]  # fmt: skip
    return {"model": "claude-sonnet-4-5", "max_tokens": 100, "system": "Use the tools.", "messages": messages,
            "tools": tools}  # fmt: skip


def test_a_claude_loops_next_turn_takes_what_the_messages_decoder_made() -> None:
    _forget()
    turn_4, turn_5 = _decode(_claude_agent(4), MESSAGES), _decode(_claude_agent(5), MESSAGES)
    assert all(a is b for a, b in zip(turn_4.messages, turn_5.messages, strict=False))
    assert turn_5.messages[0].role == "system"
    assert [t.name for t in turn_5.tools] == ["search"]  # the server tool is not the caller's
    assert turn_5.tools[0] is turn_4.tools[0] and turn_5.messages[-1].name == "search"
    _forget()
    fresh = _decode(_claude_agent(5), MESSAGES)
    assert fresh == turn_5 and fresh.messages[1] is not turn_5.messages[1]
    _same_types(fresh, turn_5, "request")
    assert fresh.fingerprint() == turn_5.fingerprint()
    assert _fingerprinted_fields(turn_5) == turn_5._fingerprinted_json()


def test_a_claude_tool_result_is_named_by_the_calls_before_it_each_time() -> None:
    _forget()
    result = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "42"}]}

    def asked(name: str) -> ModelRequest:
        use = {"type": "tool_use", "id": "t1", "name": name, "input": {}}
        messages = [{"role": "user", "content": "go"}, {"role": "assistant", "content": [use]}, result]
        return _decode({"model": "claude-sonnet-4-5", "max_tokens": 10, "messages": messages}, MESSAGES)

    assert asked("search").messages[-1].name == "search"
    assert asked("fetch").messages[-1].name == "fetch"


def test_a_plain_conversation_is_kept_and_a_short_plain_request_is_not() -> None:
    _forget()
    short = {"model": "gpt-4o", "messages": [{"role": "user", "content": "hello there"}]}
    assert _decode(short).messages[0] is not _decode(short).messages[0]
    said = [{"role": "user" if i % 2 == 0 else "assistant", "content": f"m{i}"} for i in range(9)]
    long = {"model": "gpt-4o", "messages": said}
    one, two = _decode(long), _decode(long)
    assert all(a is b for a, b in zip(one.messages, two.messages, strict=True))
    assert one.messages[1].model_fields_set == {"role", "content", "tool_calls"}  # as `_message` makes it


def test_the_fingerprint_remembers_only_what_a_decoder_kept() -> None:
    """A request whose messages are made anew each time (Gemini's decoder keeps none, nor does a request
    built in Python) is written out whole: remembering its parts would only fill the table."""
    from synthgpt import model

    contents = [{"role": "user" if i % 2 == 0 else "model", "parts": [{"text": f"m{i}"}]} for i in range(9)]
    gemini = decode_request(GeminiCodec(), json.dumps({"contents": contents}).encode(), HEADERS,
                            {"model": "gemini-2.5-flash"})[0]  # fmt: skip
    model._KEPT_TEXTS.clear()
    assert gemini.fingerprint() and not gemini.__pydantic_private__["_interned"]  # type: ignore[index]
    assert model._KEPT_TEXTS == {}
    chat = _decode({"model": "gpt-4o", "messages": [{"role": "user", "content": f"m{i}"} for i in range(9)]})
    assert chat.fingerprint() and len(model._KEPT_TEXTS) == 9


def _responses_agent(turns: int) -> dict[str, Any]:
    items: list[dict[str, Any]] = [{"role": "user", "content": "Plan a weekend in Lisbon"}]
    for t in range(turns):
        if t % 2:  # every other turn the calls follow a message of the assistant's: one message holds both
            items.append({"type": "message", "role": "assistant", "content": [{"type": "output_text",
                                                                               "text": f"Step {t}."}]})
        items.append({"type": "function_call", "call_id": f"fc_{t}", "name": "search", "arguments": "{}"})
        items.append({"type": "function_call", "call_id": f"fc_{t}b", "name": "fetch", "arguments": "{}"})
        items.append({"type": "function_call_output", "call_id": f"fc_{t}", "output": f"result {t}"})
        items.append({"type": "function_call_output", "call_id": f"fc_{t}b", "output": f"page {t}"})
    tools = [{"type": "function", "name": "search", "parameters": {"type": "object", "properties": {}}},
             {"type": "function", "name": "fetch"}, {"type": "web_search"}]  # fmt: skip
    return {"model": "gpt-4o", "instructions": "Use the tools.", "input": items, "tools": tools}


def test_an_agents_sdk_loops_next_turn_takes_what_the_responses_decoder_made() -> None:
    _forget()
    codec = ResponsesCodec()
    turn_4, turn_5 = _decode(_responses_agent(4), codec), _decode(_responses_agent(5), codec)
    assert len(turn_5.messages) == 1 + 1 + 5 * 3  # instructions, the ask, then a turn's calls and 2 results
    assert all(a is b for a, b in zip(turn_4.messages, turn_5.messages, strict=False))
    assert [t.name for t in turn_5.tools] == ["search", "fetch"] and turn_5.tools[0] is turn_4.tools[0]
    joined = turn_5.messages[5]  # turn 1's calls, after the assistant's message
    assert joined.content == "Step 1." and [c.name for c in joined.tool_calls] == ["search", "fetch"]
    assert [m.name for m in turn_5.messages[-2:]] == ["search", "fetch"]
    _forget()
    fresh = _decode(_responses_agent(5), codec)
    assert fresh == turn_5 and fresh.messages[2] is not turn_5.messages[2]
    _same_types(fresh, turn_5, "request")
    assert fresh.model_fields_set == turn_5.model_fields_set
    assert fresh.fingerprint() == turn_5.fingerprint()
    assert _fingerprinted_fields(turn_5) == turn_5._fingerprinted_json()


def test_a_continued_response_is_not_taken_as_kept() -> None:
    """After `previous_response_id` the history comes from the store: the fingerprint writes it whole."""
    codec = ResponsesCodec()
    mock = MockGPT(seed=2)
    first = answer(mock, codec, json.dumps(_responses_agent(3)).encode(), HEADERS, {}, path="/v1/responses")
    assert first.status == 200
    later = {"model": "gpt-4o", "previous_response_id": json.loads(first.data)["id"], "input": [
        {"role": "user", "content": "More"}, {"role": "user", "content": "Please"}]}  # fmt: skip
    continued = _decode(later, codec)
    assert not continued.__pydantic_private__["_interned"]  # type: ignore[index]
    assert _fingerprinted_fields(continued) == continued._fingerprinted_json()


def test_what_the_decoders_keep_stays_within_the_memory_they_reckon() -> None:
    """A client sending ever new conversations and tools (each part new) fills the caches past their
    bounds: they empty and start over, and hold no more memory than they reckon."""
    import gc
    import tracemalloc

    from synthgpt.codec.interned import MESSAGES_BYTES, TOOLS_BYTES

    _forget()
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        for n in range(12):
            results = [{"role": "tool", "tool_call_id": f"c{n}.{i}", "content": f"result {i} " * 8}
                       for i in range(500)]  # fmt: skip
            schema = {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "integer"}}}
            tools = [{"type": "function", "function": {"name": f"t{n}_{i}", "description": "d" * 80,
                                                       "parameters": schema}} for i in range(64)]  # fmt: skip
            said = [{"role": "user", "content": "go"}, *results]
            _decode({"model": "gpt-4o", "messages": said, "tools": tools})
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()
    kept = chat_request._MESSAGES.nbytes + chat_request._TOOLS.nbytes
    assert chat_request._MESSAGES.nbytes <= MESSAGES_BYTES and chat_request._TOOLS.nbytes <= TOOLS_BYTES
    assert kept > (MESSAGES_BYTES + TOOLS_BYTES) / 4  # they were filled, not left empty
    assert held < 1.1 * kept, (held, kept)
