"""The one path from a request's bytes to its answer, shared by the server, `render` and the transports.

    raw ──parse──▶ JSON ──codec.decode──▶ ModelRequest ──served?──▶ mock.resolve ──encode──▶ Answered
           │                  │                           │              │
           └ 400              └ 400 (404: unknown         └ 404          └ 400 no rule matched,
                                previous_response_id)                      500 a rule that cannot answer

`answer(mock, codec, raw, headers, params)` runs it and returns an `Answered`: the status, the headers and
either the JSON body or the stream's `WirePlan`. It never raises for anything a request or a rule can
cause: every exception becomes an error answer in the codec's provider shape through ONE table
(`REFUSALS`), so `render` writes the very answer the server sends. What stays outside is transport:
reading the body under a size limit (the route, which answers `BodyTooLarge` through `refuse`), admission
and the first delay (the server waits `first_delay_ms` before sending anything), the response memo.

Request ids and `openai-processing-ms` derive from the seed and the request, never from a clock, so
headers repeat as bodies do.
"""

from __future__ import annotations

import fnmatch
import hashlib
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from .codec.base import WireCodec
from .codec.envelope import Wire, decode_request
from .codec.errors import error_headers
from .codec.framing import stream_media_type
from .codec.openai_chat.encode import openai_response_headers
from .codec.sse import WirePlan, plan_parts
from .engine import FinishError, MockGPT
from .errors import BodyTooLarge, DrawError, NoRuleMatched, RequestError, StateUnavailable, SynthGPTError
from .generation import Generation
from .journal import CallRecord
from .jsonutil import dumps, dumps_bytes
from .limits import Limits
from .model import ErrorSpec, Fault, ModelRequest
from .seeding import HEX, derive_seed, seed_after, seed_prefix, token_from_seed

__all__ = [
    "REFUSALS",
    "Accepted",
    "Answered",
    "accept",
    "answer",
    "answer_request_id",
    "body_cut",
    "codec_headers",
    "cut_half",
    "error_answer",
    "finish",
    "finish_answered",
    "json_bytes",
    "model_not_found",
    "processing_ms",
    "refuse",
    "request_id",
    "respond",
    "rule_failure",
    "serves",
]


_NEW_DICT: Any = object()
"""The default of `Answered.error_headers`: a new empty dict for each answer."""


@dataclass(frozen=True, slots=True, init=False)
class Answered:
    """What to send for one request: `status`, `headers`, and `body` (JSON bytes) or `wire` (a stream)."""

    status: int
    headers: dict[str, str]
    body: bytes = b""
    """The JSON body, compact (empty for a stream)."""
    wire: WirePlan | None = None
    """A stream's writes and their delays; `wire.data` is every byte of it."""
    payload: Any = None
    """The JSON value `body` encodes (`render` writes it indented)."""
    generation: Generation | None = None
    """The engine's answer, when the request reached a rule (error answers drawn by a rule too)."""
    first_delay_ms: float = 0.0
    """How long to hold the whole answer back, status line included (the sender's job)."""
    error_headers: dict[str, str] = field(default_factory=dict)
    """The headers an error answer adds (`retry-after`, `x-ratelimit-*`) to the codec's own."""
    failure: str | None = None
    """Why the request could not be answered (a rule's error *answer* is not a failure)."""
    exception: Exception | None = None
    """The exception behind a failure, for the server's log."""
    replayable: bool = False
    """Sending these bytes again for the same request is the same answer (see `server.memo`)."""

    def __init__(
        self,
        status: int,
        headers: dict[str, str],
        body: bytes = b"",
        wire: WirePlan | None = None,
        payload: Any = None,
        generation: Generation | None = None,
        first_delay_ms: float = 0.0,
        error_headers: dict[str, str] = _NEW_DICT,
        failure: str | None = None,
        exception: Exception | None = None,
        replayable: bool = False,
    ) -> None:
        # The generated `__init__` of a frozen dataclass, which sets each field through `object.__setattr__`;
        # here through its slot's descriptor: half the cost, and one answer is built per request.
        # (`tests/pipeline`: same signature and fields as the generated one.)
        (set_status, set_headers, set_body, set_wire, set_payload, set_generation, set_delay, set_extra,
         set_failure, set_exception, set_replayable) = _ANSWERED_SLOTS  # fmt: skip
        set_status(self, status)
        set_headers(self, headers)
        set_body(self, body)
        set_wire(self, wire)
        set_payload(self, payload)
        set_generation(self, generation)
        set_delay(self, first_delay_ms)
        set_extra(self, {} if error_headers is _NEW_DICT else error_headers)
        set_failure(self, failure)
        set_exception(self, exception)
        set_replayable(self, replayable)

    @property
    def data(self) -> bytes:
        """Every byte of the body, as a client that waited for the end would read it."""
        return self.wire.data if self.wire is not None else self.body


