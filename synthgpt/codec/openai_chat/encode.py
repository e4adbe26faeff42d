"""OpenAI Chat Completions (`POST /v1/chat/completions`): the non-stream body and the chunk stream.

Both come from one event sequence: per choice, the deltas a stream would send (`choice_deltas`). The
stream renders each delta as a `chat.completion.chunk`; the non-stream body is their fold (`fold_deltas`),
computed with the text in one piece. So stream and non-stream carry the same text and tool calls.

Wire rules followed (WIRE.md §2.3): every chunk repeats id/created/model/system_fingerprint; `role` only
in the first delta of a choice; a tool call's `id`/`type`/`name` only in its first delta, later deltas
carry `index` and argument fragments; calls are emitted in index order; one finish chunk per choice;
with n > 1 the choices are interleaved one delta at a time, choice 0 first; with
`stream_options.include_usage` a `choices: []` usage chunk comes last, then `data: [DONE]`.
OpenAI's reasoning shows only in `usage.completion_tokens_details.reasoning_tokens`; the `reasoning_content`
of OpenAI-compatible servers is sent where the request asks for it (`chat_reasoning.py`).

With `logprobs: true` (WIRE.md §2.2, C1 `83b060bae42e`) each choice carries
`logprobs: {content: [...], refusal: null}`, one entry per token of its text (`synthgpt.logprobs`). The
stream then cuts text on token boundaries, so each content chunk carries the entries of exactly its
tokens; the role chunk carries `content: []` (`null` when the answer is only tool calls, whose message
content is null), tool-call and finish chunks `logprobs: null`. The streamed entries, concatenated, are
the non-stream list. Without `logprobs` nothing changes on the wire.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from json.encoder import encode_basestring
from typing import Any

from ...errors import RequestError
from ...jsonutil import dumps
from ...logprobs import TokenLogprob, alternatives_asked, group_by_chars, token_logprobs
from ...model import ApiKind, Choice, ErrorSpec, Fault, ModelOutput, ModelRequest, TextOut, Usage
from ...seeding import HEX, derive_seed, token_from_seed
from ..base import Frame
from ..common import nones
from ..errors import openai_error_body
from ..runs import FrameRun, Part, expand
from ..sse import chunk_pieces, chunk_text, text_deltas
from .reasoning import shows_reasoning
from .request import decode_chat_request

__all__ = [
    "ChatCodec",
    "body_message",
    "choice_deltas",
    "choice_logprobs",
    "completion_id",
    "fold_deltas",
    "logprobs_asked",
    "openai_response_headers",
    "system_fingerprint",
    "usage_body",
]

DONE = Frame("[DONE]", terminal=True)


_OPENING = {"role": "assistant", "content": "", "refusal": None}
_OPENING_KEYS = list(_OPENING)
_OPENING_JSON = '{"role":"assistant","content":"","refusal":null}'


def delta_json(delta: dict[str, Any]) -> str:
    """`dumps(delta)`, with the shapes that make up most of a stream rendered directly (same bytes): a
    text's opening delta (whose `null` would cost dumps a read-back), text and argument deltas."""
    if len(delta) == 3 and delta == _OPENING and list(delta) == _OPENING_KEYS:
        return _OPENING_JSON
    if len(delta) == 1:
        if "content" in delta:
            return '{"content":' + encode_basestring(delta["content"]) + "}"
        calls = delta.get("tool_calls")
        if calls and len(calls[0]) == 2 and len(calls[0]["function"]) == 1:
            args = encode_basestring(calls[0]["function"]["arguments"])
            return f'{{"tool_calls":[{{"index":{calls[0]["index"]},"function":{{"arguments":{args}}}}}]}}'
    return dumps(delta)


def completion_id(output: ModelOutput) -> str:
    if output.stream.id is not None:  # pinned by the rule
        return output.stream.id
    return "chatcmpl-" + token_from_seed(derive_seed(output.id_seed, "chatcmpl"), 29)


def served_tier(request: ModelRequest) -> str:
    """The tier an answer reports: the one asked for, except that `auto` (and no choice) is served as
    `default`, as the API does."""
    tier = request.extra.get("service_tier")
    return tier if isinstance(tier, str) and tier not in ("auto", "default") else "default"


@lru_cache(maxsize=256)  # a pure function of the model name, asked for on every answer
def system_fingerprint(model: str) -> str:
    """Stable per model name, as a real deployment's fingerprint is stable per configuration."""
    return "fp_" + token_from_seed(derive_seed("system_fingerprint", model), 10, HEX)


