"""AWS Bedrock Converse: `POST /model/{modelId}/converse` (JSON) and `/converse-stream` (the binary AWS event
stream, `aws_eventstream.py`).

The stream is `messageStart`, then per content block (reasoning, text, tool use, in order) an optional
`contentBlockStart` (tool use only: its id and name), `contentBlockDelta`s (text; the tool input's JSON
text; reasoning text, then its signature) and `contentBlockStop`, then `messageStop` with the stop reason and
`metadata` with the usage and metrics. The non-stream body is their fold. Latency figures are derived from
the token counts, never measured.

HTTP errors are `{"message": …}` with the exception's name in the `x-amzn-ErrorType` header, which is how
botocore tells `ValidationException` from `ThrottlingException`; a mid-stream error is an exception message
(`modelStreamErrorException`) in the event stream.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ...errors import RequestError
from ...model import ApiKind, ErrorSpec, Fault, ModelOutput, ModelRequest, ReasoningPart, TextOut
from ...seeding import derive_seed, token_from_seed
from ..base import Frame
from ..common import dumps, in_schema_order
from ..errors import error_fields, restate_default
from ..framing import Framing
from ..sse import chunk_text
from .eventstream import EVENTSTREAM
from .request import decode_converse

__all__ = ["BedrockCodec", "bedrock_error_type"]

_EXCEPTIONS = {
    400: "ValidationException",
    401: "AccessDeniedException",
    403: "AccessDeniedException",
    404: "ResourceNotFoundException",
    408: "ModelTimeoutException",
    424: "ModelErrorException",
    429: "ThrottlingException",
    500: "InternalServerException",
    503: "ServiceUnavailableException",
}
_MESSAGES = {
    "ValidationException": "The provided request is not valid.",
    "AccessDeniedException": "You don't have access to the model with the specified model ID.",
    "ResourceNotFoundException": "The provided model identifier is invalid.",
    "ModelTimeoutException": "The request took too long to process. Processing time exceeded the model "
    "timeout length.",
    "ModelErrorException": "The model returned an error.",
    "ThrottlingException": "Too many requests, please wait before trying again.",
    "InternalServerException": "The server encountered an internal error.",
    "ServiceUnavailableException": "The service isn't currently available. Try again later.",
}
_STOP = {
    "stop": "end_turn", "length": "max_tokens", "tool_calls": "tool_use", "content_filter": "content_filtered"
}
_DEFAULT_FAULT_MESSAGE = Fault.model_fields["message"].default

Event = dict[str, Any]


def bedrock_error_type(status: int) -> str:
    return _EXCEPTIONS.get(status, "InternalServerException" if status >= 500 else "ValidationException")


def _named(error: ErrorSpec | RequestError, status: int) -> str:
    code = error.code if isinstance(error, RequestError) else (error.code or error.type)
    return code if code in _MESSAGES else bedrock_error_type(status)


class BedrockCodec:
    """The Converse wire format; `stream`: the `converse-stream` route."""

    api: ApiKind = "bedrock"

    def __init__(self, *, stream: bool = False) -> None:
        self.stream = stream

    def decode(self, body: Any, headers: Mapping[str, str], params: Mapping[str, str]) -> ModelRequest:
        neutral = decode_converse(body, params.get("model_id", ""), headers, stream=self.stream)
        return ModelRequest.from_decoded(neutral)

    def framing(self, request: ModelRequest) -> Framing:
        return EVENTSTREAM

    def body(self, output: ModelOutput, request: ModelRequest) -> dict[str, Any]:
        content = [{k: v for k, v in b.items() if k != "_json"} for b in _blocks(output, request)]
        return {"output": {"message": {"role": "assistant", "content": content}},
                "stopReason": _stop_reason(output), **_metadata(output)}  # fmt: skip

    def events(self, output: ModelOutput, request: ModelRequest) -> list[tuple[str, Event]]:
        """(event type, payload) pairs of the healthy stream."""
        size = output.stream.chunk_chars
        events: list[tuple[str, Event]] = [("messageStart", {"role": "assistant"})]
        for i, block in enumerate(_blocks(output, request)):
            if "toolUse" in block:
                use = block["toolUse"]
                start = {"toolUse": {"toolUseId": use["toolUseId"], "name": use["name"]}}
                events.append(("contentBlockStart", {"start": start, "contentBlockIndex": i}))
                deltas: list[Event] = [{"toolUse": {"input": d}} for d in chunk_text(block["_json"], size)]
            elif "reasoningContent" in block:
                reasoning = block["reasoningContent"]["reasoningText"]
                deltas = [{"reasoningContent": {"text": d}} for d in chunk_text(reasoning["text"], size)]
                deltas.append({"reasoningContent": {"signature": reasoning["signature"]}})
            else:
                deltas = [{"text": d} for d in chunk_text(block["text"], size) or [""]]
            events.extend(("contentBlockDelta", {"delta": d, "contentBlockIndex": i}) for d in deltas)
            events.append(("contentBlockStop", {"contentBlockIndex": i}))
        events.append(("messageStop", {"stopReason": _stop_reason(output)}))
        events.append(("metadata", _metadata(output)))
        return events

    def frames(self, output: ModelOutput, request: ModelRequest) -> list[Frame]:
        events = self.events(output, request)
        return [Frame(dumps(e), name, i == len(events) - 1) for i, (name, e) in enumerate(events)]

    def error_frames(
        self, fault: Fault, output: ModelOutput, request: ModelRequest, sent: int
    ) -> list[Frame]:
        default = fault.message == _DEFAULT_FAULT_MESSAGE
        message = _MESSAGES["ModelErrorException"] if default else fault.message
        return [Frame(dumps({"message": message}), "modelStreamErrorException")]

    def error_body(self, error: ErrorSpec | RequestError, status: int) -> dict[str, Any]:
        if isinstance(error, ErrorSpec) and error.body is not None:
            return dict(error.body)
        message, _, _, _ = error_fields(error, status)
        return {"message": restate_default(message, status, _MESSAGES[_named(error, status)])}

    def error_headers(self, error: ErrorSpec | RequestError, status: int) -> dict[str, str]:
        """The exception's name, where botocore reads it."""
        return {"x-amzn-errortype": _named(error, status) + ":http://internal.amazon.com/coral/com.amazon.bedrock/"}

    def replay_effect(self, output: ModelOutput, request: ModelRequest) -> None:
        """Nothing to redo when the server resends an answer: this codec keeps no state."""
        return None

    def response_headers(self, request_id: str, processing_ms: int) -> dict[str, str]:
        h = request_id[4:]
        return {"x-amzn-requestid": f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"}


def _blocks(output: ModelOutput, request: ModelRequest) -> list[dict[str, Any]]:
    """Final content blocks; a tool use's streamed JSON text under the private key `_json`."""
    blocks: list[dict[str, Any]] = []
    for i, part in enumerate(output.parts):
        if isinstance(part, ReasoningPart):
            signature = part.signature or token_from_seed(derive_seed(output.id_seed, "signature", i), 64)
            if blocks and "reasoningContent" in blocks[-1]:
                blocks[-1]["reasoningContent"]["reasoningText"]["text"] += part.text
            else:
                reasoning = {"reasoningText": {"text": part.text, "signature": signature}}
                blocks.append({"reasoningContent": reasoning})
        elif isinstance(part, TextOut):
            if blocks and "text" in blocks[-1]:
                blocks[-1]["text"] += part.text
            else:
                blocks.append({"text": part.text})
        else:
            try:
                value = json.loads(part.arguments)
            except ValueError:
                value = {"raw": part.arguments}
            if not isinstance(value, dict):  # Converse tool inputs are objects
                value = {"value": value}
                text = dumps(value)
            else:
                text = part.arguments
            # an id already in Bedrock's form (a recorded one) is kept; others are derived from the seed
            use_id = part.id if part.id.startswith("tooluse_") else (
                "tooluse_" + token_from_seed(derive_seed(output.id_seed, "tooluse", i), 22))  # fmt: skip
            use = {"toolUseId": use_id, "name": part.name, "input": value}
            blocks.append({"toolUse": use, "_json": text})
    for b in blocks:
        if "text" in b:
            b["text"] = in_schema_order(b["text"], request)
    return blocks or [{"text": ""}]


def _stop_reason(output: ModelOutput) -> str:
    if output.choices[0].stop_sequence is not None:
        return "stop_sequence"
    reason = _STOP[output.finish_reason]
    return "end_turn" if reason == "tool_use" and not output.tool_calls else reason


def _metadata(output: ModelOutput) -> dict[str, Any]:
    usage = output.usage
    tokens = {"inputTokens": usage.prompt_tokens, "outputTokens": usage.completion_tokens,
              "totalTokens": usage.total_tokens}  # fmt: skip
    if usage.cached_tokens:
        tokens["cacheReadInputTokens"] = usage.cached_tokens
    return {"usage": tokens, "metrics": {"latencyMs": 180 + 12 * usage.completion_tokens}}