_ANSWERED_SLOTS: tuple[Any, ...] = tuple(Answered.__dict__[f.name].__set__ for f in fields(Answered))
"""Each field's slot setter, in field order (what `Answered.__init__` sets them with)."""


REFUSALS: tuple[tuple[type[Exception], int, str | None, str | None], ...] = (
    (BodyTooLarge, 413, "invalid_request_error", "request_too_large"),
    (StateUnavailable, 503, "server_error", "state_unavailable"),  # before RequestError: never a 4xx
    (RequestError, 400, None, None),  # its own param and code; a `status` attribute wins (404)
    (NoRuleMatched, 400, "invalid_request_error", "no_rule_matched"),
    (SynthGPTError, 500, "server_error", "rule_error"),  # a rule that cannot answer: the rule file's fault
    (Exception, 500, "server_error", None),  # a bug: answered in shape, its details only in the log
)
"""Exception kind -> (status, error type, error code): the first row the exception is an instance of."""

log = logging.getLogger("synthgpt.server")


def json_bytes(value: Any, nulls: int = 0) -> bytes:
    """`jsonutil.dumps_bytes`: compact UTF-8 JSON; NaN and infinities are a bug, said as a ValueError.
    `nulls`: at most the None values `value` holds, when known (it spares a read-back)."""
    return dumps_bytes(value, nulls=nulls)


def json_bytes_in_pieces(value: Any) -> bytes:
    """`json_bytes(value)`, byte for byte, in many small encoder calls rather than one.

    The C encoder holds the GIL for the whole of one call: 8 MB of embeddings in one `encode` kept the
    event loop's thread from running for a second while a worker thread encoded them. Containers of
    containers (an answer's `data`, `choices`) are written item by item, three levels deep.
    """
    out: list[str] = []
    _pieces(value, out, 3)
    return "".join(out).encode()


def _pieces(value: Any, out: list[str], depth: int) -> None:
    if depth and isinstance(value, dict) and all(type(k) is str for k in value):
        out.append("{")
        for i, (k, v) in enumerate(value.items()):
            out.append(("," if i else "") + dumps(k) + ":")
            _pieces(v, out, depth - 1)
        out.append("}")
    elif depth and isinstance(value, list | tuple) and value and isinstance(value[0], dict | list | tuple):
        out.append("[")
        for i, v in enumerate(value):
            if i:
                out.append(",")
            _pieces(v, out, depth - 1)
        out.append("]")
    else:
        out.append(dumps(value))


def request_id(seed: int, *key: object) -> str:
    """`req_` + 32 hex digits derived from the engine seed and what identifies the request."""
    return "req_" + token_from_seed(derive_seed(seed, "request-id", *key), 32, HEX)


def answer_request_id(seed: int, api: str, fingerprint: int) -> str:
    """`request_id(seed, api, fingerprint)`, the id of every accepted request, with the parts before the
    fingerprint encoded once per (seed, api) (~1 µs a request)."""
    if type(seed) is not int:
        return request_id(seed, api, fingerprint)
    prefix = _RID_PREFIXES.get((seed, api))
    if prefix is None:
        if len(_RID_PREFIXES) >= 64:  # a few engines and APIs: bounded all the same
            _RID_PREFIXES.clear()
        prefix = _RID_PREFIXES[seed, api] = seed_prefix(seed, "request-id", api)
    return "req_" + token_from_seed(seed_after(prefix, b"%d" % fingerprint), 32, HEX)


_RID_PREFIXES: dict[tuple[int, str], bytes] = {}


