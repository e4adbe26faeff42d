"""CPU per distinct request for the kinds of answer the HTTP cases leave out, in process: embeddings, chat
answers with logprobs, tool calls (what an agent loop asks for, with few tools declared or many), an agent
loop's request after 30 tool calls (Chat Completions, Messages and Responses), and a chat resending 40
messages.

Every request differs (a counter in its text), and goes through `pipeline.answer`, the path the server and
`render` share: decoding, the draw, encoding the body. A digest of every answer's status and bytes is
printed beside each figure, so two checkouts can be shown to answer alike.

    python -m bench.answer_kinds                              # this checkout
    python -m bench.answer_kinds --compare /tmp/base          # and another, side by side, alternating

`--compare` runs both checkouts in turns (each in a fresh process, `--rounds` times) and prints the lowest
figure of each with their ratio: what a change to the encoder or a generator bought, measured in one run.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

__all__ = ["CASES", "main"]

ROOT = Path(__file__).resolve().parent.parent

# name: (API, body of request i)
CASES: dict[str, tuple[str, Any]] = {
    "embeddings_1": ("embeddings", lambda i: {"model": "text-embedding-3-small", "input": f"tide pools {i}"}),
    "embeddings_16": (
        "embeddings",
        lambda i: {"model": "text-embedding-3-small", "input": [f"tide pools {i} {j}" for j in range(16)]},
    ),
    "embeddings_large": ("embeddings", lambda i: {"model": "text-embedding-3-large", "input": f"rock {i}"}),
    "chat_logprobs": ("chat", lambda i: _chat(i, logprobs=True)),
    "chat_top5": ("chat", lambda i: _chat(i, logprobs=True, top_logprobs=5)),
    "chat_top20": ("chat", lambda i: _chat(i, logprobs=True, top_logprobs=20)),
    "chat_top5_stream": ("chat", lambda i: _chat(i, logprobs=True, top_logprobs=5, stream=True)),
    "tools_3": ("chat", lambda i: _chat(i, tools=_TOOLS[:3])),
    "tools_20": ("chat", lambda i: _chat(i, tools=_TOOLS)),
    "agent_30_turns": ("chat", lambda i: _agent(i, 30)),
    "claude_agent_30": ("messages", lambda i: _claude_agent(i, 30)),
    "responses_agent_30": ("responses", lambda i: _responses_agent(i, 30)),
    "chat_history_40": ("chat", lambda i: _history(i, 40)),
}


def _chat(i: int, **extra: Any) -> dict[str, Any]:
    asked = "What's the weather in Paris today?" if "tools" in extra else "Tell me about tide pools"
    prompt = f"{asked} #{i}"
    return {"model": "gpt-4o", "messages": [{"role": "user", "content": prompt}], **extra}


def _agent(i: int, turns: int) -> dict[str, Any]:
    """An agent loop's request after `turns` calls of its tools and their results (what frameworks resend
    whole on every turn), ten tools declared."""
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a travel assistant. Use the tools."},
        {"role": "user", "content": f"Plan a weekend in Lisbon for two, budget 800 euros #{i}"},
    ]
    for t in range(turns):
        call = {"id": f"call_{t}", "type": "function",
                "function": {"name": "search_web", "arguments": f'{{"query":"lisbon step {t}","limit":5}}'}}
        messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        messages.append({"role": "tool", "tool_call_id": f"call_{t}",
                         "content": f'{{"results":[{{"title":"Result {t}","url":"https://example.com/{t}"}}]}}'})
    return {"model": "gpt-4o", "messages": messages, "tools": _TOOLS[:10]}  # fmt: skip


def _claude_agent(i: int, turns: int) -> dict[str, Any]:
    """`_agent`'s loop on the Messages API: tool uses in the assistant's turns, results in the user's."""
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": f"Plan a weekend in Lisbon for two, budget 800 euros #{i}"},
    ]
    for t in range(turns):
        use = {"type": "tool_use", "id": f"toolu_{t}", "name": "search_web",
               "input": {"query": f"lisbon step {t}", "limit": 5}}
        messages.append({"role": "assistant", "content": [{"type": "text", "text": "Let me look."}, use]})
        result = {"type": "tool_result", "tool_use_id": f"toolu_{t}",
                  "content": f'{{"results":[{{"title":"Result {t}","url":"https://example.com/{t}"}}]}}'}
        messages.append({"role": "user", "content": [result]})
    tools = [{"name": t["function"]["name"], "description": t["function"]["description"],
              "input_schema": t["function"]["parameters"]} for t in _TOOLS[:10]]
    return {"model": "claude-sonnet-4-5", "max_tokens": 1024, "system": "You are a travel assistant.",
            "messages": messages, "tools": tools}  # fmt: skip


def _responses_agent(i: int, turns: int) -> dict[str, Any]:
    """`_agent`'s loop on the Responses API, its input resent whole (as the OpenAI Agents SDK sends it)."""
    items: list[dict[str, Any]] = [
        {"role": "user", "content": f"Plan a weekend in Lisbon for two, budget 800 euros #{i}"},
    ]
    for t in range(turns):
        items.append({"type": "function_call", "call_id": f"call_{t}", "name": "search_web",
                      "arguments": f'{{"query":"lisbon step {t}","limit":5}}'})
        items.append({"type": "function_call_output", "call_id": f"call_{t}",
                      "output": f'{{"results":[{{"title":"Result {t}","url":"https://example.com/{t}"}}]}}'})
    tools = [{"type": "function", **t["function"]} for t in _TOOLS[:10]]
    return {"model": "gpt-4o", "instructions": "You are a travel assistant.", "input": items, "tools": tools,
            "store": False}  # fmt: skip


