"""Anthropic Messages API (`POST /v1/messages`): WIRE.md §4.

The stream is `message_start`, then each content block as `content_block_start` → deltas →
`content_block_stop` (a `ping` after the first start, as real servers send), `message_delta` with the stop
reason and the cumulative usage, and `message_stop`. Every frame carries an `event:` line: the Anthropic
SDKs route on it. The non-stream message is the fold of those events.

Ids are `msg_01…` / `toolu_01…` + 22 base-62 characters derived from the answer's `id_seed`. Thinking
blocks come first and carry their signature; in a stream the signature arrives as one `signature_delta`
right before the block stops. Requests authenticate with `x-api-key` or `Authorization: Bearer`; any
`anthropic-version` is accepted.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from json.encoder import encode_basestring
from typing import Any

from ...errors import RequestError
from ...jsonutil import dumps_many
from ...model import ApiKind, ErrorSpec, Fault, ModelOutput, ModelRequest, ReasoningPart, StreamPlan, TextOut
from ...seeding import derive_seed, token_from_seed
from ..base import Frame
from ..common import dumps, nones
from ..errors import restate_default
from ..headers import journal_headers
from ..runs import FrameRun, Part, expand
from ..sse import chunk_text, text_pieces
from .request import messages_request

__all__ = [
    "ERROR_TYPES",
    "MessagesCodec",
    "anthropic_error_type",
    "anthropic_model_info",
    "anthropic_models_page",
]

ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    504: "timeout_error",
    529: "overloaded_error",
}
"""HTTP status -> `error.type`, as the Anthropic SDKs map them to exception classes (WIRE.md §4.5)."""

_MESSAGES = {
    "invalid_request_error": "Invalid request.",
    "authentication_error": "invalid x-api-key",
    "billing_error": "Your credit balance is too low to access the Anthropic API.",
    "permission_error": "Your API key does not have permission to use the specified resource.",
    "not_found_error": "The requested resource could not be found.",
    "request_too_large": "Request exceeds the maximum allowed number of bytes.",
    "rate_limit_error": "Number of request tokens has exceeded your per-minute rate limit.",
    "api_error": "Internal server error",
    "timeout_error": "Request timed out.",
    "overloaded_error": "Overloaded",
}
_KNOWN_TYPES = frozenset(_MESSAGES)
_STOP_REASONS = {
    "stop": "end_turn",
    "length": "max_tokens",
    "tool_calls": "tool_use",
    "content_filter": "refusal",
}
_DEFAULT_FAULT_MESSAGE = Fault.model_fields["message"].default
_MODEL_CREATED_AT = "2025-02-19T00:00:00Z"

Event = dict[str, Any]


def anthropic_error_type(status: int) -> str:
    return ERROR_TYPES.get(status, "api_error" if status >= 500 else "invalid_request_error")


def _display_name(model_id: str) -> str:
    """`claude-sonnet-4-5` -> `Claude Sonnet 4.5`: words capitalised, version numbers dotted."""
    words: list[str] = []
    for piece in model_id.split("-"):
        if piece.isdigit() and len(piece) <= 2 and words and words[-1].replace(".", "").isdigit():
            words[-1] += "." + piece
        else:
            words.append(piece if piece.isdigit() else piece.capitalize())
    return " ".join(words)


def anthropic_model_info(model_id: str) -> dict[str, Any]:
    """One `ModelInfo` (`GET /v1/models/{id}` with `anthropic-version`); fixed dates, like every answer."""
    return {
        "type": "model",
        "id": model_id,
        "display_name": _display_name(model_id),
        "created_at": _MODEL_CREATED_AT,
        "lifecycle": "active",
    }


def anthropic_models_page(models: Sequence[str], params: Mapping[str, str]) -> dict[str, Any]:
    """`GET /v1/models` in Anthropic's paginated list shape (`before_id` / `after_id` / `limit`)."""
    ids = list(dict.fromkeys(models))
    if params.get("after_id") in ids:
        ids = ids[ids.index(params["after_id"]) + 1 :]
    if params.get("before_id") in ids:
        ids = ids[: ids.index(params["before_id"])]
    try:
        limit = max(1, min(1000, int(params.get("limit", "20"))))
    except ValueError:
        raise RequestError("limit: Input should be a valid integer", "limit") from None
    page = ids[:limit]
    data = [anthropic_model_info(m) for m in page]
    return {
        "data": data,
        "has_more": len(ids) > limit,
        "first_id": page[0] if page else None,
        "last_id": page[-1] if page else None,
    }


