"""OpenAI Responses API (`POST /v1/responses`, Azure `POST /openai/v1/responses`): WIRE.md §3.

One event list is the source of both encodings: the stream sends it (with `event:` lines and a
`sequence_number` on every payload), and the non-stream body is the `response` of its terminal event,
which is the fold of everything before it. Ids are `resp_`/`msg_`/`fc_`/`rs_` + 48 hex digits derived
from the answer's `id_seed`; `created_at` is the answer's `created`.

`previous_response_id` continues a conversation kept in this codec's own bounded store (one store per
codec instance, so per app). Responses asked with `store: false` are not kept.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial
from json.encoder import encode_basestring
from typing import Any

from ...errors import RequestError, ResponseNotFound
from ...jsonutil import dumps_many
from ...model import ApiKind, ErrorSpec, Fault, Message, ModelOutput, ModelRequest, ToolCall, built
from ..base import Frame
from ..common import dumps, nones
from ..errors import openai_error_body
from ..headers import journal_headers
from ..openai_chat.encode import openai_response_headers
from ..runs import FrameRun, Part, expand
from .events import (
    UNKNOWN_ITEM_TYPE,
    Event,
    PlainMessage,
    TextRun,
    response_body,
    response_events,
    response_id,
    response_object,
    stream_parts,
)
from .request import (
    conversation_messages,
    decode_input,
    decode_settings,
    instructions_message,
    is_conversation,
    type_error,
)
from .store import ConversationStore, ResponseStore

__all__ = ["UNKNOWN_ITEM_TYPE", "ResponseNotFound", "ResponsesCodec"]


def _response_nulls(response: dict[str, Any]) -> int:
    """At most the None values of a response object: its top-level fields, `reasoning`'s and each echoed
    tool's (a function tool without a description holds `description: null`). A count short of them
    costs the encoder a read-back of the whole text (`jsonutil.dumps_bytes`, `dumps_many`)."""
    n = nones(response, "reasoning")
    for tool in response.get("tools") or ():
        if type(tool) is dict:
            n += nones(tool)
    return n


class ResponsesCodec:
    """The Responses wire format. Keep one instance per app: it holds the `previous_response_id` store."""

    api: ApiKind = "responses"

    def __init__(self, store: ConversationStore | None = None, *, store_size: int = 1000) -> None:
        self.store: ConversationStore = store if store is not None else ResponseStore(store_size)

    # ------------------------------------------------------------------------------------------- decode

    def decode(self, body: Any, headers: Mapping[str, str], params: Mapping[str, str]) -> ModelRequest:
        if not isinstance(body, dict):
            raise RequestError("The request body must be a JSON object.", None, code="invalid_type")
        model = body.get("model")
        if model is None:
            raise RequestError(
                "Missing required parameter: 'model'.", "model", code="missing_required_parameter"
            )
        if not isinstance(model, str):
            raise type_error("model", "a string", model)
        settings = decode_settings(body)
        history: tuple[Message, ...] = ()
        previous = body.get("previous_response_id")
        if previous is not None:
            found = self.store.get(previous)
            if found is None:
                raise ResponseNotFound(previous)
            history = found
        elif body.get("input") is None:
            raise RequestError(
                "Missing required parameter: 'input'.", "input", code="missing_required_parameter"
            )
        given = body.get("input")
        turn = decode_input(given, history) if given is not None else []
        instructions = body.get("instructions")
        system = [instructions_message(instructions, is_conversation(given))] if instructions else []
        messages = (*system, *history, *turn)
        if not any(m.role != "system" for m in messages):
            raise RequestError(
                "Invalid 'input': the conversation has no messages.", "input", code="empty_array"
            )
        # every value checked by the decoders above: built without validating it again (`model.built`)
        request = built(
            ModelRequest, api="responses", model=model, messages=messages, headers=journal_headers(headers),
            **settings,
        )
        if previous is None:  # its tools, and its messages if a conversation, are kept ones (`_interned`)
            request.__pydantic_private__["_interned"] = True  # type: ignore[index]
        return request

    # ------------------------------------------------------------------------------------------- encode

    def body(self, output: ModelOutput, request: ModelRequest) -> dict[str, Any]:
        response = response_body(output, request)  # the terminal event's, without the events before it
        self._remember(output, request, response)
        return response

    def body_nulls(self, body: dict[str, Any]) -> int:
        """At most the None values of a `body` this codec built: its top-level fields, `reasoning`'s and
        the echoed tools' (`jsonutil.dumps_bytes`)."""
        return _response_nulls(body)

    def frames(self, output: ModelOutput, request: ModelRequest) -> list[Frame]:
        return expand(self.frame_parts(output, request))

    def frame_parts(self, output: ModelOutput, request: ModelRequest) -> list[Part]:
        """`response_events` rendered, numbered as they come; each run of text deltas a `FrameRun`, each plain
        message's other events written from templates (`_message_parts`)."""
        created, progress, *events, end = stream_parts(output, request)
        if not (isinstance(created, dict) and isinstance(progress, dict) and isinstance(end, dict)):
            raise AssertionError("a Responses stream opens and ends with events carrying the response")
        shell, final = created["response"], end["response"]
        if progress["response"] is not shell:  # never: `stream_parts` gives both the one in-progress object
            raise AssertionError("response.created and .in_progress carry one response object")
        out: list[Part] = []
        rest: list[tuple[int, Event]] = []  # the other events, and where their frames go in `out`
        number = 2
        for event in events:
            if isinstance(event, PlainMessage):
                out += _message_parts(event, number)
                number += len(event)
            elif isinstance(event, TextRun):
                out.append(_text_run(event, number))
                number += len(event.pieces)
            else:
                event["sequence_number"] = number
                rest.append((len(out), event))
                out.append(_PENDING)
                number += 1
        # one encoder pass for the stream (see `dumps_many`); the response objects hold the only None
        # values of the stream's events, so a `null` in the other events sends them all to `dumps`
        nulls = _response_nulls(shell) + _response_nulls(final)
        opened, ended, *texts = dumps_many([shell, final, *(e for _, e in rest)], nulls=nulls)
        for (at, event), text in zip(rest, texts, strict=True):
            out[at] = Frame(text, event["type"])
        end["sequence_number"] = number
        self._remember(output, request, final)
        return [
            _response_frame(created["type"], opened, 0),
            _response_frame(progress["type"], opened, 1),
            *out,
            _response_frame(end["type"], ended, number, True),
        ]

    def events(self, output: ModelOutput, request: ModelRequest) -> list[Event]:
        """The healthy stream's payloads, numbered; the last one is the terminal event."""
        return response_events(output, request)

    def error_frames(
        self, fault: Fault, output: ModelOutput, request: ModelRequest, sent: int
    ) -> list[Frame]:
        """An `error` event, then `response.failed` carrying the items finished before the cut."""
        done = [
            e["item"] for e in self.events(output, request)[:sent] if e["type"] == "response.output_item.done"
        ]
        error = {
            "type": "error",
            "code": "server_error",
            "message": fault.message,
            "param": None,
            "sequence_number": sent,
        }
        failed = response_object(output, request, "failed", done)
        failed["error"] = {"code": "server_error", "message": fault.message}
        final = {"type": "response.failed", "response": failed, "sequence_number": sent + 1}
        return [Frame(dumps(error), "error"), Frame(dumps(final), "response.failed")]

    def error_body(self, error: ErrorSpec | RequestError, status: int) -> dict[str, Any]:
        return openai_error_body(error, status)

    def response_headers(self, request_id: str, processing_ms: int) -> dict[str, str]:
        return openai_response_headers(request_id, processing_ms)

    # ---------------------------------------------------------------------------------------------- store

    def replayable(self, body: Any) -> bool:
        """A request continuing an earlier answer depends on what the store still holds: never resent."""
        return not (isinstance(body, dict) and body.get("previous_response_id") is not None)

    def replay_effect(self, output: ModelOutput, request: ModelRequest) -> Callable[[], None] | None:
        """What encoding this answer keeps (its store entry), to keep again when the server resends it."""
        if request.extra.get("store") is False or output.error is not None:
            return None
        earlier = conversation_messages(request.messages, bool(request.extra.get("instructions")))
        conversation = (*earlier, *_as_messages(output))
        return partial(self.store.put, response_id(output), conversation)

    def _remember(self, output: ModelOutput, request: ModelRequest, response: Mapping[str, Any]) -> None:
        if request.extra.get("store") is False or output.error is not None:
            return
        earlier = conversation_messages(request.messages, bool(request.extra.get("instructions")))
        self.store.put(response["id"], (*earlier, *_as_messages(output)))


