"""Ollama's native API: `POST /api/chat`, `/api/generate`, `/api/embed` (and the older `/api/embeddings`).

A stream is NDJSON: one object per line, each with the next piece of thinking or text (tool calls come
whole, in one line), `"done": false`; the last line has `"done": true`, the `done_reason` and the counts
and durations. The non-stream body is the fold of the lines: text and thinking joined, tool calls in order,
the last line's fields. Durations (nanoseconds) are derived from the token counts, never measured, and
`created_at` is the answer's clock reading, so the bytes repeat like every other answer's.

Errors are `{"error": "<message>"}`, mid-stream too (the client raises `ResponseError` on such a line).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from ...errors import RequestError
from ...model import ApiKind, ErrorSpec, Fault, ModelOutput, ModelRequest, ReasoningPart
from ...seeding import derive_seed
from ..base import Frame
from ..common import dumps, in_schema_order
from ..embeddings import checked_vectors
from ..errors import error_fields, restate_default
from ..framing import NDJSON, Framing
from ..sse import chunk_text
from .request import decode_ollama_chat, decode_ollama_embed, decode_ollama_generate

__all__ = ["OllamaCodec", "OllamaEmbedCodec", "created_at", "ollama_error_body"]

_DONE = {"stop": "stop", "length": "length", "tool_calls": "stop", "content_filter": "stop"}
_MESSAGES = {
    400: "invalid request",
    404: "model not found, try pulling it first",
    429: "too many requests",
    500: "an error was encountered while running the model",
    503: "server busy, please try again. maximum pending requests exceeded",
}
_DEFAULT_FAULT_MESSAGE = Fault.model_fields["message"].default
_LOAD_NS = 12_000_000
_PROMPT_NS_PER_TOKEN = 400_000
_EVAL_NS_PER_TOKEN = 16_000_000


def created_at(unix: int) -> str:
    """Ollama's timestamp form (RFC 3339 with fractional seconds) of a clock reading."""
    return datetime.fromtimestamp(unix, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def ollama_error_body(error: ErrorSpec | RequestError, status: int) -> dict[str, Any]:
    if isinstance(error, ErrorSpec) and error.body is not None:
        return dict(error.body)
    message, _, _, _ = error_fields(error, status)
    own = _MESSAGES.get(status, "an error was encountered while running the model" if status >= 500 else
                        "invalid request")  # fmt: skip
    return {"error": restate_default(message, status, own)}


def _timings(output: ModelOutput, prompt: int, done: bool) -> dict[str, Any]:
    evals = output.usage.completion_tokens
    prompt_ns, eval_ns = prompt * _PROMPT_NS_PER_TOKEN, evals * _EVAL_NS_PER_TOKEN
    return {
        "total_duration": _LOAD_NS + prompt_ns + eval_ns,
        "load_duration": _LOAD_NS,
        "prompt_eval_count": prompt,
        "prompt_eval_duration": prompt_ns,
        **({"eval_count": evals, "eval_duration": eval_ns} if done else {}),
    }


def _calls(output: ModelOutput) -> list[dict[str, Any]]:
    out = []
    for call in output.tool_calls:
        try:
            args = json.loads(call.arguments)
        except ValueError:
            args = {"raw": call.arguments}
        out.append({"function": {"name": call.name, "arguments": args if isinstance(args, dict) else
                                 {"value": args}}})  # fmt: skip
    return out


class OllamaCodec:
    """`/api/chat` (`generate=False`) or `/api/generate` (`generate=True`)."""

    api: ApiKind = "ollama"

    def __init__(self, *, generate: bool = False) -> None:
        self.generate = generate

    def decode(self, body: Any, headers: Mapping[str, str], params: Mapping[str, str]) -> ModelRequest:
        decode = decode_ollama_generate if self.generate else decode_ollama_chat
        return ModelRequest.from_decoded(decode(body, headers))

    def framing(self, request: ModelRequest) -> Framing:
        return NDJSON

    def _line(
        self, output: ModelOutput, text: str, thinking: str | None, calls: list[Any] | None
    ) -> dict[str, Any]:
        line: dict[str, Any] = {"model": output.model, "created_at": created_at(output.created)}
        if self.generate:
            line["response"] = text
            if thinking is not None:
                line["thinking"] = thinking
        else:
            message: dict[str, Any] = {"role": "assistant", "content": text}
            if thinking is not None:
                message["thinking"] = thinking
            if calls:
                message["tool_calls"] = calls
            line["message"] = message
        line["done"] = False
        return line

    def _final(self, output: ModelOutput, line: dict[str, Any]) -> dict[str, Any]:
        line.update(done=True, done_reason=_DONE[output.finish_reason])
        line.update(_timings(output, output.usage.prompt_tokens, True))
        if self.generate:
            # the token ids of the conversation so far, for a next call's `context` (derived, not real ids)
            count = min(output.usage.total_tokens, 2048)
            line["context"] = [derive_seed(output.id_seed, "context", i) % 128_000 for i in range(count)]
        return line

    def body(self, output: ModelOutput, request: ModelRequest) -> dict[str, Any]:
        thinking = output.reasoning or None
        line = self._line(output, in_schema_order(output.text, request), thinking, _calls(output))
        return self._final(output, line)

    def lines(self, output: ModelOutput, request: ModelRequest) -> list[dict[str, Any]]:
        """The NDJSON objects of the stream, in order."""
        size = output.stream.chunk_chars
        out: list[dict[str, Any]] = []
        for part in output.parts:
            if isinstance(part, ReasoningPart):
                out.extend(self._line(output, "", d, None) for d in chunk_text(part.text, size))
        text = in_schema_order(output.text, request)
        out.extend(self._line(output, d, None, None) for d in chunk_text(text, size))
        calls = _calls(output)
        if calls and not self.generate:  # /api/generate has no place for tool calls
            out.append(self._line(output, "", None, calls))
        out.append(self._final(output, self._line(output, "", None, None)))
        return out

    def frames(self, output: ModelOutput, request: ModelRequest) -> list[Frame]:
        lines = self.lines(output, request)
        return [Frame(dumps(line), None, i == len(lines) - 1) for i, line in enumerate(lines)]

    def error_frames(
        self, fault: Fault, output: ModelOutput, request: ModelRequest, sent: int
    ) -> list[Frame]:
        message = _MESSAGES[500] if fault.message == _DEFAULT_FAULT_MESSAGE else fault.message
        return [Frame(dumps({"error": message}))]

    def error_body(self, error: ErrorSpec | RequestError, status: int) -> dict[str, Any]:
        return ollama_error_body(error, status)

    def replay_effect(self, output: ModelOutput, request: ModelRequest) -> None:
        """Nothing to redo when the server resends an answer: this codec keeps no state."""
        return None

    def response_headers(self, request_id: str, processing_ms: int) -> dict[str, str]:
        return {}  # Ollama sends no request id or timing headers


class OllamaEmbedCodec(OllamaCodec):
    """`/api/embed` (`legacy=False`: many inputs, `embeddings`) or `/api/embeddings` (one `prompt`,
    `embedding`). It never streams."""

    api: ApiKind = "embeddings"

    def __init__(self, *, legacy: bool = False) -> None:
        super().__init__()
        self.legacy = legacy

    def decode(self, body: Any, headers: Mapping[str, str], params: Mapping[str, str]) -> ModelRequest:
        return ModelRequest.from_decoded(decode_ollama_embed(body, headers, legacy=self.legacy))

    def body(self, output: ModelOutput, request: ModelRequest) -> dict[str, Any]:
        vectors = checked_vectors(output, request)
        if self.legacy:
            return {"embedding": list(vectors[0])}
        timings = _timings(output, output.usage.prompt_tokens, False)
        return {"model": output.model, "embeddings": [list(v) for v in vectors], **timings}

    def frames(self, output: ModelOutput, request: ModelRequest) -> list[Frame]:
        return [Frame(dumps(self.body(output, request)), terminal=True)]
