"""OpenAI embeddings (`POST /v1/embeddings`): WIRE.md §5.

`input` is a string, a list of strings, a list of token ids or a list of token-id lists; token arrays are
read as the text of their ids joined by spaces, so they get stable vectors of their own. With
`encoding_format: "base64"` (what both official SDKs ask for by default) each vector goes out as the
base64 of its little-endian float32 values; with `"float"` (the API default) as a JSON array of the same
float32 values. The vectors come from the rule's generator (`synthgpt.generators.embedding`) through
`ModelOutput.embeddings`; this module only encodes them.
"""

from __future__ import annotations

import base64
import struct
from collections.abc import Mapping
from typing import Any

from ..errors import MissingEmbeddings, RequestError
from ..model import ApiKind, ErrorSpec, Fault, ModelOutput, ModelRequest, built
from ..tokens import count_tokens
from .base import Frame
from .common import dumps
from .errors import openai_error_body
from .headers import journal_headers
from .openai_chat.encode import openai_response_headers
from .openai_responses.request import type_error

__all__ = ["EmbeddingsCodec", "MissingEmbeddings", "checked_vectors", "encode_vector"]

_MAX_INPUTS = 2048
_MAX_DIMENSIONS = 3072  # text-embedding-3-large, OpenAI's largest embedding model
_MAX_INPUT_TOKENS = 8192  # the context of OpenAI's embedding models
_MAX_REQUEST_TOKENS = 300_000  # OpenAI's limit on all inputs of one request together
_FORMATS = ("float", "base64")


def encode_vector(vector: tuple[float, ...], encoding_format: str) -> list[float] | str:
    if encoding_format == "base64":
        return base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode("ascii")
    return list(vector)


def _token_text(value: list[Any], param: str) -> str:
    for k, t in enumerate(value):
        if not isinstance(t, int) or isinstance(t, bool) or t < 0:
            raise type_error(f"{param}[{k}]", "a non-negative integer token id", t)
    if not value:
        raise RequestError(f"Invalid '{param}': empty array. Expected at least one token.", param)
    return " ".join(str(t) for t in value)