class MessagesCodec:
    """The Anthropic Messages wire format."""

    api: ApiKind = "messages"

    def decode(self, body: Any, headers: Mapping[str, str], params: Mapping[str, str]) -> ModelRequest:
        return messages_request(body, journal_headers(headers))

    def body(self, output: ModelOutput, request: ModelRequest) -> dict[str, Any]:
        message = _message(output, _blocks(output), _stop_reason(output))
        message["usage"] = _usage(output, output.usage.completion_tokens)
        return message

    def body_nulls(self, body: dict[str, Any]) -> int:
        """At most the None values of a `body` this codec built: its top-level fields and `usage`'s
        (`jsonutil.dumps_bytes`)."""
        return nones(body, "usage")

    def frames(self, output: ModelOutput, request: ModelRequest) -> list[Frame]:
        return expand(self.frame_parts(output, request))

    def frame_parts(self, output: ModelOutput, request: ModelRequest) -> list[Part]:
        """The events rendered, each text block's deltas as one `FrameRun`; the last (`message_stop`)
        terminal."""
        plain = _plain_text_parts(output)
        return plain if plain is not None else _event_parts(output)

    def events(self, output: ModelOutput, request: ModelRequest) -> list[Event]:
        """The healthy stream's payloads; the last one (`message_stop`) is the terminal event."""
        events: list[Event] = []
        for part in _stream_parts(output):
            if isinstance(part, _TextRun):
                events += part.events()
            else:
                events.append(part)
        return events

    def error_frames(
        self, fault: Fault, output: ModelOutput, request: ModelRequest, sent: int
    ) -> list[Frame]:
        message = "Overloaded" if fault.message == _DEFAULT_FAULT_MESSAGE else fault.message
        payload = {"type": "error", "error": {"type": "overloaded_error", "message": message}}
        return [Frame(dumps(payload), "error")]


    def replay_effect(self, output: ModelOutput, request: ModelRequest) -> None:
        """Nothing to redo when the server resends an answer: this codec keeps no state."""
        return None

    def error_body(self, error: ErrorSpec | RequestError, status: int) -> dict[str, Any]:
        if isinstance(error, ErrorSpec) and error.body is not None:
            return dict(error.body)
        etype = anthropic_error_type(status)
        # A rule may name an Anthropic type; OpenAI's catch-all `invalid_request_error` does not override
        # the status table (a 404 is `not_found_error` here whatever a shared handler called it).
        named = error.type if isinstance(error, ErrorSpec) else None
        if named in _KNOWN_TYPES and named != "invalid_request_error":
            etype = named
        message = restate_default(error.message, status, _MESSAGES[etype])
        return {"type": "error", "error": {"type": etype, "message": message}, "request_id": None}

    def response_headers(self, request_id: str, processing_ms: int) -> dict[str, str]:
        """Headers the Anthropic SDKs read, besides the generic ones (`request-id` -> `_request_id`)."""
        return {"request-id": request_id, "anthropic-organization-id": "synthgpt"}


# ------------------------------------------------------------------------------------------------ stream


def _stream_parts(output: ModelOutput) -> list[Event | _TextRun]:
    """The healthy stream's payloads in order, each text block's deltas as one `_TextRun`; the last one
    (`message_stop`) is the terminal event."""
    start = _message(output, [], None)
    start["usage"] = _usage(output, min(1, output.usage.completion_tokens))
    parts: list[Event | _TextRun] = [{"type": "message_start", "message": start}]
    for index, block in enumerate(_blocks(output)):
        parts.extend(_block_events(block, index, output.stream))
        if index == 0:
            parts.insert(2, {"type": "ping"})  # after the first block's start: never inside a run
    usage = _usage(output, output.usage.completion_tokens)
    usage.pop("service_tier")
    parts.append(
        {"type": "message_delta",
         "delta": {"stop_reason": _stop_reason(output), "stop_sequence": output.choices[0].stop_sequence},
         "usage": usage}
    )  # fmt: skip
    parts.append({"type": "message_stop"})
    return parts


def _event_parts(output: ModelOutput) -> list[Part]:
    """`frame_parts` the general way: each event built, then rendered (a text run from its template)."""
    *events, end = _stream_parts(output)
    if isinstance(end, _TextRun):  # never: the stream ends with message_stop
        raise AssertionError("a Messages stream ends with message_stop")
    whole = [e for e in events if not isinstance(e, _TextRun)]
    texts = iter(_render_events(whole))
    parts: list[Part] = [
        _frame_run(e) if isinstance(e, _TextRun) else Frame(next(texts), e["type"]) for e in events
    ]
    parts.append(Frame(_render(end), end["type"], True))
    return parts