def usage_body(usage: Usage) -> dict[str, Any]:
    return {
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "total_tokens": usage.total_tokens,
        "prompt_tokens_details": {"cached_tokens": usage.cached_tokens, "audio_tokens": 0},
        "completion_tokens_details": {
            "reasoning_tokens": usage.reasoning_tokens,
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        },
    }


def openai_response_headers(request_id: str, processing_ms: int) -> dict[str, str]:
    """The headers every OpenAI answer carries (SDKs expose `x-request-id` as `_request_id`)."""
    return {
        "x-request-id": request_id,
        "openai-processing-ms": str(processing_ms),
        "openai-version": "2020-10-01",
    }


def logprobs_asked(request: ModelRequest) -> int | None:
    """How many alternatives per token the request asks for (`top_logprobs`, 0 when not given) when it
    sets `logprobs: true`; None when it does not. The decoder has checked both fields; a request built in
    Python is held to the same 0..20."""
    if request.extra.get("logprobs") is not True:
        return None
    return alternatives_asked(request.extra.get("top_logprobs"))


def choice_logprobs(output: ModelOutput, index: int, top: int) -> list[TokenLogprob]:
    """The entries of choice `index`'s text: seeded by the answer and the choice, so the stream and the
    body of one answer carry the same values."""
    return token_logprobs(output.choices[index].text, derive_seed(output.id_seed, "logprobs", index), top)


def legacy_functions(request: ModelRequest) -> bool:
    """The request declares the deprecated `functions`: a call is answered as `function_call`."""
    return request.extra.get("functions") is not None


def finish_reason(choice: Choice, legacy: bool) -> str:
    return "function_call" if legacy and choice.finish_reason == "tool_calls" else choice.finish_reason


def choice_deltas(
    choice: Choice,
    chunk_chars: int | None,
    pieces: list[str] | None = None,
    legacy: bool = False,
    reasoning: bool = False,
) -> list[dict[str, Any]]:
    """The deltas of one choice, in wire order, without the finish (that is `choice.finish_reason`).

    `chunk_chars=None` keeps each text and each argument string in one piece (the non-stream form).
    `pieces`, when given, are the text's content deltas (cut on token boundaries for logprobs).
    `reasoning` sends the reasoning text first, as `reasoning_content` (see `chat_reasoning`).
    """
    deltas: list[dict[str, Any]] = []
    for part in _delta_parts(choice, chunk_chars, pieces, legacy, reasoning):
        if isinstance(part, _Contents):
            deltas += [{"content": p} for p in part.texts]
        else:
            deltas.append(part)
    return deltas


@dataclass(slots=True)
class _Contents:
    """The `{"content": text}` deltas of a choice's text, one per text: most of a stream, which
    `frame_parts` writes as one `FrameRun` instead of a dict and a JSON text each."""

    texts: Sequence[str]


def _delta_parts(
    choice: Choice, chunk_chars: int | None, pieces: Sequence[str] | None, legacy: bool, reasoning: bool
) -> list[dict[str, Any] | _Contents]:
    """`choice_deltas`, the content deltas as one `_Contents`."""
    text = choice.text
    calls = choice.tool_calls
    first: dict[str, Any] = {"role": "assistant", "content": "" if text or not calls else None}
    deltas: list[dict[str, Any] | _Contents] = [first]
    thought = choice.reasoning if reasoning else ""
    if thought:
        deltas += [
            {"reasoning_content": p} for p in (chunk_text(thought, chunk_chars) if chunk_chars else [thought])
        ]
    if text:
        if pieces is None:
            pieces = chunk_pieces(text, chunk_chars) if chunk_chars else [text]
        deltas.append(_Contents(pieces))
    if legacy and calls:
        # one function call, no id or index: the deprecated shape has room for nothing more
        call = calls[0]
        opening = {"name": call.name, "arguments": ""}
        if text:
            deltas.append({"function_call": opening})
        else:
            first["function_call"] = opening
        args = chunk_text(call.arguments, chunk_chars) if chunk_chars else [call.arguments]
        deltas += [{"function_call": {"arguments": a}} for a in args if a]
        calls = ()
    for k, call in enumerate(calls):
        fn = {"name": call.name, "arguments": ""}
        start = {"index": k, "id": call.id, "type": "function", "function": fn}
        if k == 0 and not text:
            first["tool_calls"] = [start]  # a pure tool answer opens with role and call 0 together
        else:
            deltas.append({"tool_calls": [start]})
        args = chunk_text(call.arguments, chunk_chars) if chunk_chars else [call.arguments]
        deltas += [{"tool_calls": [{"index": k, "function": {"arguments": a}}]} for a in args if a]
    first["refusal"] = None
    return deltas


