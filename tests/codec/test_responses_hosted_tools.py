"""Responses hosted tools: `web_search` / `file_search` calls as output items with results, a message
citing them (url / file citations), streamed with their events — all valid against the OpenAI spec."""

from __future__ import annotations

import json
from typing import Any

import pytest

from synthgpt import MockGPT
from synthgpt.codec.openai_responses.encode import ResponsesCodec
from synthgpt.generators import fixed_clock
from synthgpt.testing import openai_client
from tests.codec._support import EVENT_SCHEMAS

HOSTED_EVENTS = {
    f"response.{kind}_call.{step}": f"Response{name}Call{step.title().replace('_', '')}Event"
    for kind, name in (("web_search", "WebSearch"), ("file_search", "FileSearch"))
    for step in ("in_progress", "searching", "completed")
} | {"response.output_text.annotation.added": "ResponseOutputTextAnnotationAddedEvent"}
ASK = "What is the tallest lighthouse in Portugal?"


def _answer(body: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    codec = ResponsesCodec()
    req = codec.decode({"model": "gpt-4o", "input": ASK, **body}, {}, {})
    out = MockGPT(seed=9, clock=fixed_clock(1_700_000_000)).generate(req)
    events = [json.loads(f.data) for f in codec.frames(out, req.model_copy(update={"stream": True}))]
    return codec.body(out, req), events


def test_web_search_call_and_url_citation(openai_spec: Any) -> None:
    body, events = _answer({"tools": [{"type": "web_search"}]})
    openai_spec("Response", body)
    search, message = body["output"]
    assert search == {
        "id": search["id"],
        "type": "web_search_call",
        "status": "completed",
        "action": {"type": "search", "query": search["action"]["query"]},
    }
    assert search["id"].startswith("ws_") and "lighthouse" in search["action"]["query"]
    (note,) = message["content"][0]["annotations"]
    text = message["content"][0]["text"]
    assert note["type"] == "url_citation" and note["url"].startswith("https://")
    assert 0 <= note["start_index"] < note["end_index"] <= len(text)
    for e in events:
        openai_spec({**EVENT_SCHEMAS, **HOSTED_EVENTS}[e["type"]], e)
    kinds = [e["type"] for e in events]
    assert kinds[2:7] == [
        "response.output_item.added",
        "response.web_search_call.in_progress",
        "response.web_search_call.searching",
        "response.web_search_call.completed",
        "response.output_item.done",
    ]
    added = [e for e in events if e["type"] == "response.output_text.annotation.added"]
    assert [e["annotation"] for e in added] == [note]
    assert kinds.index("response.output_text.annotation.added") < kinds.index("response.output_text.done")
    assert events[-1]["response"]["output"] == body["output"]


@pytest.mark.parametrize("with_results", [False, True])
def test_file_search_call_and_file_citation(openai_spec: Any, with_results: bool) -> None:
    tools = [{"type": "file_search", "vector_store_ids": ["vs_1"]}]
    include = ["file_search_call.results"] if with_results else []
    body, events = _answer({"tools": tools, "include": include})
    openai_spec("Response", body)
    search, message = body["output"]
    assert search["type"] == "file_search_call" and search["queries"]
    (note,) = message["content"][0]["annotations"]
    assert note["type"] == "file_citation" and note["index"] == len(message["content"][0]["text"])
    if with_results:
        (hit,) = search["results"]
        assert (hit["file_id"], hit["filename"]) == (note["file_id"], note["filename"])
        assert 0 < hit["score"] < 1 and hit["text"]
    else:
        assert search["results"] is None
    for e in events:
        openai_spec({**EVENT_SCHEMAS, **HOSTED_EVENTS}[e["type"]], e)


def test_no_search_without_hosted_tools_or_with_choice_none() -> None:
    assert [i["type"] for i in _answer({})[0]["output"]] == ["message"]
    none = _answer({"tools": [{"type": "web_search"}], "tool_choice": "none"})[0]
    assert [i["type"] for i in none["output"]] == ["message"]


def test_the_openai_sdk_reads_searches_and_citations() -> None:
    client = openai_client(MockGPT(seed=9))
    reply = client.responses.create(model="gpt-4o", input=ASK, tools=[{"type": "web_search"}])
    assert [i.type for i in reply.output] == ["web_search_call", "message"]
    assert reply.output[1].content[0].annotations[0].type == "url_citation"  # type: ignore[union-attr]
    with client.responses.stream(model="gpt-4o", input=ASK, tools=[{"type": "web_search"}]) as stream:
        final = stream.get_final_response()
    assert final.output_text == reply.output_text