def _history(i: int, turns: int) -> dict[str, Any]:
    """A chat with `turns` earlier plain messages (a chat UI resends its history on every turn)."""
    messages = [{"role": "user" if t % 2 == 0 else "assistant", "content": f"Message {t} about tide pools."}
                for t in range(turns)]  # fmt: skip
    return {"model": "gpt-4o", "messages": [*messages, {"role": "user", "content": f"And now? #{i}"}]}


def _tool(name: str, props: dict[str, Any]) -> dict[str, Any]:
    schema = {"type": "object", "properties": props, "required": list(props)}
    function = {"name": name, "description": f"{name} tool", "parameters": schema}
    return {"type": "function", "function": function}


_TOOLS = [
    _tool("get_weather", {"city": {"type": "string"}, "unit": {"type": "string", "enum": ["c", "f"]}}),
    _tool("search_web", {"query": {"type": "string"}, "limit": {"type": "integer", "minimum": 1}}),
    _tool("send_email", {"to": {"type": "string", "format": "email"}, "subject": {"type": "string"}}),
] + [
    _tool(f"tool_{n}", {"id": {"type": "string"}, "count": {"type": "integer"}, "tags": {
        "type": "array", "items": {"type": "string"}}}) for n in range(17)
]  # fmt: skip


def _measure(names: list[str], n: int) -> dict[str, tuple[float, str]]:
    """µs of CPU per request (the lowest of three passes over `n` distinct requests) and the digest."""
    from synthgpt import MockGPT, pipeline
    from synthgpt.codec.anthropic.encode import MessagesCodec
    from synthgpt.codec.embeddings import EmbeddingsCodec
    from synthgpt.codec.openai_chat.encode import ChatCodec
    from synthgpt.codec.openai_responses.encode import ResponsesCodec

    codecs = {"embeddings": EmbeddingsCodec(), "chat": ChatCodec(), "messages": MessagesCodec(),
              "responses": ResponsesCodec()}  # fmt: skip
    headers = {"content-type": "application/json"}
    out: dict[str, tuple[float, str]] = {}
    for name in names:
        api, make = CASES[name]
        mock = MockGPT(seed=1)
        codec = codecs[api]
        digest = hashlib.sha256()
        best = float("inf")
        for round_ in range(4):  # the first pass warms caches and is the one digested
            bodies = [json.dumps(make(round_ * n + i)).encode() for i in range(n)]
            started = time.process_time()
            for body in bodies:
                answered = pipeline.answer(mock, codec, body, headers, {})
                data = answered.data
                if round_ == 0:
                    digest.update(f"{answered.status}".encode() + b"\0" + data + b"\0")
            if round_:
                best = min(best, (time.process_time() - started) / n * 1e6)
        out[name] = (best, digest.hexdigest()[:16])
    return out


def _child(root: Path, names: list[str], n: int) -> dict[str, tuple[float, str]]:
    """`_measure` in a fresh process importing synthgpt from checkout `root`."""
    done = subprocess.run(
        [sys.executable, __file__, "--child", str(root), "--cases", ",".join(names), "-n", str(n)],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    return {k: (v[0], v[1]) for k, v in json.loads(done.stdout.splitlines()[-1]).items()}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description="CPU per distinct request with a large answer, in process")
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("-n", type=int, default=60, help="requests per pass")
    ap.add_argument("--compare", type=Path, metavar="ROOT", help="another checkout, measured in turns")
    ap.add_argument("--rounds", type=int, default=3, help="turns of each checkout with --compare")
    ap.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    names = [c.strip() for c in args.cases.split(",") if c.strip()]
    if args.child is not None:
        sys.path.insert(0, str(args.child))  # this checkout's synthgpt, ahead of the installed one
        print(json.dumps(_measure(names, args.n)))
        return
    if args.compare is None:
        print(f"{'case':<18} {'us/req':>9}  digest")
        for name, (us, digest) in _child(ROOT, names, args.n).items():
            print(f"{name:<18} {us:9.0f}  {digest}")
        return
    base: dict[str, list[tuple[float, str]]] = {name: [] for name in names}
    this: dict[str, list[tuple[float, str]]] = {name: [] for name in names}
    for _ in range(args.rounds):
        for name, got in _child(args.compare.resolve(), names, args.n).items():
            base[name].append(got)
        for name, got in _child(ROOT, names, args.n).items():
            this[name].append(got)
    print(f"{'case':<18} {'base us':>9} {'this us':>9} {'speed-up':>9}  same bytes")
    for name in names:
        b, t = min(base[name]), min(this[name])
        print(f"{name:<18} {b[0]:9.0f} {t[0]:9.0f} {b[0] / t[0]:8.2f}x  {'yes' if b[1] == t[1] else 'NO'}")


if __name__ == "__main__":
    main()