def body_message(choice: Choice, legacy: bool = False, reasoning: bool = False) -> dict[str, Any]:
    """The non-stream body's message: `fold_deltas(choice_deltas(choice, None, ...))`, a choice of text
    alone (most answers) written directly, without the deltas (tests/codec/test_fold_property.py)."""
    parts = choice.parts
    if all(type(p) is TextOut for p in parts):
        text = "".join([p.text for p in parts])  # type: ignore[union-attr]  # TextOut, checked above
        return {"role": "assistant", "content": text, "refusal": None, "annotations": []}
    return fold_deltas(choice_deltas(choice, None, legacy=legacy, reasoning=reasoning))


def fold_deltas(deltas: list[dict[str, Any]]) -> dict[str, Any]:
    """The assistant message a client assembles from `deltas` (strings concatenated, calls by index)."""
    content: str | None = None
    calls: list[dict[str, Any]] = []
    function: dict[str, str] | None = None
    thought: str | None = None
    for d in deltas:
        if "reasoning_content" in d:
            thought = (thought or "") + d["reasoning_content"]
        if d.get("content") is not None:
            content = (content or "") + d["content"]
        if "function_call" in d:
            part = d["function_call"]
            if function is None:
                function = {"name": part["name"], "arguments": ""}
            function["arguments"] += part.get("arguments", "")
        for tc in d.get("tool_calls", ()):
            k = tc["index"]
            if k == len(calls):
                calls.append(
                    {
                        "id": tc["id"],
                        "type": tc["type"],
                        "function": {"name": tc["function"]["name"], "arguments": ""},
                    }
                )
            calls[k]["function"]["arguments"] += tc["function"].get("arguments", "")
    message: dict[str, Any] = {"role": "assistant", "content": content, "refusal": None, "annotations": []}
    if thought is not None:
        message["reasoning_content"] = thought
    if calls:
        message["tool_calls"] = calls
    if function is not None:
        message["function_call"] = function
    return message


def _finish_chunk(index: int, choice: Choice, legacy: bool = False) -> str:
    finish = encode_basestring(finish_reason(choice, legacy))  # a str: what dumps writes (tested)
    return f'{{"index":{index},"delta":{{}},"logprobs":null,"finish_reason":{finish}}}'


def _logprob_chunks(
    output: ModelOutput, index: int, chunk_chars: int, top: int, legacy: bool, reasoning: bool
) -> list[str]:
    """The rendered chunks of one choice when logprobs are asked for: text cut on token boundaries, each
    content chunk with the entries of its tokens."""
    choice = output.choices[index]
    groups = group_by_chars(choice_logprobs(output, index, top), chunk_chars)
    deltas = choice_deltas(choice, chunk_chars, [text for text, _ in groups], legacy, reasoning)
    first = (
        '{"content":[],"refusal":null}'
        if deltas[0]["content"] is not None
        else '{"content":null,"refusal":null}'
    )
    thinking = ["null"] * sum(1 for d in deltas if "reasoning_content" in d)  # reasoning has no entries
    logprobs = [
        first,
        *thinking,
        *('{"content":' + dumps(entries) + ',"refusal":null}' for _, entries in groups),
    ]
    logprobs += ["null"] * (len(deltas) - len(logprobs))  # tool-call deltas carry no content tokens
    chunks = [
        f'{{"index":{index},"delta":{delta_json(d)},"logprobs":{lp},"finish_reason":null}}'
        for d, lp in zip(deltas, logprobs, strict=True)
    ]
    chunks.append(_finish_chunk(index, choice, legacy))
    return chunks


def _plain_chunks(
    head: str, index: int, choice: Choice, deltas: list[dict[str, Any] | _Contents], legacy: bool
) -> list[Part]:
    """The chunks of choice `index` without logprobs: `head` (the envelope up to `choices`) and each
    delta, its text deltas as one `FrameRun`, then the finish chunk."""
    pre = head + f'{{"index":{index},"delta":'
    post = ',"logprobs":null,"finish_reason":null}]}'
    chunks: list[Part] = [
        # what `delta_json` writes for each of them (tested)
        FrameRun(None, pre + '{"content":', "}" + post, d.texts)
        if isinstance(d, _Contents)
        else Frame(pre + delta_json(d) + post)
        for d in deltas
    ]
    chunks.append(Frame(head + _finish_chunk(index, choice, legacy) + "]}"))
    return chunks