def _inputs(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        if not value:
            raise RequestError("'$.input' is invalid. Please check the API reference.", "input")
        _check_length(count_tokens(value), "input")
        return (value,)
    if not isinstance(value, list):
        raise type_error("input", "a string or an array", value)
    if not value:
        raise RequestError("'$.input' is invalid: empty array. Expected at least one input.", "input")
    if len(value) > _MAX_INPUTS:
        raise RequestError(
            f"'$.input' is invalid: at most {_MAX_INPUTS} inputs are allowed, got {len(value)}.", "input"
        )
    if all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        _check_length(len(value), "input")
        return (_token_text(value, "input"),)  # one input given as token ids
    out: list[str] = []
    total = 0
    for i, v in enumerate(value):
        if isinstance(v, str):
            if not v:
                raise RequestError(f"'$.input[{i}]' is invalid: empty string.", f"input[{i}]")
            total += _check_length(count_tokens(v), f"input[{i}]")
            out.append(v)
        elif isinstance(v, list):
            total += _check_length(len(v), f"input[{i}]")
            out.append(_token_text(v, f"input[{i}]"))
        else:
            raise type_error(f"input[{i}]", "a string or an array of token ids", v)
    if total > _MAX_REQUEST_TOKENS:
        raise RequestError(
            f"Requested {total} tokens, max {_MAX_REQUEST_TOKENS} tokens per request", "input",
            code="max_tokens_per_request",
        )
    return tuple(out)


def _check_length(tokens: int, param: str) -> int:
    """`tokens`, if one input of that many fits the model (a longer one would also take synthgpt
    seconds per thousand tokens to embed, holding up every other request)."""
    if tokens > _MAX_INPUT_TOKENS:
        raise RequestError(
            f"This model's maximum context length is {_MAX_INPUT_TOKENS} tokens, however you requested "
            f"{tokens} tokens ({tokens} in your prompt; 0 for the completion). Please reduce your prompt; or "
            "completion length.",
            param,
        )
    return tokens


def checked_vectors(output: ModelOutput, request: ModelRequest) -> tuple[tuple[float, ...], ...]:
    """The answer's vectors, one per input, whichever provider's route asked (MissingEmbeddings if not)."""
    vectors = output.embeddings
    if len(vectors) != len(request.inputs):
        raise MissingEmbeddings(
            f"rule {output.rule!r} answered an embeddings request without one vector per input "
            f"({len(vectors)} for {len(request.inputs)}); answer it with the `embeddings` generator"
        )
    return vectors


class EmbeddingsCodec:
    """The embeddings wire format. It never streams: `frames` is the body as one frame."""

    api: ApiKind = "embeddings"

    def decode(self, body: Any, headers: Mapping[str, str], params: Mapping[str, str]) -> ModelRequest:
        if not isinstance(body, dict):
            raise RequestError("The request body must be a JSON object.", None, code="invalid_type")
        model = body.get("model")
        if model is None and params.get("deployment"):  # Azure: the deployment names the model
            model = params["deployment"]
        if model is None:
            raise RequestError(
                "Missing required parameter: 'model'.", "model", code="missing_required_parameter"
            )
        if not isinstance(model, str):
            raise type_error("model", "a string", model)
        if "input" not in body:
            raise RequestError(
                "Missing required parameter: 'input'.", "input", code="missing_required_parameter"
            )
        inputs = _inputs(body["input"])
        fmt = body.get("encoding_format")
        if fmt is not None and fmt not in _FORMATS:
            raise RequestError(
                f"Invalid value for 'encoding_format': expected 'float' or 'base64', got {fmt!r}.",
                "encoding_format",
                code="invalid_value",
            )
        dims = body.get("dimensions")
        if dims is not None:
            if not isinstance(dims, int) or isinstance(dims, bool):
                raise type_error("dimensions", "an integer", dims)
            if not 1 <= dims <= _MAX_DIMENSIONS:
                raise RequestError(
                    f"Invalid 'dimensions': expected a value between 1 and {_MAX_DIMENSIONS}, got {dims}.",
                    "dimensions",
                    code="invalid_value",
                )
            if model == "text-embedding-ada-002":
                raise RequestError("This model does not support specifying dimensions.", "dimensions")
        extra = {k: body[k] for k in ("encoding_format", "user") if body.get(k) is not None}
        # every value checked above: built without validating it again (`model.built`)
        return built(ModelRequest, api="embeddings", model=model, inputs=inputs, dimensions=dims,
                     headers=journal_headers(headers), extra=extra)  # fmt: skip

    def body(self, output: ModelOutput, request: ModelRequest) -> dict[str, Any]:
        vectors = checked_vectors(output, request)
        fmt = str(request.extra.get("encoding_format", "float"))
        return {
            "object": "list",
            "data": [
                {"object": "embedding", "index": i, "embedding": encode_vector(v, fmt)}
                for i, v in enumerate(vectors)
            ],
            "model": output.model,
            "usage": {
                "prompt_tokens": output.usage.prompt_tokens,
                "total_tokens": output.usage.prompt_tokens,
            },
        }

    def frames(self, output: ModelOutput, request: ModelRequest) -> list[Frame]:
        return [Frame(dumps(self.body(output, request)), terminal=True)]

    def error_frames(
        self, fault: Fault, output: ModelOutput, request: ModelRequest, sent: int
    ) -> list[Frame]:
        body = openai_error_body(ErrorSpec(status=500, message=fault.message), 500)
        return [Frame(dumps(body))]


    def replay_effect(self, output: ModelOutput, request: ModelRequest) -> None:
        """Nothing to redo when the server resends an answer: this codec keeps no state."""
        return None

    def error_body(self, error: ErrorSpec | RequestError, status: int) -> dict[str, Any]:
        return openai_error_body(error, status)

    def response_headers(self, request_id: str, processing_ms: int) -> dict[str, str]:
        return openai_response_headers(request_id, processing_ms)