def _plain_text_parts(output: ModelOutput) -> list[Part] | None:
    """`frame_parts` of an answer that is one text block (nearly every stream), written straight from the
    output: the same frames as its events' (`_stream_parts`, `_render_events`), without building a dict
    for each event and checking it against its template (~9 % of a 50-event stream's instructions). Any
    other answer, or one whose values are not of their usual types, gives None: the general way."""
    parts = output.parts
    if len(parts) != 1 or type(parts[0]) is not TextOut:
        return None
    # `usage` as `Any`: compiled (synthgpt.native), reading a count typed `int` unboxes a bool to 1 before
    # the checks below could see it
    usage: Any = output.usage
    prompt, cached, completion = usage.prompt_tokens, usage.cached_tokens, usage.completion_tokens
    model, sequence = output.model, output.choices[0].stop_sequence
    if not (type(prompt) is int and type(cached) is int and type(completion) is int and type(model) is str):
        return None
    if sequence is not None and type(sequence) is not str:
        return None
    msg_id = _message_id(output)
    if type(msg_id) is not str:
        return None
    # what `_usage` counts, as `_stream_parts` puts it in each event
    fresh = prompt - cached
    start = _start_json(msg_id, model, _usage_text(fresh, 0, cached, min(1, completion), "standard"))
    delta = _delta_json(_stop_reason(output), sequence, _usage_text(fresh, 0, cached, completion, None))
    frames: list[Part] = [
        Frame(start, "message_start"),
        Frame(_TEXT_START, "content_block_start"),
        Frame(_PING, "ping"),
    ]
    pieces = text_pieces(parts[0].text, output.stream)
    if pieces:
        frames.append(_frame_run(_TextRun(0, pieces)))
    frames += [
        Frame(_TEXT_STOP, "content_block_stop"),
        Frame(delta, "message_delta"),
        Frame(_STOP, "message_stop", True),
    ]
    return frames


# ------------------------------------------------------------------------------------------------ blocks


def _tool_input(arguments: str) -> tuple[dict[str, Any], str]:
    """The tool input object and the JSON text streamed for it; Anthropic inputs are always objects."""
    try:
        value = json.loads(arguments)
    except ValueError:  # a call cut by max_tokens: its input so far is streamed, the block holds none
        return {}, arguments
    if isinstance(value, dict):
        return value, arguments
    wrapped = {"value": value}
    return wrapped, dumps(wrapped)


def _blocks(output: ModelOutput) -> list[dict[str, Any]]:
    """Final content blocks with, under the private key `_json`, a tool input's streamed text."""
    seed = output.id_seed
    blocks: list[dict[str, Any]] = []
    for index, part in enumerate(output.parts):
        if isinstance(part, ReasoningPart):
            signature = part.signature or token_from_seed(derive_seed(seed, "signature", index), 64)
            blocks.append({"type": "thinking", "thinking": part.text, "signature": signature})
        elif isinstance(part, TextOut):
            if blocks and blocks[-1]["type"] == "text":  # adjacent text parts read as one block
                blocks[-1]["text"] += part.text
            else:
                blocks.append({"type": "text", "text": part.text})
        else:
            value, text = _tool_input(part.arguments)
            # an id already in Anthropic's form (a recorded one) is kept; others are derived from the seed
            tool_id = part.id if part.id.startswith("toolu_") else (
                "toolu_01" + token_from_seed(derive_seed(seed, "toolu", index), 22))  # fmt: skip
            blocks.append(
                {"type": "tool_use", "id": tool_id, "name": part.name, "input": value, "_json": text}
            )
    if not blocks:
        blocks.append({"type": "text", "text": ""})
    return blocks


def _block_events(block: dict[str, Any], index: int, plan: StreamPlan) -> list[Event | _TextRun]:
    kind = block["type"]
    chunk = plan.chunk_chars
    out: list[Event | _TextRun] = []
    if kind == "thinking":
        out.append(_start(index, {"type": "thinking", "thinking": "", "signature": ""}))
        out.extend(
            _delta(index, {"type": "thinking_delta", "thinking": d})
            for d in chunk_text(block["thinking"], chunk)
        )
        out.append(_delta(index, {"type": "signature_delta", "signature": block["signature"]}))
    elif kind == "text":
        out.append(_start(index, {"type": "text", "text": ""}))
        pieces = text_pieces(block["text"], plan)
        if pieces:
            out.append(_TextRun(index, pieces))
    else:
        text = block.pop("_json")
        out.append(_start(index, {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}))
        out.extend(
            _delta(index, {"type": "input_json_delta", "partial_json": d}) for d in chunk_text(text, chunk)
        )
    out.append({"type": "content_block_stop", "index": index})
    return out


