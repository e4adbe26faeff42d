"""Gemini embeddings: `models/{model}:embedContent` (one `content`) and `:batchEmbedContents` (what the
`google-genai` client's `embed_content` posts, one request per input).

Each input is the text of its content's parts, joined by newlines; `outputDimensionality` sets the vector
size. The vectors come from the rule that answers, as for every embeddings route (`api("embeddings")`
matches them all), and go out as plain float arrays: `{"embedding": {"values": [...]}}` or
`{"embeddings": [{"values": [...]}, ...]}`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...model import ApiKind, ErrorSpec, Fault, ModelOutput, ModelRequest
from ..base import Frame
from ..common import dumps
from ..embeddings import checked_vectors
from ..headers import journal_headers
from .encode import GoogleAnswers, google_error_body
from .request import field, invalid, text_of_contents

__all__ = ["GeminiEmbedCodec"]

_MAX_BATCH = 250
_MAX_DIMENSIONS = 16384


def _dimensions(request: Mapping[str, Any], param: str) -> int | None:
    dims = field(request, "outputDimensionality")
    if dims is None:
        return None
    if not isinstance(dims, int) or isinstance(dims, bool) or not 1 <= dims <= _MAX_DIMENSIONS:
        raise invalid(f"output_dimensionality must be between 1 and {_MAX_DIMENSIONS}, got {dims!r}.", param)
    return dims


def _one(request: Any, param: str) -> tuple[str, int | None, str | None]:
    if not isinstance(request, dict):
        raise invalid(f"Invalid value at '{param}': expected an object.", param)
    if request.get("content") is None:
        raise invalid("* EmbedContentRequest.content: content is not specified", param + ".content")
    texts = text_of_contents(request["content"], param + ".content")
    text = texts[0] if len(texts) == 1 else ""  # `content: []` (no Content at all) was a 500
    if not text:
        raise invalid("* EmbedContentRequest.content: contains an empty Part.", param + ".content")
    task = field(request, "taskType")
    return text, _dimensions(request, param + ".outputDimensionality"), str(task) if task else None


class GeminiEmbedCodec(GoogleAnswers):
    """`embedContent` (`batch=False`) or `batchEmbedContents` (`batch=True`). It never streams."""

    api: ApiKind = "embeddings"

    def __init__(self, *, batch: bool) -> None:
        self.batch = batch

    def decode(self, body: Any, headers: Mapping[str, str], params: Mapping[str, str]) -> ModelRequest:
        if not isinstance(body, dict):
            raise invalid("Invalid JSON payload received. Expected an object.")
        if self.batch:
            requests = body.get("requests")
            if not isinstance(requests, list) or not requests:
                raise invalid("* BatchEmbedContentsRequest.requests: requests is not specified", "requests")
            if len(requests) > _MAX_BATCH:
                raise invalid(f"* BatchEmbedContentsRequest.requests: at most {_MAX_BATCH} requests are "
                              f"allowed in a batch, got {len(requests)}.", "requests")  # fmt: skip
            items = [_one(r, f"requests[{i}]") for i, r in enumerate(requests)]
        else:
            items = [_one(body, "body")]
        dims = {d for _, d, _ in items}
        if len(dims) > 1:
            raise invalid("Every request of a batch must ask for the same output_dimensionality.", "requests")
        extra: dict[str, Any] = {}
        tasks = [t for _, _, t in items if t]
        if tasks:
            extra["taskType"] = tasks[0]
        return ModelRequest(
            api="embeddings",
            model=params.get("model", ""),
            inputs=tuple(t for t, _, _ in items),
            dimensions=dims.pop(),
            headers=journal_headers(headers),
            extra=extra,
        )

    def body(self, output: ModelOutput, request: ModelRequest) -> dict[str, Any]:
        vectors = checked_vectors(output, request)
        if self.batch:
            return {"embeddings": [{"values": list(v)} for v in vectors]}
        return {"embedding": {"values": list(vectors[0])}}

    def frames(self, output: ModelOutput, request: ModelRequest) -> list[Frame]:
        return [Frame(dumps(self.body(output, request)), terminal=True)]

    def error_frames(
        self, fault: Fault, output: ModelOutput, request: ModelRequest, sent: int
    ) -> list[Frame]:
        return [Frame(dumps(google_error_body(ErrorSpec(status=500, message=fault.message), 500)))]
