"""µs per request decode, in process: body bytes and headers -> ModelRequest, for each API.

    python -m bench.decode                 # every API, best of 5 repeats of 2000 distinct bodies
    python -m bench.decode --apis chat -n 5000

What is timed is what `pipeline.accept` does before the request reaches the engine: `decode_envelope`
(JSON body, headers) and the codec's `decode`. The fingerprint the request id needs is the engine's and
is left out (`--fingerprint` adds it). Bodies are the bench cases' (a counter in every prompt, so no
cache helps) with the headers an SDK sends.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.cases import ANTHROPIC_HEADERS, OPENAI_HEADERS, PROMPT

__all__ = ["main"]


Api = tuple[Any, Callable[[str], dict[str, Any]], tuple[tuple[str, str], ...], dict[str, str]]
"""A codec, how to make a body from a prompt, the headers an SDK sends, the path parameters."""


def _apis() -> dict[str, Api]:
    from synthgpt.codec import (
        BedrockCodec,
        ChatCodec,
        CohereCodec,
        EmbeddingsCodec,
        GeminiCodec,
        MessagesCodec,
        OllamaCodec,
        ResponsesCodec,
    )

    user = {"role": "user", "content": ""}
    return {
        "chat": (ChatCodec(), lambda p: {"model": "gpt-4o", "messages": [{**user, "content": p}]},
                 OPENAI_HEADERS, {}),
        "responses": (ResponsesCodec(), lambda p: {"model": "gpt-4o", "input": p, "stream": True,
                                                   "max_output_tokens": 40}, OPENAI_HEADERS, {}),
        "messages": (MessagesCodec(), lambda p: {"model": "claude-sonnet-4-5", "max_tokens": 1024,
                                                 "messages": [{**user, "content": p}]},
                     ANTHROPIC_HEADERS, {}),
        "embeddings": (EmbeddingsCodec(), lambda p: {"model": "text-embedding-3-small", "input": p},
                       OPENAI_HEADERS, {}),
        "gemini": (GeminiCodec(), lambda p: {"contents": [{"role": "user", "parts": [{"text": p}]}]},
                   OPENAI_HEADERS, {"model": "gemini-2.5-flash"}),
        "ollama": (OllamaCodec(), lambda p: {"model": "llama3.2", "messages": [{**user, "content": p}]},
                   OPENAI_HEADERS, {}),
        "cohere": (CohereCodec(), lambda p: {"model": "command-a-03-2025",
                                             "messages": [{**user, "content": p}]}, OPENAI_HEADERS, {}),
        "bedrock": (BedrockCodec(), lambda p: {"messages": [{"role": "user", "content": [{"text": p}]}]},
                    OPENAI_HEADERS, {"model_id": "anthropic.claude-sonnet-4-5-v1:0"}),
    }  # fmt: skip


def _decoder(codec: Any, headers: tuple[tuple[str, str], ...], params: dict[str, str],
             fingerprint: bool) -> Callable[[bytes], Any]:  # fmt: skip
    try:
        from synthgpt.codec.envelope import decode_envelope
    except ImportError:  # a checkout from before the shared envelope
        from synthgpt.codec.common import parse_json_body

        hmap = dict(headers)

        def old(raw: bytes) -> Any:
            req = codec.decode(parse_json_body(raw), hmap, params)
            return req.fingerprint() if fingerprint else req

        return old

    def new(raw: bytes) -> Any:
        envelope = decode_envelope(raw, headers)
        req = codec.decode(envelope.body, envelope.headers, params)
        return req.fingerprint() if fingerprint else req

    return new


def main(argv: list[str] | None = None) -> None:
    apis = _apis()
    ap = argparse.ArgumentParser(description="µs per request decode (bytes -> ModelRequest), in process")
    ap.add_argument("--apis", default=",".join(apis))
    ap.add_argument("-n", type=int, default=2000, help="distinct bodies per repeat")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--fingerprint", action="store_true", help="also take each request's fingerprint")
    args = ap.parse_args(argv)
    print(f"{'api':<12}{'us/decode':>10}")
    for name in args.apis.split(","):
        codec, make, headers, params = apis[name]
        decode = _decoder(codec, headers, params, args.fingerprint)
        best = float("inf")
        for r in range(args.repeats):
            raws = [json.dumps(make(f"{PROMPT} #{r}-{i}")).encode() for i in range(args.n)]
            started = time.process_time()
            for raw in raws:
                decode(raw)
            best = min(best, (time.process_time() - started) / args.n * 1e6)
        print(f"{name:<12}{best:>10.1f}")


if __name__ == "__main__":
    main()
