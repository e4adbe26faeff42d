"""The API routes: one table of (path, codec, methods), one generic handler.

Adding an API is one line in `API_ROUTES`. The handler keeps only what is HTTP: it reads the body under
the size limit (413), waits its turn while paced streams run, hands the bytes to `pipeline.accept` and
`respond` (which parse, decode, check the served models, resolve and encode, answering every failure in
the route's provider shape; `respond` runs in a worker thread for a large answer, see `server.offload`),
holds the answer back for its first delay, sends it, and offers it to the memo.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import partial

from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Scope

from ..codec.anthropic.encode import MessagesCodec
from ..codec.base import WireCodec
from ..codec.bedrock.encode import BedrockCodec
from ..codec.cohere.encode import CohereCodec
from ..codec.embeddings import EmbeddingsCodec
from ..codec.gemini.embed import GeminiEmbedCodec
from ..codec.gemini.encode import GeminiCodec
from ..codec.ollama.encode import OllamaCodec, OllamaEmbedCodec
from ..codec.openai_chat.encode import ChatCodec
from ..codec.openai_responses.encode import ResponsesCodec
from ..errors import BodyTooLarge, SynthGPTError
from ..mock import MockGPT
from ..pipeline import Answered, accept, finish, finish_answered, model_not_found, refuse, respond
from ..state.aio import SharedAnswers
from .memo import remember
from .observe import note_answered, note_api, note_frames
from .offload import Worker, heavy
from .pacing import PacedStream, pacer
from .responses import CutJsonBody, EventStreamBody, to_response

__all__ = ["API_ROUTES", "ApiRoute", "BodyTooLarge", "api_endpoint", "model_not_found", "read_body"]

log = logging.getLogger("synthgpt.server")


@dataclass(frozen=True, slots=True)
class ApiRoute:
    """One API endpoint: `path` (Starlette syntax; path params reach `codec.decode` as `params`)."""

    path: str
    codec: WireCodec | type
    """A codec, or a codec class: `create_app` makes one instance of a class per app, shared by its routes
    (codecs with per-app state, like the Responses `previous_response_id` store)."""
    methods: tuple[str, ...] = ("POST",)


_CHAT = ChatCodec()
_GEMINI, _GEMINI_STREAM = GeminiCodec(), GeminiCodec(stream=True)
_GEMINI_EMBED, _GEMINI_BATCH_EMBED = GeminiEmbedCodec(batch=False), GeminiEmbedCodec(batch=True)

API_ROUTES: tuple[ApiRoute, ...] = (
    ApiRoute("/v1/chat/completions", _CHAT),
    # Azure OpenAI: the deployment names the model; `?api-version=` is accepted and ignored.
    ApiRoute("/openai/deployments/{deployment}/chat/completions", _CHAT),
    ApiRoute("/openai/v1/chat/completions", _CHAT),  # Azure v1 (`@ai-sdk/azure`, clients at `…/openai/v1/`)
    ApiRoute("/v1/responses", ResponsesCodec),
    ApiRoute("/openai/v1/responses", ResponsesCodec),  # Azure OpenAI v1 (`api-key` header accepted)
    ApiRoute("/openai/responses", ResponsesCodec),  # `AzureOpenAI(api_version=…)` posts here
    ApiRoute("/v1/messages", MessagesCodec()),
    ApiRoute("/v1/embeddings", EmbeddingsCodec()),
    ApiRoute("/openai/v1/embeddings", EmbeddingsCodec()),
    ApiRoute("/openai/deployments/{deployment}/embeddings", EmbeddingsCodec()),
    # Azure AI Foundry projects serve the same v1 surface under the project's path
    ApiRoute("/api/projects/{project}/openai/v1/chat/completions", _CHAT),
    ApiRoute("/api/projects/{project}/openai/v1/responses", ResponsesCodec),
    ApiRoute("/api/projects/{project}/openai/v1/embeddings", EmbeddingsCodec()),
    # Gemini: `google-genai` posts to /v1 by default, older clients and curl examples to /v1beta
    *(route for v in ("v1beta", "v1") for route in (
        ApiRoute(f"/{v}/models/{{model}}:generateContent", _GEMINI),
        ApiRoute(f"/{v}/models/{{model}}:streamGenerateContent", _GEMINI_STREAM),
        ApiRoute(f"/{v}/models/{{model}}:embedContent", _GEMINI_EMBED),
        ApiRoute(f"/{v}/models/{{model}}:batchEmbedContents", _GEMINI_BATCH_EMBED),
    )),
    # Ollama's native API (its OpenAI-compatible /v1 routes are the ones above)
    ApiRoute("/api/chat", OllamaCodec()),
    ApiRoute("/api/generate", OllamaCodec(generate=True)),
    ApiRoute("/api/embed", OllamaEmbedCodec()),
    ApiRoute("/api/embeddings", OllamaEmbedCodec(legacy=True)),
    ApiRoute("/v2/chat", CohereCodec()),
    # Bedrock: the model id may be an ARN, whose slashes botocore sends percent-encoded
    ApiRoute("/model/{model_id:path}/converse", BedrockCodec()),
    ApiRoute("/model/{model_id:path}/converse-stream", BedrockCodec(stream=True)),
)


async def read_body(request: Request, limit: int) -> bytes:
    """The whole body, refusing as soon as it is known to exceed `limit` bytes."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise BodyTooLarge(int(declared), limit)
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise BodyTooLarge(size, limit)
        chunks.append(chunk)
    return b"".join(chunks)


