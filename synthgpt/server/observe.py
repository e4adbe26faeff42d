"""What the server did, per answered API request: one log line and the Prometheus metrics.

`ObserveMiddleware` wraps the app's routes (`server.front` does the same for the API routes it dispatches
itself). It leaves an `Observed` in the scope; the API route
(`routes.handle`) and the memo's replay fill in what the request was (API, model) and how it was answered
(rule, seed, faults) and, when a stream ends, the frames it sent; the middleware adds the status and the
duration, then logs one line on the `synthgpt.access` logger and counts the answer (`server.metrics`).
Requests to other routes (`/healthz`, `/metrics`, the journal) are neither logged nor counted: probes
would drown the answers.

The duration is real time (`perf_counter`) read around the answer; it is never part of an answer.

The lines go through `RequestLogHandler`, which `configure_request_log` installs: while it is the access
logger's only handler, a line is made straight from the `Observed` (no `LogRecord`) and the lines of answers
that end in the same pass of the event loop are written together, at the start of the next pass (without a
running loop, at once). Under load that is one write for many answers instead of a write and a flush each.
A handler added to the logger (or a filter) gets every record, as before; at exit `logging.shutdown`
flushes what is held.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..model import ModelOutput, ModelRequest

if TYPE_CHECKING:
    from ..pipeline import Answered

__all__ = [
    "ACCESS_LOGGER",
    "LOG_FORMATS",
    "SCOPE_KEY",
    "JsonLineFormatter",
    "ObserveMiddleware",
    "Observed",
    "RequestLogHandler",
    "TextLineFormatter",
    "configure_request_log",
    "done",
    "faults_of",
    "line_fields",
    "note_answered",
    "note_api",
    "note_frames",
    "note_output",
    "observed",
    "text_line",
]

ACCESS_LOGGER = "synthgpt.access"
LOG_FORMATS = ("text", "json")
SCOPE_KEY = "synthgpt.observed"
access_log = logging.getLogger(ACCESS_LOGGER)


@dataclass(slots=True)
class Observed:
    """One API request as the log line and the metrics see it; empty `api`: not an API request."""

    api: str = ""
    model: str = ""
    rule: str = ""
    seed: int | None = None
    stream: bool = False
    output: ModelOutput | None = None
    status: int = 0
    frames: int = 0
    first_byte_s: float = 0.0
    duration_s: float = 0.0


def _observed(scope: Scope) -> Observed | None:
    found: Observed | None = scope.get(SCOPE_KEY)
    return found


def note_api(scope: Scope, api: str) -> None:
    """The request reached an API route (before its body is read: a 413 or a bad body is logged too)."""
    obs = _observed(scope)
    if obs is not None:
        obs.api = api


def note_answered(scope: Scope, answered: Answered) -> None:
    """What the pipeline answered (`pipeline.answer`): the request and output, when a rule drew it."""
    drawn = answered.generation
    if drawn is not None:
        note_output(scope, drawn.output, drawn.request)


def note_output(scope: Scope, output: ModelOutput, req: ModelRequest | None = None) -> None:
    """The answer: the rule that answered, the call's seed (the journal's), the faults it carries."""
    obs = _observed(scope)
    if obs is None:
        return
    if req is not None:
        obs.api, obs.model, obs.stream = req.api, req.model, req.stream
    obs.rule, obs.seed, obs.output = output.rule, output.id_seed, output


def note_frames(scope: Scope, frames: int) -> None:
    """The frames a stream sent, told by the stream itself when it ends (any framing: SSE, NDJSON, …)."""
    obs = _observed(scope)
    if obs is not None:
        obs.frames = frames


def faults_of(obs: Observed) -> tuple[str, ...]:
    """The faults the answer carried: `error`, a stream fault's kind, `delay`, `slow`."""
    output = obs.output
    if output is None:
        return ()
    plan = output.stream
    if output.error is None and not plan.faults and not plan.first_delay_ms and not plan.interval_ms:
        return ()  # the common case, at the cost of four attribute reads
    # a non-streaming answer has no frames: only the faults that cut its body apply (`CutJsonBody`)
    kinds: list[str] = [f.kind for f in plan.faults]
    faults = kinds if obs.stream else [k for k in kinds if k in ("truncate", "disconnect")][:1]
    if output.error is not None:
        faults.insert(0, "error")
    if plan.first_delay_ms > 0:
        faults.append("delay")
    if obs.stream and plan.interval_ms > 0:
        faults.append("slow")
    return tuple(faults)


