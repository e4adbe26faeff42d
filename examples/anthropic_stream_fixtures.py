"""Anthropic streaming fixtures for a chat UI: one `.sse` transcript per UI state, byte-identical on
every run, each replayed through the official `anthropic` SDK to prove a real client accepts it.

    python examples/anthropic_stream_fixtures.py OUT_DIR

Writes OUT_DIR/<scenario>.sse (the exact bytes `POST /v1/messages` streams) and OUT_DIR/index.json
(what each file shows and what the SDK made of it). A frontend dev server can replay the files with
`content-type: text/event-stream` to exercise text, thinking, tool use, an overloaded error mid-stream
and a stream that ends without `message_stop`.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anthropic
import httpx2

from synthgpt import MockGPT, Rule
from synthgpt import generators as g
from synthgpt import matchers as m
from synthgpt.render import render_requests

MODEL = "claude-sonnet-4-5"

RULES = [
    Rule("tool-use", m.has_tools(), g.tool_call("get_weather", {"city": g.fake("city")})),
    Rule("overloaded", m.last_user(contains="[overloaded]"), g.paragraph(2, 3),
         stream={"chunk_chars": 12, "faults": [{"kind": "stream_error", "after": 6}]}),
    Rule("cut-short", m.last_user(contains="[cut]"), g.paragraph(2, 3),
         stream={"chunk_chars": 12, "faults": [{"kind": "truncate", "after": 5}]}),
    Rule("thinking", m.wants_reasoning(), g.reply(text=g.paragraph(1, 2), reasoning=g.paragraph(1, 2)),
         stream={"chunk_chars": 12}),
    Rule("text", m.always(), g.paragraph(2, 4), stream={"chunk_chars": 12}),
]  # fmt: skip

WEATHER_TOOL = {
    "name": "get_weather",
    "description": "Current weather for a city",
    "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
}


def _ask(text: str, **extra: Any) -> dict[str, Any]:
    return {"model": MODEL, "max_tokens": 2048, "messages": [{"role": "user", "content": text}], **extra}


SCENARIOS: dict[str, tuple[str, dict[str, Any]]] = {
    "text": ("a plain streamed answer", _ask("Tell me about tide pools.")),
    "thinking": ("a thinking block, then the answer",
                 _ask("Plan a picnic.", thinking={"type": "enabled", "budget_tokens": 1024})),
    "tool-use": ("a tool_use block with streamed JSON input", _ask("Weather in Oslo?", tools=[WEATHER_TOOL])),
    "overloaded": ("an `error` event (overloaded_error) mid-stream", _ask("Summarise this [overloaded]")),
    "cut-short": ("the stream stops before message_stop", _ask("Write a haiku [cut]")),
}  # fmt: skip


def replay(data: bytes) -> dict[str, Any]:
    """Feed the transcript to the official SDK, as a UI client would receive it."""

    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, content=data, headers={"content-type": "text/event-stream"})

    http_client = httpx2.Client(transport=httpx2.MockTransport(handler))
    client = anthropic.Anthropic(api_key="sk-replay", http_client=http_client)
    try:
        with client.messages.stream(**_ask("replay")) as stream:
            message = stream.get_final_message()
    except anthropic.APIStatusError as exc:
        body = exc.body if isinstance(exc.body, dict) else {}
        return {"sdk": "raised", "error_type": body.get("error", {}).get("type")}
    finally:
        client.close()
    return {"sdk": "ok", "stop_reason": message.stop_reason, "blocks": [b.type for b in message.content]}


def generate(out_dir: Path, seed: int = 0) -> dict[str, Any]:
    mock = MockGPT(RULES, seed=seed)
    lines = [json.dumps(body) for _, body in SCENARIOS.values()]
    rendered = render_requests(mock, lines, "messages", stream=True)
    out_dir.mkdir(parents=True, exist_ok=True)
    index: dict[str, Any] = {}
    for (name, (description, _)), r in zip(SCENARIOS.items(), rendered, strict=True):
        if r.error is not None or r.status != 200:
            raise SystemExit(f"scenario {name!r} was not answered with a stream: {r.error or r.status}")
        (out_dir / f"{name}.sse").write_bytes(r.data)
        index[name] = {"file": f"{name}.sse", "shows": description, "rule": r.rule, **replay(r.data)}
    (out_dir / "index.json").write_text(json.dumps(index, indent=2) + "\n")
    return index


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    for name, entry in generate(Path(argv[0])).items():
        print(f"{name:12} {entry['sdk']:7} {entry.get('stop_reason') or entry.get('error_type')}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