@dataclass(slots=True)
class _TextRun:
    """The `text_delta` events of one text block, not yet built: most of a stream's events, which
    `frames` writes from a template instead of building and encoding a dict for each."""

    index: int
    pieces: Sequence[str]

    def events(self) -> list[Event]:
        return [_delta(self.index, {"type": "text_delta", "text": d}) for d in self.pieces]


_PING, _STOP = '{"type":"ping"}', '{"type":"message_stop"}'
_STOP_KEYS = ["type", "index"]


def _block_stop_json(index: int) -> str:
    return '{"type":"content_block_stop","index":' + str(index) + "}"


def _text_start_json(index: int) -> str:
    """A text block's start: its block empty."""
    return f'{{"type":"content_block_start","index":{index},"content_block":{{"type":"text","text":""}}}}'


_TEXT_START, _TEXT_STOP = _text_start_json(0), _block_stop_json(0)
"""The frames around a one-text-block answer's text (`_plain_text_parts`)."""


def _render(event: Event) -> str:
    """`dumps(event)`; the events `_written_out` knows are written from templates (each `dumps` call looks
    for what orjson writes differently, ~1-2 us on these)."""
    text = _written_out(event)
    if text is not None:
        return text
    if event["type"] in _WITH_NULLS:  # their None values counted spare `dumps` a read-back
        return dumps(event, nulls=nones(event, "message", "delta"))
    return dumps(event)


def _written_out(event: Event) -> str | None:
    """What `dumps` writes for `event` when a template here writes it, else None (the general way).

    The templates are those of the events of a type and an index, a text block's start, `message_start`
    and `message_delta`, with their keys in the order `_stream_parts` puts them (tested against
    `json.dumps`). Each checks its event's keys, their order and the types of the values it writes first:
    an event built otherwise is left to `dumps`."""
    kind = event["type"]
    if len(event) == 1:
        if kind == "ping":
            return _PING
        if kind == "message_stop":
            return _STOP
    elif kind == "content_block_stop":
        if list(event) == _STOP_KEYS and type(event["index"]) is int:
            return _block_stop_json(event["index"])
    elif kind == "content_block_start":
        if list(event) != _BLOCK_START_KEYS:
            return None
        index, block = event["index"], event["content_block"]
        if type(index) is int and type(block) is dict and list(block) == _TEXT_KEYS and block == _EMPTY_TEXT:
            return _text_start_json(index)
    elif kind == "message_start":
        return _message_start(event["message"]) if list(event) == _START_EVENT_KEYS else None
    elif kind == "message_delta":
        return _message_delta(event["delta"], event["usage"]) if list(event) == _DELTA_EVENT_KEYS else None
    return None


_BLOCK_START_KEYS = ["type", "index", "content_block"]
_TEXT_KEYS = ["type", "text"]
_EMPTY_TEXT = {"type": "text", "text": ""}
_START_EVENT_KEYS = ["type", "message"]
_DELTA_EVENT_KEYS = ["type", "delta", "usage"]
_START_KEYS = ["id", "type", "role", "model", "content", "stop_reason", "stop_sequence", "usage"]
_DELTA_KEYS = ["stop_reason", "stop_sequence"]
_USAGE_KEYS = ["input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens"]
_TIER_USAGE_KEYS = [*_USAGE_KEYS, "service_tier"]


def _message_start(message: Any) -> str | None:
    """`message_start`'s JSON: a message with no content yet, as `_stream_parts` builds it; else None."""
    if type(message) is not dict or list(message) != _START_KEYS:
        return None
    msg_id, model = message["id"], message["model"]
    if not (type(msg_id) is str and type(model) is str):
        return None
    if message["content"] != [] or message["stop_reason"] is not None or message["stop_sequence"] is not None:
        return None
    written = _usage_json(message["usage"], True)
    return None if written is None else _start_json(msg_id, model, written)


def _start_json(msg_id: str, model: str, usage: str) -> str:
    """`message_start`'s JSON for a message with no content yet, its usage already written."""
    return (f'{{"type":"message_start","message":{{"id":{encode_basestring(msg_id)},"type":"message",'
            f'"role":"assistant","model":{encode_basestring(model)},"content":[],"stop_reason":null,'
            f'"stop_sequence":null,"usage":{usage}}}}}')  # fmt: skip


