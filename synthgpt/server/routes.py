"""The API routes: one table of (path, codec, methods), one generic handler.

Adding an API is one line in `API_ROUTES`. The handler is plain ASGI (no Request object) and keeps only what
is HTTP: it reads the body under the size limit (413), replays a repeated request's answer from the memo
(`server.memo`), waits its turn while paced streams run, hands the bytes to `pipeline.accept` and
`respond` (which parse, decode, check the served models, resolve and encode, answering every failure in
the route's provider shape; `respond` runs in a worker thread for a large answer, see `server.offload`),
holds the answer back for its first delay, sends it, and offers it to the memo.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass

from starlette.datastructures import Headers, QueryParams
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from ..codec.anthropic.encode import MessagesCodec
from ..codec.base import WireCodec
from ..codec.bedrock.encode import BedrockCodec
from ..codec.cohere.encode import CohereCodec
from ..codec.embeddings import EmbeddingsCodec
from ..codec.gemini.embed import GeminiEmbedCodec
from ..codec.gemini.encode import GeminiCodec
from ..codec.headers import kept_raw_headers
from ..codec.ollama.encode import OllamaCodec, OllamaEmbedCodec
from ..codec.openai_chat.encode import ChatCodec
from ..codec.openai_responses.encode import ResponsesCodec
from ..codec.openai_responses.store import ConversationStore
from ..engine import MockGPT
from ..errors import BodyTooLarge, SynthGPTError
from ..journal import journal_written
from ..pipeline import Answered, finish, finish_answered, model_not_found, refuse, request_key
from ..state.aio import SharedAnswers
from .memo import memo_slot, remember, replay
from .observe import note_answered, note_api, note_frames
from .offload import Worker
from .pacing import PacedStream, pacer
from .responses import CutJsonBody, EventStreamBody, to_response

__all__ = [
    "API_ROUTES",
    "ApiEndpoint",
    "ApiRoute",
    "BodyTooLarge",
    "api_endpoint",
    "content_length",
    "handle",
    "model_not_found",
    "read_body",
    "receive_body",
    "route_codecs",
]  # fmt: skip

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


async def receive_body(receive: Receive, declared: int | None, limit: int) -> bytes:
    """`read_body` on the raw ASGI channel (no Request object): the API routes' hot path."""
    if declared is not None and declared > limit:
        raise BodyTooLarge(declared, limit)
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":  # the client left before sending its whole body
            raise ClientDisconnect()
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise BodyTooLarge(size, limit)
        chunks.append(chunk)
        if not message.get("more_body", False):
            return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def content_length(raw_headers: list[tuple[bytes, bytes]]) -> int | None:
    """The declared `Content-Length` (the first one), None when absent or not a number."""
    for k, v in raw_headers:
        if k == b"content-length":
            return int(v) if v.isdigit() else None
    return None


def route_codecs(
    routes: Sequence[ApiRoute] = API_ROUTES, store: ConversationStore | None = None
) -> list[tuple[ApiRoute, WireCodec]]:
    """Each route with the codec answering it. A codec class becomes one instance for all the routes
    naming it (per call: per app), the Responses codec keeping its conversations in `store` when given
    (the shared state of `--state`)."""
    instances: dict[type, WireCodec] = {}
    out: list[tuple[ApiRoute, WireCodec]] = []
    for route in routes:
        source = route.codec
        if isinstance(source, type):
            if source not in instances:
                shared = store is not None and issubclass(source, ResponsesCodec)
                instances[source] = source(store=store) if shared else source()
            out.append((route, instances[source]))
        else:
            out.append((route, source))
    return out


class ApiEndpoint:
    """The ASGI app of one API route (Starlette calls it after matching a route with path parameters; the
    app's front calls it directly for routes without, see `server.front`)."""

    __slots__ = ("__name__", "codec")

    def __init__(self, codec: WireCodec) -> None:
        self.codec = codec
        self.__name__ = f"{codec.api}_endpoint"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await handle(scope, receive, send, self.codec)


def api_endpoint(codec: WireCodec) -> ApiEndpoint:
    return ApiEndpoint(codec)


async def handle(scope: Scope, receive: Receive, send: Send, codec: WireCodec) -> None:
    """Answer one API request: read the body, replay it from the memo or run the pipeline, send."""
    state = scope["app"].state
    mock: MockGPT = state.mock  # read per request: a rule reload may swap it
    path: str = scope["path"]
    raw_headers: list[tuple[bytes, bytes]] = scope["headers"]
    note_api(scope, codec.api)
    declared = content_length(raw_headers)
    try:
        raw = await receive_body(receive, declared, state.max_body_bytes)
    except BodyTooLarge as exc:
        finish(mock, None, exc)
        await to_response(refuse(mock, codec, exc, path, "", exc.size))(scope, receive, send)
        return
    slot = memo_slot(state.memo, mock, scope, declared, raw)
    keep = None  # on the request's second sighting: the generation to keep its answer under
    if slot is not None:
        entry, keep = slot[0].sighting(mock, slot[1])
        if entry is not None and await replay(scope, receive, send, mock, entry):
            return
    pace = pacer()
    if pace.running:  # let running paced streams' frames out before this request's work
        await pace.admit()
    worker: Worker = state.worker
    shared: SharedAnswers | None = state.shared
    if shared is not None:  # `--state redis`: its round trips are awaited outside the draw lock
        # every header, credentials too: the shared memo keys on them (`state.memo`)
        headers = Headers(raw=raw_headers)
        answered = await shared.answer(mock, codec, raw, headers, _params(scope), path, worker)
    else:
        kept = kept_raw_headers(raw_headers)  # what the request keeps of them, decoded in one pass
        async with worker.lock:  # one draw at a time, on the loop or in the worker (see server.offload)
            accepted = await worker.accept(mock, codec, raw, kept, _params(scope), path)
            if isinstance(accepted, Answered):
                answered = accepted
            else:
                answered = await worker.respond(mock, codec, accepted)
    if answered.generation is not None:  # a journal that writes in batches: this call's is in the file
        error = await journal_written(mock.journal)
        if error is not None:
            finish(mock, answered.generation.record, error)
            answered = refuse(mock, codec, error, *request_key(path, raw))
    note_answered(scope, answered)
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
    _finish_when_sent(scope, mock, answered, response)
    if keep is not None and answered.replayable and slot is not None:
        remember(slot, keep, codec, answered, response)
    await response(scope, receive, send)


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


def _params(scope: Scope) -> dict[str, str]:
    """Path parameters, and the query's where there is one (Gemini's `?alt=sse`); the path's win."""
    path_params: dict[str, str] = scope.get("path_params", {})
    query = scope.get("query_string")
    if not query:
        return path_params
    return {**QueryParams(query), **path_params}
