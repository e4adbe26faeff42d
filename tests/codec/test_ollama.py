"""Ollama wire-level tests: request decoding and the NDJSON framing (faults, no keep-alives)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from synthgpt.codec.ollama.encode import OllamaCodec, ollama_error_body
from synthgpt.codec.sse import plan_wire
from synthgpt.errors import RequestError
from synthgpt.model import Choice, ErrorSpec, Fault, ModelOutput, StreamPlan, TextOut, Usage

CHAT = OllamaCodec()
OUT = ModelOutput(
    choices=(Choice(parts=(TextOut(text="Hello there!"),)),),
    usage=Usage(prompt_tokens=3, completion_tokens=4),
    stream=StreamPlan(chunk_chars=5),
    model="llama3.2",
    created=1_767_225_600,
)


def decode(body: dict[str, Any]) -> Any:
    return CHAT.decode({"model": "llama3.2", **body}, {"authorization": "Bearer x"}, {})


def test_decoding() -> None:
    req = decode({"messages": [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Weather?", "images": ["aGVsbG8="]},
        {"role": "assistant", "content": "",
         "tool_calls": [{"function": {"name": "w", "arguments": {"c": 1}}}]},
        {"role": "tool", "tool_name": "w", "content": "sunny"},
    ], "think": "high", "format": {"type": "object", "properties": {"a": {"type": "string"}}},
        "options": {"num_predict": 20, "stop": ["END"], "temperature": 0.1}})  # fmt: skip
    assert req.stream is True  # Ollama streams unless told not to
    assert (req.system, req.max_output_tokens, req.stop_sequences) == ("Be brief.", 20, ("END",))
    assert req.reasoning is not None and req.reasoning.effort == "high"
    assert req.response_schema is not None and req.response_schema.kind == "json_schema"
    assert req.messages[1].parts[1].kind == "image"
    assert req.tool_result_name(req.messages[3]) == "w" and req.headers == ()
    assert decode({"messages": [], "stream": False, "format": "json"}).response_schema.kind == "json_object"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("body", "message"),
    [({"messages": [{"role": "bot"}]}, "invalid role"), ({"messages": [], "think": "max"}, "invalid think"),
     ({"messages": [], "format": "xml"}, "invalid format")],
)  # fmt: skip
def test_bad_requests(body: dict[str, Any], message: str) -> None:
    with pytest.raises(RequestError, match=message):
        decode(body)


def test_ndjson_framing_and_faults() -> None:
    req = decode({"messages": [{"role": "user", "content": "hi"}]})
    assert CHAT.framing(req).media_type == "application/x-ndjson"
    healthy = plan_wire(CHAT.frames(OUT, req), OUT.stream, CHAT, OUT, req).data
    lines = healthy.decode().split("\n")
    assert lines[-1] == "" and [json.loads(x)["message"]["content"] for x in lines[:-1]] == [
        "Hello",
        " ther",
        "e!",
        "",
    ]
    plan = StreamPlan(chunk_chars=5, keepalive_every=1, faults=(Fault(kind="stream_error", after=1),))
    out = OUT.model_copy(update={"stream": plan})
    data = plan_wire(CHAT.frames(out, req), plan, CHAT, out, req).data.decode()
    assert [json.loads(x) for x in data.splitlines()][1] == {
        "error": "an error was encountered while running the model"
    }
    assert ": ping" not in data and len(data.splitlines()) == 2


def test_error_body() -> None:
    assert ollama_error_body(ErrorSpec(status=404), 404) == {"error": "model not found, try pulling it first"}
    assert ollama_error_body(RequestError("model is required", "model"), 400) == {
        "error": "model is required"
    }
