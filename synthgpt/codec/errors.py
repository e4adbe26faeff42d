"""Error answers: what every provider shares (default messages, retry and rate-limit headers) and the
OpenAI error shape, which Chat Completions, Responses and embeddings all use.

Header values are fixed or derived from the ErrorSpec, never from the clock, so error answers are as
reproducible as any other.
"""

from __future__ import annotations

import math
from typing import Any

from ..errors import RequestError
from ..model import ErrorSpec

__all__ = [
    "DEFAULT_RETRY_AFTER_MS",
    "default_message",
    "error_fields",
    "error_headers",
    "openai_error_body",
    "openai_error_code",
    "openai_error_type",
    "restate_default",
    "unsupported_custom_tool",
]

DEFAULT_RETRY_AFTER_MS = 1000
"""The retry hint of a 429 whose ErrorSpec gives none (well under every SDK's cap)."""

_MESSAGES = {
    400: "The request was invalid.",
    401: "Incorrect API key provided.",
    403: "You are not allowed to perform this request.",
    404: "The requested resource does not exist.",
    405: "The method is not allowed for this path.",
    408: "The request timed out.",
    409: "The request conflicts with the current state of the resource.",
    413: "The request body is too large.",
    422: "The request could not be processed.",
    429: "Rate limit reached for requests. Please try again shortly.",
    500: "The server had an error while processing your request. Sorry about that!",
    502: "Bad gateway.",
    503: "The engine is currently overloaded, please try again later.",
    504: "The server timed out while processing your request.",
}

_OPENAI_TYPES = {
    400: "invalid_request_error",
    401: "invalid_request_error",
    403: "permission_error",
    404: "invalid_request_error",
    405: "invalid_request_error",
    408: "timeout_error",
    409: "conflict_error",
    413: "invalid_request_error",
    422: "invalid_request_error",
    429: "requests",
}

_OPENAI_CODES = {
    401: "invalid_api_key",
    404: "not_found",
    405: "method_not_allowed",
    413: "request_too_large",
    429: "rate_limit_exceeded",
}


def default_message(status: int) -> str:
    if status in _MESSAGES:
        return _MESSAGES[status]
    return "The server had an error." if status >= 500 else "The request failed."


def restate_default(message: str | None, status: int, own_default: str) -> str:
    """`message` in another provider's words: the shared default text for `status` (worded like OpenAI's,
    and what triggers start their messages with) becomes `own_default`; any other text is the rule's own
    and is kept. `(synthgpt trigger !MOCK_ERROR:529!)` notes after the default survive."""
    if not message:
        return own_default
    shared = default_message(status)
    if message.startswith(shared):
        return own_default + message[len(shared) :]
    return message


def openai_error_type(status: int) -> str:
    return _OPENAI_TYPES.get(status, "server_error" if status >= 500 else "invalid_request_error")


def openai_error_code(status: int) -> str | None:
    return _OPENAI_CODES.get(status)


def error_fields(
    error: ErrorSpec | RequestError, status: int
) -> tuple[str, str | None, str | None, str | None]:
    """(message, type, code, param) of an error, with nothing defaulted yet except the message."""
    if isinstance(error, RequestError):
        return error.message, None, error.code, error.param
    return error.message or default_message(status), error.type, error.code, error.param


def openai_error_body(error: ErrorSpec | RequestError, status: int) -> dict[str, Any]:
    """`{"error": {"message", "type", "param", "code"}}`: all four keys, as the OpenAPI spec requires."""
    if isinstance(error, ErrorSpec) and error.body is not None:
        return dict(error.body)
    message, etype, code, param = error_fields(error, status)
    return {
        "error": {
            "message": message,
            "type": etype or openai_error_type(status),
            "param": param,
            "code": code if code is not None else openai_error_code(status),
        }
    }


def unsupported_custom_tool(param: str) -> RequestError:
    """Custom (free-form) tools (Chat and Responses `type: "custom"`) are refused, not ignored.

    A call to one has no place on the Chat Completions stream (its tool-call chunks are `function` only, in
    the spec and the SDKs' types), free-form grammars cannot be drawn from, and answering as if the tool
    were not declared would let a test pass that should fail.
    """
    return RequestError(
        f"Unsupported value: '{param}' does not support 'custom' with synthgpt. Custom (free-form) tools "
        "are not simulated; declare a function tool (type 'function') instead.",
        param,
        code="unsupported_value",
    )


def error_headers(error: ErrorSpec) -> dict[str, str]:
    """Headers of an error answer: retry hints (always on 429, else when the spec sets `retry_after_ms`),
    the `x-ratelimit-*` family on 429, then the spec's own headers (which win)."""
    headers: dict[str, str] = {}
    retry_ms = error.retry_after_ms
    if retry_ms is None and error.status == 429:
        retry_ms = DEFAULT_RETRY_AFTER_MS
    if retry_ms is not None:
        headers["retry-after"] = str(max(0, math.ceil(retry_ms / 1000)))
        headers["retry-after-ms"] = str(retry_ms)
    if error.status == 429:
        reset = _duration(retry_ms or 0)
        headers.update(
            {
                "x-ratelimit-limit-requests": "500",
                "x-ratelimit-remaining-requests": "0",
                "x-ratelimit-reset-requests": reset,
                "x-ratelimit-limit-tokens": "30000",
                "x-ratelimit-remaining-tokens": "0",
                "x-ratelimit-reset-tokens": reset,
            }
        )
    headers.update({k.lower(): v for k, v in error.headers.items()})
    return headers


def _duration(ms: int) -> str:
    """A reset duration as the OpenAI API writes it: `12ms`, `1s`, `6m0s`."""
    if ms < 1000:
        return f"{ms}ms"
    seconds = ms / 1000
    if seconds < 60:
        return f"{seconds:g}s"
    minutes, rest = divmod(int(seconds), 60)
    return f"{minutes}m{rest}s"