def processing_ms(rid: str, first_delay_ms: float = 0.0) -> int:
    # derive_seed("processing-ms", rid), its label framed once (`seed_prefix`)
    return 40 + seed_after(_PROCESSING_MS, rid) % 360 + int(first_delay_ms)


_PROCESSING_MS = seed_prefix("processing-ms")


def codec_headers(codec: WireCodec, rid: str, ms: int) -> dict[str, str]:
    """The codec's own per-answer headers (`response_headers`, optional), else the OpenAI set."""
    # getattr rather than an isinstance check on a runtime-checkable Protocol: on Python 3.11 that walks
    # the protocol's attributes on every call (~10 us per answer)
    own = getattr(codec, "response_headers", None)
    if own is not None:
        headers: dict[str, str] = own(rid, ms)
        return headers
    return openai_response_headers(rid, ms)


def model_not_found(model: str) -> ErrorSpec:
    return ErrorSpec(
        status=404,
        message=f"The model `{model}` does not exist or you do not have access to it.",
        type="invalid_request_error",
        code="model_not_found",
    )


def serves(mock: MockGPT, model: str) -> bool:
    """The rules serve `model`: they name no models, or one of their patterns matches it."""
    models = mock.rules.models
    return not models or any(fnmatch.fnmatchcase(model, pattern) for pattern in models)


def answer(
    mock: MockGPT,
    codec: WireCodec,
    raw: bytes,
    headers: Mapping[str, str],
    params: Mapping[str, str],
    *,
    path: str = "",
    stream: bool = False,
) -> Answered:
    """The answer to one request body: parse, decode, check the model is served, resolve, encode.

    `path` is the request's path (it keys the request id of answers that fail before decoding, as the
    server has always done); `stream` answers as a stream whatever the body says (`render --stream`).
    Exceptions raised while *encoding* an answer are bugs in a codec and propagate.
    """
    accepted = accept(mock, codec, raw, headers, params, path=path, stream=stream)
    return accepted if isinstance(accepted, Answered) else respond(mock, codec, accepted)


@dataclass(slots=True)
class Accepted:
    """A request decoded and served, not yet answered: `answer` is `accept`, then `respond`. (The server
    looks at `request` in between: a request whose answer may be large is answered in a worker thread.)
    Read only, by convention: a frozen dataclass's `__init__` (an `object.__setattr__` per field) cost
    ~0.9 µs of every request, four times this one's."""

    request: ModelRequest
    body: Any
    rid: str
    path: str
    raw: bytes
    replayable: bool = True
    """The codec's say on `body` (`_replayable`): its answer reads no codec state. Asked once, in `accept`."""

    @property
    def key(self) -> tuple[str, str]:
        """What identifies the request for the request id of a failure: its path and a hash of its body
        (hashed only when a call fails: the answered ones never need it)."""
        return request_key(self.path, self.raw)


def request_key(path: str, raw: bytes) -> tuple[str, str]:
    """`Accepted.key` of a request given as its path and body."""
    return path, _body_hash(raw)


def accept(
    mock: MockGPT,
    codec: WireCodec,
    raw: bytes,
    headers: Mapping[str, str],
    params: Mapping[str, str],
    *,
    path: str = "",
    stream: bool = False,
) -> Accepted | Answered:
    """Parse, decode and check the model is served: the request, or the answer refusing it."""
    try:
        req, body, kept = decode_request(codec, raw, headers, params, stream)
        replayable = _replayable(codec, body)
        if replayable:  # decoded from its own bytes alone: the journal keeps those
            req.__pydantic_private__["_wire"] = Wire(codec, raw, kept, params, stream)  # type: ignore[index]
        rid = answer_request_id(mock.seed, req.api, req.fingerprint())
        if not serves(mock, req.model):
            spec = model_not_found(req.model)
            finish(mock, None, spec)
            return error_answer(codec, spec, 404, rid, failure=spec.message)
    except Exception as exc:
        finish(mock, None, exc)  # refused: no record; the call ends here
        return refuse(mock, codec, exc, path, _body_hash(raw))
    return Accepted(req, body, rid, path, raw, replayable)


def _body_hash(raw: bytes) -> str:
    return hashlib.blake2b(raw, digest_size=16).hexdigest()