def _message_delta(delta: Any, usage: Any) -> str | None:
    """`message_delta`'s JSON, as `_stream_parts` builds it; else None."""
    if type(delta) is not dict or list(delta) != _DELTA_KEYS:
        return None
    reason, sequence = delta["stop_reason"], delta["stop_sequence"]
    if type(reason) is not str or (sequence is not None and type(sequence) is not str):
        return None
    written = _usage_json(usage, False)
    return None if written is None else _delta_json(reason, sequence, written)


def _delta_json(reason: str, sequence: str | None, usage: str) -> str:
    """`message_delta`'s JSON, its usage already written."""
    stop = "null" if sequence is None else encode_basestring(sequence)
    return (f'{{"type":"message_delta","delta":{{"stop_reason":{encode_basestring(reason)},'
            f'"stop_sequence":{stop}}},"usage":{usage}}}')  # fmt: skip


def _usage_json(usage: Any, tier: bool) -> str | None:
    """The JSON of `_usage`'s dict (without its `service_tier` unless `tier`), or None if it is not
    four ints and, with `tier`, the tier's str, in that order."""
    if type(usage) is not dict or list(usage) != (_TIER_USAGE_KEYS if tier else _USAGE_KEYS):
        return None
    numbers = [usage[k] for k in _USAGE_KEYS]
    service = usage["service_tier"] if tier else None
    if any(type(n) is not int for n in numbers) or (tier and type(service) is not str):
        return None
    a, b, c, d = numbers
    return _usage_text(a, b, c, d, service)


def _usage_text(inputs: int, created: int, read: int, outputs: int, tier: str | None) -> str:
    """The JSON of `_usage`'s dict from its four counts, with its `service_tier` unless None."""
    written = (f'{{"input_tokens":{inputs},"cache_creation_input_tokens":{created},'
               f'"cache_read_input_tokens":{read},"output_tokens":{outputs}')  # fmt: skip
    return written + "}" if tier is None else f'{written},"service_tier":{encode_basestring(tier)}}}'


_WITH_NULLS = frozenset({"message_start", "message_delta"})


def _render_events(events: list[Event]) -> list[str]:
    """`[_render(e) for e in events]`, the events not written out by `_written_out` in one `dumps_many`
    call (one check of orjson's output for all of them)."""
    out: list[str | None] = []
    rest: list[Event] = []
    nulls = 0
    for event in events:
        text = _written_out(event)
        if text is None:
            rest.append(event)
            if event["type"] in _WITH_NULLS:
                nulls += nones(event, "message", "delta")
        out.append(text)
    dumped = iter(dumps_many(rest, nulls=nulls) if rest else ())
    return [next(dumped) if text is None else text for text in out]


def _frame_run(run: _TextRun) -> FrameRun:
    """The frames of `run`'s events: what `dumps` writes for `run.events()` (tested)."""
    head = '{"type":"content_block_delta","index":' + str(run.index) + ',"delta":{"type":"text_delta","text":'
    return FrameRun("content_block_delta", head, "}}", run.pieces)


def _start(index: int, block: dict[str, Any]) -> Event:
    return {"type": "content_block_start", "index": index, "content_block": block}


def _delta(index: int, delta: dict[str, Any]) -> Event:
    return {"type": "content_block_delta", "index": index, "delta": delta}


# ----------------------------------------------------------------------------------------------- message


def _stop_reason(output: ModelOutput) -> str:
    if output.choices[0].stop_sequence is not None:
        return "stop_sequence"
    reason = _STOP_REASONS[output.finish_reason]
    if reason == "tool_use" and not output.tool_calls:
        return "end_turn"
    return reason


def _message_id(output: ModelOutput) -> str:
    """`msg_01…` from the answer's seed, or the id its rule pins."""
    return output.stream.id or "msg_01" + token_from_seed(derive_seed(output.id_seed, "message"), 22)


def _message(output: ModelOutput, blocks: list[dict[str, Any]], stop_reason: str | None) -> dict[str, Any]:
    for b in blocks:
        b.pop("_json", None)
    return {
        "id": _message_id(output),
        "type": "message",
        "role": "assistant",
        "model": output.model,
        "content": blocks,
        "stop_reason": stop_reason,
        "stop_sequence": output.choices[0].stop_sequence if stop_reason else None,
    }


def _usage(output: ModelOutput, output_tokens: int) -> dict[str, Any]:
    usage = output.usage
    return {
        "input_tokens": usage.prompt_tokens - usage.cached_tokens,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": usage.cached_tokens,
        "output_tokens": output_tokens,
        "service_tier": "standard",
    }
