"""Google Gemini `generateContent` / `streamGenerateContent` (`/v1beta/` and `/v1/`).

A stream is a sequence of whole `GenerateContentResponse`s, each carrying the next piece of one candidate:
thought text (`{"text", "thought": true}`), answer text, or a whole `functionCall` part (Gemini never splits
one). Every chunk names the model version and the response id; the last chunk of a candidate carries its
`finishReason`, and the last chunk of the stream the `usageMetadata`. With `?alt=sse` the chunks go out as
SSE `data:` events (what `google-genai` asks for); without it as the elements of one JSON array. The
non-stream body is the fold of the chunks: adjacent text parts of a candidate (of the same kind, thought or
answer) joined, everything else kept in order.

Errors are Google's `{"error": {"code", "message", "status"}}`, mid-stream as well. A function call's
arguments are always an object (`args`); a document that is not one is wrapped as `{"value": …}`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ...errors import RequestError
from ...model import ApiKind, Choice, ErrorSpec, Fault, ModelOutput, ModelRequest, ReasoningPart, TextOut
from ...seeding import derive_seed, token_from_seed
from ..base import Frame
from ..common import dumps, in_schema_order
from ..errors import error_fields, restate_default
from ..framing import JSON_ARRAY, SSE, Framing
from ..headers import journal_headers
from ..sse import chunk_text
from .request import decode_gemini_request

__all__ = [
    "GOOGLE_STATUS",
    "GeminiCodec",
    "GoogleAnswers",
    "gemini_model_info",
    "gemini_models_page",
    "google_error_body",
    "google_response_headers",
]

GOOGLE_STATUS = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    409: "ABORTED",
    413: "INVALID_ARGUMENT",
    429: "RESOURCE_EXHAUSTED",
    499: "CANCELLED",
    500: "INTERNAL",
    501: "NOT_IMPLEMENTED",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}
"""HTTP status -> the google.rpc status name Google APIs put in `error.status`."""

_MESSAGES = {
    "INVALID_ARGUMENT": "Request contains an invalid argument.",
    "UNAUTHENTICATED": "API key not valid. Please pass a valid API key.",
    "PERMISSION_DENIED": "The caller does not have permission.",
    "NOT_FOUND": "Requested entity was not found.",
    "RESOURCE_EXHAUSTED": "Resource has been exhausted (e.g. check quota).",
    "INTERNAL": "An internal error has occurred. Please retry or report in "
    "https://developers.generativeai.google/guide/troubleshooting",
    "UNAVAILABLE": "The model is overloaded. Please try again later.",
    "DEADLINE_EXCEEDED": "Deadline expired before operation could complete.",
}
_FINISH = {"stop": "STOP", "length": "MAX_TOKENS", "tool_calls": "STOP", "content_filter": "SAFETY"}
_DEFAULT_FAULT_MESSAGE = Fault.model_fields["message"].default
# SSE without keep-alive comments: google-genai reads a line that is not `data:` as the start of a raw JSON
# error body, so a `: ping` comment would end the stream in a parse error.
_SSE = Framing(SSE.media_type, SSE.render)


def google_status(status: int) -> str:
    return GOOGLE_STATUS.get(status, "INTERNAL" if status >= 500 else "INVALID_ARGUMENT")


def google_error_body(error: ErrorSpec | RequestError, status: int) -> dict[str, Any]:
    """`{"error": {"code", "message", "status"}}`, as every Google API answers an error."""
    if isinstance(error, ErrorSpec) and error.body is not None:
        return dict(error.body)
    message, _, code, _ = error_fields(error, status)
    name = code if code is not None and code in GOOGLE_STATUS.values() else google_status(status)
    own = _MESSAGES.get(name, "The request failed.")
    return {"error": {"code": status, "message": restate_default(message, status, own), "status": name}}


def google_response_headers(request_id: str, processing_ms: int) -> dict[str, str]:
    # Google front ends name the server timing; there is no request-id header in the Gemini API
    return {"server-timing": f"gfet4t7; dur={processing_ms}", "x-synthgpt-request-id": request_id}


def gemini_model_info(model_id: str) -> dict[str, Any]:
    """One `Model` of `GET /v1beta/models/{model}` (fixed limits: every answer repeats)."""
    name = model_id.removeprefix("models/")
    embeds = "embedding" in name
    methods = ["embedContent", "batchEmbedContents"] if embeds else ["generateContent", "countTokens"]
    return {
        "name": "models/" + name,
        "version": "001",
        "displayName": " ".join(p.capitalize() for p in name.split("-")),
        "inputTokenLimit": 2048 if embeds else 1_048_576,
        "outputTokenLimit": 1 if embeds else 65_536,
        "supportedGenerationMethods": methods,
        **({} if embeds else {"thinking": True}),
    }


def gemini_models_page(models: Sequence[str], params: Mapping[str, str]) -> dict[str, Any]:
    """`GET /v1beta/models`: every served model on one page (no `nextPageToken`)."""
    return {"models": [gemini_model_info(m) for m in dict.fromkeys(models)]}


class GoogleAnswers:
    """What every Gemini route answers alike: Google's error shape and headers; no state to replay."""

    def error_body(self, error: ErrorSpec | RequestError, status: int) -> dict[str, Any]:
        return google_error_body(error, status)

    def replay_effect(self, output: ModelOutput, request: ModelRequest) -> None:
        """Nothing to redo when the server resends an answer: this codec keeps no state."""
        return None

    def response_headers(self, request_id: str, processing_ms: int) -> dict[str, str]:
        return google_response_headers(request_id, processing_ms)