class ObserveMiddleware:
    """Times every HTTP request; for API requests, logs one line and counts it once the answer is sent."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        await observed(self.app, scope, receive, send)


async def observed(app: ASGIApp, scope: Scope, receive: Receive, send: Send) -> Observed:
    """Run `app` on an HTTP request, timed: its `Observed` (also `scope[SCOPE_KEY]`) gets the status and
    the time to first byte when the answer starts; an API request is logged and counted once it ends,
    however it ends. `status` stays 0 while nothing was sent (what an error handler needs to know)."""
    started = time.perf_counter()
    obs = Observed()
    scope[SCOPE_KEY] = obs

    async def observing_send(message: Message) -> None:
        if message["type"] == "http.response.start":
            obs.status = message["status"]
            obs.first_byte_s = time.perf_counter() - started
        await send(message)

    try:
        await app(scope, receive, observing_send)
    finally:
        if obs.api:
            obs.duration_s = time.perf_counter() - started
            done(scope, obs)
    return obs


def done(scope: Scope, obs: Observed) -> None:
    """Count and log one answered API request (its `Observed` complete)."""
    state = scope["app"].state
    faults = faults_of(obs)
    metrics = getattr(state, "metrics", None)
    if metrics is not None:
        metrics.count(obs, faults, state.mock)
    handler = _sole_handler()
    if handler is not None:
        handler.add(handler.line(scope, obs, faults))
    elif access_log.isEnabledFor(logging.INFO):
        # the record made directly: `info()` would also walk the stack for the caller, on every answer
        record = access_log.makeRecord(ACCESS_LOGGER, logging.INFO, __file__, 0, "answered", (), None,
                                       extra={"synthgpt": line_fields(scope, obs, faults)})  # fmt: skip
        access_log.handle(record)


def _sole_handler() -> RequestLogHandler | None:
    """The request log's handler when nothing else would see a record: the access logger's only handler,
    no filters, the level enabled. Otherwise the line goes through `logging` as any record."""
    handlers = access_log.handlers
    if len(handlers) != 1:
        return None
    handler = handlers[0]
    if (
        type(handler) is not RequestLogHandler or handler.filters or access_log.filters
        or access_log.disabled or not access_log.isEnabledFor(logging.INFO) or handler.level > logging.INFO
    ):  # fmt: skip
        return None
    return handler


def line_fields(scope: Scope, obs: Observed, faults: tuple[str, ...]) -> dict[str, Any]:
    """The fields of a request's line, as the JSON line has them and `LogRecord.synthgpt` carries them."""
    return {
        "method": scope["method"],
        "path": scope["path"],
        "api": obs.api,
        "model": obs.model or None,
        "rule": obs.rule or None,
        "seed": None if obs.seed is None else str(obs.seed),  # 64-bit: JSON readers in JS would round it
        "status": obs.status or None,
        "stream": obs.stream,
        "frames": obs.frames,
        "faults": list(faults),
        "duration_ms": round(obs.duration_s * 1000.0, 3),
    }