def respond(mock: MockGPT, codec: WireCodec, accepted: Accepted, *, in_pieces: bool = False) -> Answered:
    """Resolve an accepted request and encode its answer (`in_pieces`: in many small encoder calls, for an
    answer made in a worker thread, see `server.offload`)."""
    try:
        generation = mock.resolve(accepted.request)
    except Exception as exc:
        finish(mock, None, exc)  # refused: no record; the call ends here
        return refuse(mock, codec, exc, *accepted.key)
    try:
        answered = _encode(codec, generation, accepted.rid, accepted.replayable, in_pieces)
    except StateUnavailable as exc:  # the shared Responses store could not keep what a continuation needs
        finish(mock, generation.record, exc)
        return refuse(mock, codec, exc, *accepted.key)
    size, limit = len(answered.data), mock.limits.max_answer_bytes
    if size <= limit:
        return answered
    # the estimate before encoding (`limits.check_answer_size`) let it through: the bytes say no
    name = generation.rule.name
    spec = rule_failure(name, "answer_too_large", mock.limits)
    finish(mock, generation.record, spec)  # ended here: the answer drawn is never sent
    return error_answer(codec, spec, 500, accepted.rid, failure=f"rule {name!r} answered {size} bytes, "
                        f"over {limit}")  # fmt: skip


def rule_failure(rule: str | None, code: str, limits: Limits) -> ErrorSpec:
    """The 500 of a rule that could not answer. It names the rule and a stable code, never the exception
    text (the server logs that): a draw may touch anything, and its errors may quote it."""
    who = f"The rule {rule!r}" if rule else "The rule that matched"
    if code == "answer_too_large":
        message = (
            f"{who} answered more than this server's answer limit of {limits.max_answer_bytes} bytes "
            "(max_answer_bytes)."
        )
    else:
        message = f"{who} failed to draw an answer ({code}); the server's log has the details."
    return ErrorSpec(status=500, message=message, type="server_error", code=code)


def finish(
    mock: MockGPT,
    record: CallRecord | None,
    error: FinishError,
    cancelled: bool = False,
    frames_sent: int | None = None,
) -> None:
    """`mock.finish(...)`: how a call ended goes to its record and `on_finish`, once. A failing `on_finish`
    is logged rather than turned into an error answer."""
    try:
        mock.finish(record, error, cancelled, frames_sent=frames_sent)
    except Exception:
        log.exception("on_finish hook failed")


def finish_answered(
    mock: MockGPT, answered: Answered, *, cancelled: bool = False, frames_sent: int | None = None
) -> None:
    """End the call `answered` answers, once it was delivered: its error answer, the fault that ended its
    stream, or nothing; `cancelled` when the client left first. The sender calls it (the server when the
    body or the stream's last frame went out, `render` when it wrote the file); refusals were finished by
    `answer` itself."""
    drawn = answered.generation
    if drawn is None:
        return
    output = drawn.output
    error: FinishError = output.error
    if error is None and answered.wire is not None and not cancelled:
        error = output.stream.ending()
        if frames_sent is None:
            frames_sent = len(answered.wire.frames)
    finish(mock, drawn.record, error, cancelled, frames_sent)


def refuse(mock: MockGPT, codec: WireCodec, exc: Exception, *key: object) -> Answered:
    """The error answer for `exc`, by `REFUSALS`; `key` identifies the request for its request id."""
    rid = request_id(mock.seed, *key)
    for kind, status, etype, code in REFUSALS:
        if not isinstance(exc, kind):
            continue
        if kind is RequestError:
            assert isinstance(exc, RequestError)
            return error_answer(codec, exc, getattr(exc, "status", status), rid, failure=exc.message,
                                exception=exc)  # fmt: skip
        if kind is Exception:  # the message may hold internals: the body says only that it failed
            spec = ErrorSpec(status=status, type=etype)
            failure = f"{type(exc).__name__}: {exc}"
            return error_answer(codec, spec, status, rid, failure=failure, exception=exc)
        if kind is SynthGPTError and not (isinstance(exc, DrawError) and exc.public):
            # a draw's error may quote what the draw touched: the body names the rule and a code only
            code = exc.code if isinstance(exc, DrawError) else "rule_error"
            spec = rule_failure(getattr(exc, "rule", None), code, mock.limits)
            return error_answer(codec, spec, status, rid, failure=str(exc).split("\n")[0], exception=exc)
        spec = ErrorSpec(status=status, message=str(exc), type=etype, code=code)
        return error_answer(codec, spec, status, rid, failure=str(exc).split("\n")[0], exception=exc)
    raise AssertionError("REFUSALS ends with Exception")  # pragma: no cover