class ChatCodec:
    """The Chat Completions wire format (a `WireCodec`)."""

    api: ApiKind = "chat"

    def decode(self, body: Any, headers: Mapping[str, str], params: Mapping[str, str]) -> ModelRequest:
        return decode_chat_request(body, headers, params)

    def body(self, output: ModelOutput, request: ModelRequest) -> dict[str, Any]:
        legacy = legacy_functions(request)
        shown = shows_reasoning(request)
        choices: list[dict[str, Any]] = [
            {
                "index": i,
                "message": body_message(choice, legacy, shown),
                "logprobs": None,
                "finish_reason": finish_reason(choice, legacy),
            }
            for i, choice in enumerate(output.choices)
        ]
        top = logprobs_asked(request)
        if top is not None:
            for i, c in enumerate(choices):
                # content tokens mirror the message: none (null) when its content is null
                entries = choice_logprobs(output, i, top) if c["message"]["content"] is not None else None
                c["logprobs"] = {"content": entries, "refusal": None}
        return {
            "id": completion_id(output),
            "object": "chat.completion",
            "created": output.created,
            "model": output.model,
            "choices": choices,
            "usage": usage_body(output.usage),
            "service_tier": served_tier(request),
            "system_fingerprint": system_fingerprint(output.model),
        }

    def body_nulls(self, body: dict[str, Any]) -> int:
        """At most the None values of a `body` this codec built: the choices' `logprobs` and their
        messages' top-level fields (what spares the encoder its read-back, `jsonutil.dumps_bytes`)."""
        n = 0
        for c in body["choices"]:  # `nones(c, …)` each, for one or two choices without a generator
            n += nones(c, "message", "logprobs")
        return n

    def frames(self, output: ModelOutput, request: ModelRequest) -> list[Frame]:
        return expand(self.frame_parts(output, request))

    def frame_parts(self, output: ModelOutput, request: ModelRequest) -> list[Part]:
        """The chunks: with one choice, its text deltas as one `FrameRun`; with several, interleaved one
        delta at a time (choice 0 first); then the usage chunk when asked for, and `[DONE]`."""
        # The envelope is the same for every chunk: render it once, dump only each choice. Its strings are
        # written as `dumps` writes a string (tests/codec/test_frame_runs.py).
        head = (
            '{"id":'
            + encode_basestring(completion_id(output))
            + ',"object":"chat.completion.chunk","created":'
            + str(output.created)
            + ',"model":'
            + encode_basestring(output.model)
            + ',"service_tier":'
            + encode_basestring(served_tier(request))
            + ',"system_fingerprint":'
            + encode_basestring(system_fingerprint(output.model))
            + ',"choices":['
        )
        top = logprobs_asked(request)
        legacy = legacy_functions(request)
        shown = shows_reasoning(request)
        plan = output.stream
        per_choice: list[list[Part]] = []
        for i, choice in enumerate(output.choices):
            if top is not None:
                rendered = _logprob_chunks(output, i, plan.chunk_chars, top, legacy, shown)
                per_choice.append([Frame(head + chunk + "]}") for chunk in rendered])
            else:
                pieces = text_deltas(choice.text, plan) if plan.deltas else None
                deltas = _delta_parts(choice, plan.chunk_chars, pieces, legacy, shown)
                per_choice.append(_plain_chunks(head, i, choice, deltas, legacy))
        if len(per_choice) == 1:  # one choice: its chunks in order (what the interleaving below gives)
            parts = per_choice[0]
        else:
            each = [expand(c) for c in per_choice]
            parts = []
            for step in range(max(len(c) for c in each)):
                for frames in each:
                    if step < len(frames):
                        parts.append(frames[step])
        if request.stream_options.get("include_usage"):
            parts.append(Frame(head + '],"usage":' + dumps(usage_body(output.usage)) + "}"))
        parts.append(DONE)
        return parts

    def error_frames(
        self, fault: Fault, output: ModelOutput, request: ModelRequest, sent: int
    ) -> list[Frame]:
        # The SDKs raise APIError on any data object with an "error" key.
        spec = ErrorSpec(status=500, message=fault.message, type="server_error")
        body = openai_error_body(spec, 500)
        body["error"]["code"] = None
        return [Frame(dumps(body))]

    def replay_effect(self, output: ModelOutput, request: ModelRequest) -> None:
        """Nothing to redo when the server resends an answer: this codec keeps no state."""
        return None

    def error_body(self, error: ErrorSpec | RequestError, status: int) -> dict[str, Any]:
        return openai_error_body(error, status)

    def response_headers(self, request_id: str, processing_ms: int) -> dict[str, str]:
        return openai_response_headers(request_id, processing_ms)