def _text_value(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return ",".join(map(str, value)) or "-"
    return _text_str(str(value))


def text_line(scope: Scope, obs: Observed, faults: tuple[str, ...]) -> str:
    """`synthgpt: POST /v1/chat/completions 200 api=chat model=gpt-4o rule=default seed=… duration_ms=1.2`:
    the text of `line_fields` as `TextLineFormatter` writes it, made without the dict (tested equal)."""
    model, rule, seed = obs.model, obs.rule, obs.seed
    ms = round(obs.duration_s * 1000.0, 3)
    return (
        f"synthgpt: {scope['method']} {scope['path']} {obs.status or '-'} api={_text_str(obs.api)}"
        f" model={_text_str(model) if model else '-'} rule={_text_str(rule) if rule else '-'}"
        f" seed={'-' if seed is None else seed} stream={'true' if obs.stream else 'false'}"
        f" frames={obs.frames} faults={','.join(faults) or '-'} duration_ms={ms}"
    )


def _text_str(text: str) -> str:
    """A text value as the line writes it: quoted (JSON) when it is empty or holds a space or a quote."""
    return json.dumps(text) if (" " in text or '"' in text or not text) else text


def _text_of(fields: dict[str, Any]) -> str:
    head = f"synthgpt: {fields['method']} {fields['path']} {_text_value(fields['status'])}"
    rest = " ".join(f"{k}={_text_value(v)}" for k, v in fields.items()
                    if k not in ("method", "path", "status"))  # fmt: skip
    return f"{head} {rest}"


def json_line(scope: Scope, obs: Observed, faults: tuple[str, ...]) -> str:
    """One JSON object: `time` (UTC, ISO 8601, now), `level`, `logger`, `message` and the fields."""
    return _json_of(time.time(), "info", ACCESS_LOGGER, "answered", line_fields(scope, obs, faults))


def _json_of(created: float, level: str, logger: str, message: str, fields: dict[str, Any] | None) -> str:
    seconds = int(created)
    when = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds))
    line: dict[str, Any] = {
        "time": f"{when}.{int((created - seconds) * 1000):03d}Z", "level": level, "logger": logger,
        "message": message,
    }  # fmt: skip
    line.update(fields or {})
    return _JSON.encode(line)


class TextLineFormatter(logging.Formatter):
    """A record carrying the request's fields (`synthgpt`) as `text_line` writes it; others as usual."""

    def format(self, record: logging.LogRecord) -> str:
        fields: dict[str, Any] | None = getattr(record, "synthgpt", None)
        return super().format(record) if fields is None else _text_of(fields)


class JsonLineFormatter(logging.Formatter):
    """One JSON object per line: `time` (UTC, ISO 8601), `level`, `logger`, `message` and the fields."""

    def format(self, record: logging.LogRecord) -> str:
        return _json_of(record.created, record.levelname.lower(), record.name, record.getMessage(),
                        getattr(record, "synthgpt", None))  # fmt: skip


class RequestLogHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """The request log's lines on a stream, those of one pass of the event loop in one write (see the
    module's notes); `flush` writes what is held."""

    def __init__(self, stream: Any, log_format: str) -> None:
        super().__init__(stream)
        self.setFormatter(JsonLineFormatter() if log_format == "json" else TextLineFormatter())
        self.line = json_line if log_format == "json" else text_line
        self._held: list[str] = []
        self._flush_due = False

    def emit(self, record: logging.LogRecord) -> None:
        try:
            line = self.format(record)
        except Exception:
            self.handleError(record)
            return
        self.add(line)

    def add(self, line: str) -> None:
        """Write `line` with the others of this pass of the loop, once it ends (no loop here: now)."""
        with self.lock:  # type: ignore[union-attr]  # made by Handler.__init__
            self._held.append(line)
        if len(self._held) >= _MAX_HELD:
            self.flush()
            return
        if not self._flush_due:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                self.flush()
                return
            self._flush_due = True
            loop.call_soon(self.flush)

    def flush(self) -> None:
        with self.lock:  # type: ignore[union-attr]
            self._flush_due = False
            held, self._held = self._held, []
            stream = self.stream
            try:
                if held:
                    stream.write("\n".join(held) + "\n")
                if hasattr(stream, "flush"):
                    stream.flush()
            except Exception:  # a closed or broken stderr must not fail the answers: the lines are lost
                pass


_MAX_HELD = 256  # lines held at most: a pass of the loop answering more writes them in several writes


_JSON = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))  # json.dumps builds one per call


def configure_request_log(log_format: str = "text", *, enabled: bool = True, stream: Any = None) -> None:
    """Send the request lines to stderr (or `stream`) in `log_format` (`text` or `json`); idempotent."""
    if log_format not in LOG_FORMATS:
        raise ValueError(f"log format must be one of {', '.join(LOG_FORMATS)}, got {log_format!r}")
    for old in list(access_log.handlers):
        if getattr(old, "synthgpt_request_log", False):
            old.flush()
            access_log.removeHandler(old)
    access_log.propagate = False  # its own format, whatever the root logger's
    if not enabled:
        access_log.setLevel(logging.CRITICAL + 1)
        return
    handler = RequestLogHandler(stream or sys.stderr, log_format)
    handler.synthgpt_request_log = True  # type: ignore[attr-defined]
    access_log.addHandler(handler)
    access_log.setLevel(logging.INFO)