def error_answer(
    codec: WireCodec,
    error: ErrorSpec | RequestError,
    status: int,
    rid: str,
    *,
    first_delay_ms: float = 0.0,
    generation: Generation | None = None,
    failure: str | None = None,
    exception: Exception | None = None,
) -> Answered:
    """The provider-shaped error answer; an ErrorSpec also brings its retry and rate-limit headers."""
    headers = codec_headers(codec, rid, processing_ms(rid, first_delay_ms))
    own = getattr(codec, "error_headers", None)  # optional: where a provider names the error (Bedrock)
    if own is not None:
        headers.update(own(error, status))
    extra = error_headers(error) if isinstance(error, ErrorSpec) else {}
    headers.update(extra)
    body = codec.error_body(error, status)
    if body.get("request_id", "") is None:  # providers that echo the request id in error bodies (Anthropic)
        body["request_id"] = rid
    return Answered(status, headers, json_bytes(body), payload=body, generation=generation,
                    first_delay_ms=first_delay_ms, error_headers=extra, failure=failure,
                    exception=exception)  # fmt: skip


def _encode(
    codec: WireCodec, generation: Generation, rid: str, replayable: bool, in_pieces: bool = False
) -> Answered:
    output, req = generation.output, generation.request
    plan = output.stream
    delay = plan.first_delay_ms
    if output.error is not None:
        return error_answer(codec, output.error, output.error.status, rid, first_delay_ms=delay,
                            generation=generation)  # fmt: skip
    headers = codec_headers(codec, rid, processing_ms(rid, delay))
    # kept only for answers sent whole and at once, that no call order and no codec state shaped
    replayable = replayable and generation.replayable and delay == 0
    if req.stream:
        headers["cache-control"] = "no-cache"
        headers["x-accel-buffering"] = "no"  # ask reverse proxies not to hold the stream back
        # the first delay holds back the whole answer (the sender waits it), not the first frame
        rest = plan if delay == 0 else plan.model_copy(update={"first_delay_ms": 0.0})
        wire = plan_parts(codec, rest, output, req)
        media = stream_media_type(codec, req)
        if media != "text/event-stream":  # NDJSON, a JSON array, the AWS event stream: the header wins
            headers["content-type"] = media
        return Answered(200, headers, wire=wire, generation=generation, first_delay_ms=delay,
                        replayable=replayable)  # fmt: skip
    payload = codec.body(output, req)
    if in_pieces:
        data = json_bytes_in_pieces(payload)
    else:
        # the codec's optional count of the body's None values (`body_nulls`) spares the encoder a read-back
        count = getattr(codec, "body_nulls", None)
        data = dumps_bytes(payload, nulls=0 if count is None else count(payload))  # what `json_bytes` does
    return Answered(200, headers, data, payload=payload, generation=generation,
                    first_delay_ms=delay, replayable=replayable)  # fmt: skip


def _replayable(codec: WireCodec, body: Any) -> bool:
    """The codec's own say (optional `replayable(body)`): a body whose answer reads codec state is not."""
    check = getattr(codec, "replayable", None)
    return True if check is None else bool(check(body))


def body_cut(answered: Answered) -> Fault | None:
    """The `truncate` or `disconnect` fault of a JSON answer, if it carries one: the server sends it cut
    (`cut_half`), `render` writes it cut, the shared memo never keeps it."""
    drawn = answered.generation
    if drawn is None or answered.status != 200 or not drawn.output.stream.faults:
        return None
    plan = drawn.output.stream
    return plan.fault("truncate") or plan.fault("disconnect")


def cut_half(body: bytes) -> bytes:
    """What a cut JSON answer sends: the first half of its bytes, at least one."""
    return body[: max(1, len(body) // 2)]