def api_endpoint(codec: WireCodec) -> Callable[[Request], Awaitable[Response]]:
    async def endpoint(request: Request) -> Response:
        return await handle(request, codec)

    endpoint.__name__ = f"{codec.api}_endpoint"
    return endpoint


async def handle(request: Request, codec: WireCodec) -> Response:
    mock: MockGPT = request.app.state.mock  # read per request: a rule reload may swap it
    path: str = request.scope["path"]  # request.url would build a URL object on every request
    note_api(request.scope, codec.api)
    try:
        raw = await read_body(request, request.app.state.max_body_bytes)
    except BodyTooLarge as exc:
        finish(mock, None, exc)
        return to_response(refuse(mock, codec, exc, path, "", exc.size))
    pace = pacer()
    if pace.running:  # let running paced streams' frames out before this request's work
        await pace.admit()
    worker: Worker = request.app.state.worker
    shared: SharedAnswers | None = request.app.state.shared
    if shared is not None:  # `--state redis`: its round trips are awaited outside the draw lock
        answered = await shared.answer(mock, codec, raw, request.headers, _params(request), path, worker)
    else:
        async with worker.lock:  # one draw at a time, on the loop or in the worker (see server.offload)
            accepted = accept(mock, codec, raw, request.headers, _params(request), path=path)
            if isinstance(accepted, Answered):
                answered = accepted
            elif heavy(accepted.request):  # drawn and encoded off the loop: others' frames keep flowing
                answered = await worker.run(partial(respond, mock, codec, accepted, in_pieces=True))
            else:
                answered = respond(mock, codec, accepted)
    note_answered(request.scope, answered)
    failed = answered.exception
    if failed is not None and answered.status >= 500:
        if isinstance(failed, SynthGPTError):  # a rule that cannot answer: the rule file's fault
            log.warning("rule error answering %s: %s", path, failed)
        else:
            log.error("unexpected error answering %s", path, exc_info=failed)
    elif answered.status >= 500 and answered.failure is not None:  # e.g. an answer over max_answer_bytes
        log.warning("rule error answering %s: %s", path, answered.failure)
    # The first delay holds back the whole response, status line included: the same time to first byte
    # for a JSON body, an error and a stream (whose headers would otherwise go out at once).
    if answered.first_delay_ms > 0:
        try:
            await asyncio.sleep(answered.first_delay_ms / 1000.0)
        except asyncio.CancelledError:  # the client left while the answer was held back
            finish_answered(mock, answered, cancelled=True, frames_sent=0)
            raise
    response = to_response(answered)
    _finish_when_sent(request.scope, mock, answered, response)
    if answered.replayable:
        remember(request.scope, codec, answered, response)
    return response


def _finish_when_sent(scope: Scope, mock: MockGPT, answered: Answered, response: Response) -> None:
    """Finish the call now (a JSON body or an error: decided) or when its stream has ended."""
    if answered.generation is None:
        return  # refused: the pipeline finished it
    if isinstance(response, CutJsonBody):  # a JSON body cut by its fault: the call ended with it
        finish(mock, answered.generation.record, response.fault)
        return
    if not isinstance(response, PacedStream | EventStreamBody):
        finish_answered(mock, answered)
        return

    def ended(frames: int, cancelled: bool) -> None:
        note_frames(scope, frames)
        finish_answered(mock, answered, cancelled=cancelled, frames_sent=frames)

    response.on_end = ended


def _params(request: Request) -> dict[str, str]:
    """Path parameters, and the query's where there is one (Gemini's `?alt=sse`); the path's win."""
    if not request.scope.get("query_string"):
        return request.path_params
    return {**request.query_params, **request.path_params}