class GeminiCodec(GoogleAnswers):
    """The Gemini content-generation wire format; `stream`: the `streamGenerateContent` route."""

    api: ApiKind = "gemini"

    def __init__(self, *, stream: bool = False) -> None:
        self.stream = stream

    def decode(self, body: Any, headers: Mapping[str, str], params: Mapping[str, str]) -> ModelRequest:
        neutral = decode_gemini_request(body, params.get("model", ""))
        neutral["headers"] = journal_headers(headers)
        if self.stream:
            alt = params.get("alt", "json")
            if alt not in ("sse", "json"):
                raise RequestError(f"Invalid value for 'alt': {alt!r} (expected 'sse' or 'json').", "alt",
                                   code="INVALID_ARGUMENT")  # fmt: skip
            neutral.update(stream=True, stream_options={"alt": alt})
        return ModelRequest.from_decoded(neutral)

    def framing(self, request: ModelRequest) -> Framing:
        return _SSE if request.stream_options.get("alt") == "sse" else JSON_ARRAY

    def body(self, output: ModelOutput, request: ModelRequest) -> dict[str, Any]:
        candidates = [
            {"content": {"parts": _parts(c, request, output.id_seed, i) or [{"text": ""}], "role": "model"},
             "finishReason": _FINISH[c.finish_reason], "index": i}
            for i, c in enumerate(output.choices)
        ]  # fmt: skip
        return {"candidates": candidates, "usageMetadata": _usage(output), **_ids(output)}

    def chunks(self, output: ModelOutput, request: ModelRequest) -> list[dict[str, Any]]:
        """The stream's `GenerateContentResponse`s, in order."""
        ids = _ids(output)
        out: list[dict[str, Any]] = []
        size = output.stream.chunk_chars
        for i, choice in enumerate(output.choices):
            pieces: list[dict[str, Any]] = []
            for part in _parts(choice, request, output.id_seed, i):
                if "text" in part:
                    thought = {"thought": True} if part.get("thought") else {}
                    pieces.extend({"text": d, **thought} for d in chunk_text(part["text"], size))
                else:
                    pieces.append(part)
            pieces = pieces or [{"text": ""}]
            for k, piece in enumerate(pieces):
                candidate: dict[str, Any] = {"content": {"parts": [piece], "role": "model"}}
                if k == len(pieces) - 1:
                    candidate["finishReason"] = _FINISH[choice.finish_reason]
                candidate["index"] = i
                out.append({"candidates": [candidate], **ids})
        out[-1] = {"candidates": out[-1]["candidates"], "usageMetadata": _usage(output), **ids}
        return out

    def frames(self, output: ModelOutput, request: ModelRequest) -> list[Frame]:
        chunks = self.chunks(output, request)
        return [Frame(dumps(c), None, i == len(chunks) - 1) for i, c in enumerate(chunks)]

    def error_frames(
        self, fault: Fault, output: ModelOutput, request: ModelRequest, sent: int
    ) -> list[Frame]:
        message = _MESSAGES["INTERNAL"] if fault.message == _DEFAULT_FAULT_MESSAGE else fault.message
        body = {"error": {"code": 500, "message": message, "status": "INTERNAL"}}
        return [Frame(dumps(body), None, terminal=True)]  # terminal: a JSON-array stream closes after it


def _args(arguments: str) -> dict[str, Any]:
    try:
        value = json.loads(arguments)
    except ValueError:
        return {"raw": arguments}
    return value if isinstance(value, dict) else {"value": value}


def _parts(choice: Choice, request: ModelRequest, seed: int, index: int) -> list[dict[str, Any]]:
    """A candidate's final parts: adjacent texts of one kind joined, empty texts left out."""
    parts: list[dict[str, Any]] = []
    signed = not choice.reasoning  # with thoughts, the first function call carries the thought signature
    for k, part in enumerate(choice.parts):
        if isinstance(part, ReasoningPart | TextOut):
            if not part.text:
                continue
            thought = isinstance(part, ReasoningPart)
            last = parts[-1] if parts else None
            if last is not None and "text" in last and bool(last.get("thought")) == thought:
                last["text"] += part.text
            else:
                parts.append({"text": part.text, "thought": True} if thought else {"text": part.text})
        else:
            call: dict[str, Any] = {"functionCall": {"name": part.name, "args": _args(part.arguments)}}
            if not signed:
                signature = derive_seed(seed, "thought-signature", index, k)
                call["thoughtSignature"] = token_from_seed(signature, 64)
                signed = True
            parts.append(call)
    for built in parts:
        if "text" in built and not built.get("thought"):
            built["text"] = in_schema_order(built["text"], request)
    return parts


def _ids(output: ModelOutput) -> dict[str, str]:
    # a rule's pinned id, verbatim, as every API writes it
    seeded = output.stream.id or token_from_seed(derive_seed(output.id_seed, "gemini-response"), 22)
    return {"modelVersion": output.model, "responseId": seeded}


def _usage(output: ModelOutput) -> dict[str, Any]:
    usage = output.usage
    answer = usage.completion_tokens - usage.reasoning_tokens
    out: dict[str, Any] = {
        "promptTokenCount": usage.prompt_tokens,
        "candidatesTokenCount": answer,
        "totalTokenCount": usage.prompt_tokens + usage.completion_tokens,
        "promptTokensDetails": [{"modality": "TEXT", "tokenCount": usage.prompt_tokens}],
    }
    if usage.cached_tokens:
        out["cachedContentTokenCount"] = usage.cached_tokens
    if usage.reasoning_tokens:
        out["thoughtsTokenCount"] = usage.reasoning_tokens
    return out