def _text_run(run: TextRun, first: int) -> FrameRun:
    """The frames of `run`'s events numbered from `first`: what `dumps` writes for `run.events()` with
    their sequence numbers (tested)."""
    head = (
        f'{{"type":"response.output_text.delta","item_id":{encode_basestring(run.item_id)},'
        f'"output_index":{run.output_index},"content_index":0,"delta":'
    )
    tail = ',"logprobs":[],"sequence_number":'
    return FrameRun("response.output_text.delta", head, tail, run.pieces, first)


def _message_parts(message: PlainMessage, first: int) -> list[Part]:
    """The frames of `message.events()` numbered from `first`: what `dumps` writes for each (tested), from
    the JSON of its item id, its text and its status (`encode_basestring` writes a str as `dumps` does)."""
    item, index = message.item, message.index
    item_id = encode_basestring(item["id"])
    text = encode_basestring(item["content"][0]["text"])
    ids = f'"item_id":{item_id},"output_index":{index},"content_index":0'
    part = f'{{"type":"output_text","annotations":[],"logprobs":[],"text":{text}}}'
    shell = f'{{"id":{item_id},"type":"message","status":'
    whole = f'{shell}{encode_basestring(item["status"])},"content":[{part}],"role":"assistant"}}'
    added = f'{shell}"in_progress","content":[],"role":"assistant"}}'
    parts: list[Part] = [
        Frame(f'{{"type":"response.output_item.added","output_index":{index},"item":{added},'
              f'"sequence_number":{first}}}', "response.output_item.added"),
        Frame(f'{{"type":"response.content_part.added",{ids},"part":{_EMPTY_PART},'
              f'"sequence_number":{first + 1}}}', "response.content_part.added"),
    ]  # fmt: skip
    if message.pieces:
        parts.append(_text_run(TextRun(item["id"], index, message.pieces), first + 2))
    done = first + 2 + len(message.pieces)
    parts += [
        Frame(f'{{"type":"response.output_text.done",{ids},"text":{text},"logprobs":[],'
              f'"sequence_number":{done}}}', "response.output_text.done"),
        Frame(f'{{"type":"response.content_part.done",{ids},"part":{part},"sequence_number":{done + 1}}}',
              "response.content_part.done"),
        Frame(f'{{"type":"response.output_item.done","output_index":{index},"item":{whole},'
              f'"sequence_number":{done + 2}}}', "response.output_item.done"),
    ]  # fmt: skip
    return parts


_EMPTY_PART = '{"type":"output_text","annotations":[],"logprobs":[],"text":""}'

_PENDING = Frame("", None)
"""Where the frame of an event rendered with the others goes, until it is."""


def _response_frame(kind: str, response: str, number: int, last: bool = False) -> Frame:
    """The frame of an event carrying the response object whose JSON is `response`: what `dumps` writes
    for `{"type": kind, "response": …, "sequence_number": number}`."""
    return Frame(f'{{"type":{encode_basestring(kind)},"response":{response},"sequence_number":{number}}}',
                 kind, last)  # fmt: skip


def _as_messages(output: ModelOutput) -> tuple[Message, ...]:
    """The answer as the conversation history a later `previous_response_id` request continues."""
    text = output.text
    # built, not validated: the output's fields are already the types a Message holds (tested equal)
    calls = tuple(built(ToolCall, id=p.id, name=p.name, arguments=p.arguments) for p in output.tool_calls)
    if not text and not calls:
        return ()
    return (built(Message, role="assistant", content=text, tool_calls=calls),)
