"""The recording proxy: every request forwarded upstream, every answer passed back unchanged and recorded.

A request on an API route is decoded with synthgpt's own codec (the `ModelRequest` a rule would see) to
take its canonical digest, then forwarded as it came (the body byte for byte, the headers but hop-by-hop
ones and, with an API key of the proxy's own, the client's credentials). The answer goes back as the
upstream sends it, chunk by chunk as chunks arrive (SSE, NDJSON, the AWS event stream alike), with its
status and headers; once it has ended whole, the API's reader (`record.readers`) turns it into the rule
appended to the recording (`record.writer`). Other routes (model lists, `countTokens`, …) and requests the
codec refuses are forwarded too, unrecorded. An upstream that cannot be reached is a 502 in the API's
error shape.
"""

from __future__ import annotations

import itertools
import logging
import time
import zlib
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import BaseRoute, Route

from ..codec.base import WireCodec
from ..codec.common import parse_json_body
from ..model import ErrorSpec, ModelRequest
from ..pipeline import error_answer, request_id
from ..rules.canonical import canonical_digest
from ..server.routes import BodyTooLarge, read_body, route_codecs
from .credentials import forward_headers, request_secrets
from .readers import read_answer
from .recorded import Timing
from .to_rule import answer_rule, error_rule
from .writer import RecordingFile

__all__ = ["ProxyConfig", "create_proxy_app"]

log = logging.getLogger("synthgpt.record")

_DROPPED_ANSWER_HEADERS = frozenset(
    {
        "connection",
        "keep-alive",
        "transfer-encoding",
        "proxy-connection",
        "te",
        "trailer",
        "upgrade",
        "date",
        "server",
    }
)
_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]


@dataclass
class ProxyConfig:
    upstream: str
    """The real API's base URL; a request's path and query are appended to it."""
    recording: RecordingFile
    api_key: str | None = None
    """Sent upstream in each provider's own header instead of whatever credentials the client sent."""
    timeout: float = 600.0
    max_body_bytes: int = 10 * 1024 * 1024
    timing: bool = True
    """Record the stream's first-chunk delay and interval in its stream plan."""
    recorded: list[str] = field(default_factory=list)
    """Digests recorded by this proxy, in order (tests and the exit summary read it)."""


def create_proxy_app(config: ProxyConfig) -> Starlette:
    def endpoint(codec: WireCodec | None) -> Any:
        async def proxied(request: Request) -> Response:
            return await _proxy(request, codec, config)

        return proxied

    routes: list[BaseRoute] = [
        Route(r.path, endpoint(codec), methods=list(r.methods)) for r, codec in route_codecs()
    ]
    routes.append(Route("/{path:path}", endpoint(None), methods=_METHODS))
    return Starlette(routes=routes)


def _upstream_url(config: ProxyConfig, request: Request, drop_key: bool) -> str:
    url = config.upstream.rstrip("/") + request.url.path
    query = [(k, v) for k, v in request.query_params.multi_items() if not (drop_key and k == "key")]
    if query:
        url += "?" + urlencode(query)
    return url


def _decoded(codec: WireCodec, raw: bytes, request: Request) -> ModelRequest | None:
    """The request as the codec decodes it, or None (the upstream will say what is wrong with it)."""
    try:
        params = {**request.query_params, **request.path_params}
        return codec.decode(parse_json_body(raw), request.headers, params)
    except Exception:  # a refused request is forwarded unrecorded: the upstream's own error is the answer
        return None


async def _proxy(request: Request, codec: WireCodec | None, config: ProxyConfig) -> Response:
    try:
        raw = await read_body(request, config.max_body_bytes)  # refused as soon as it is known too large
    except BodyTooLarge as exc:
        return _refusal(codec, 413, str(exc), "request_too_large")
    decoded = _decoded(codec, raw, request) if codec is not None and request.method == "POST" else None
    secrets = request_secrets(request.headers, request.query_params, config.api_key)
    headers = forward_headers(request.headers, codec, request.url.path, config.api_key)
    url = _upstream_url(config, request, drop_key=config.api_key is not None)
    started = time.monotonic()
    # a client per request, closed with its answer: nothing outlives the exchange, whether or not the
    # server runs the app's lifespan (LiveServer does not); recording traffic needs no connection pool
    client = httpx.AsyncClient(timeout=httpx.Timeout(config.timeout, connect=10.0), follow_redirects=False)
    try:
        sent = client.build_request(request.method, url, headers=headers, content=raw)
        upstream = await client.send(sent, stream=True)
    except httpx.HTTPError as exc:
        await client.aclose()
        why = f"The upstream {config.upstream} could not be reached: {type(exc).__name__}: {exc}".rstrip(": ")
        log.warning("%s %s: %s", request.method, request.url.path, why)
        return _refusal(codec, 502, why, "upstream_unreachable")
    answer_headers = {k: v for k, v in upstream.headers.items() if k.lower() not in _DROPPED_ANSWER_HEADERS}

    declared = upstream.headers.get("content-length")
    expected = int(declared) if declared is not None and declared.isdigit() else None

    async def relay() -> AsyncIterator[bytes]:
        chunks: list[bytes] = []
        arrivals: list[float] = []
        received = 0
        recorded = False

        def finish() -> None:
            nonlocal recorded
            recorded = True
            if decoded is not None and codec is not None:
                data, timing = b"".join(chunks), _timing(started, arrivals)
                _record(config, codec, decoded, upstream, data, timing, secrets)

        try:
            async for chunk in upstream.aiter_raw():
                arrivals.append(time.monotonic())
                chunks.append(chunk)
                received += len(chunk)
                if expected is not None and received >= expected and not recorded:
                    # a body of declared length: recorded before its last byte goes out, so a client that
                    # has its answer finds it in the file
                    finish()
                yield chunk
            if not recorded:  # a stream: recorded before its end (the last, empty chunk) is sent
                finish()
        except httpx.HTTPError as exc:  # the upstream broke off: what came is passed on, nothing recorded
            log.warning("%s %s: the upstream's answer broke off: %s", request.method, request.url.path, exc)
        finally:
            await upstream.aclose()
            await client.aclose()

    return StreamingResponse(relay(), status_code=upstream.status_code, headers=answer_headers)


def _timing(started: float, arrivals: list[float]) -> Timing:
    if not arrivals:
        return Timing()
    gaps = [b - a for a, b in itertools.pairwise(arrivals)]
    return Timing((arrivals[0] - started) * 1000.0, sum(gaps) / len(gaps) * 1000.0 if gaps else 0.0)


def _plain(data: bytes, encoding: str) -> bytes | None:
    """The body without its content encoding (asked for as `identity`, yet an upstream may compress)."""
    if encoding in ("", "identity"):
        return data
    if encoding in ("gzip", "deflate"):
        try:
            return zlib.decompress(data, zlib.MAX_WBITS | 32)
        except zlib.error:
            return None
    return None


def _record(
    config: ProxyConfig,
    codec: WireCodec,
    request: ModelRequest,
    upstream: httpx.Response,
    data: bytes,
    timing: Timing,
    secrets: set[str],
) -> None:
    """Append the rule answering `request` as the upstream did. Never raises: a recording that cannot be
    made is logged, and the client has its answer already."""
    try:
        digest = canonical_digest(request)
        if digest in config.recording:
            return
        plain = _plain(data, upstream.headers.get("content-encoding", "").lower())
        if plain is None:
            log.warning("not recorded: the upstream's %s encoding", upstream.headers.get("content-encoding"))
            return
        if upstream.status_code >= 400:
            rule = error_rule(digest, request, upstream.status_code, plain, upstream.headers)
        else:
            recorded = read_answer(codec, request, plain, upstream.headers.get("content-type", ""))
            if recorded is None:
                log.warning("not recorded: the upstream's answer to %s could not be read", request.summary())
                return
            rule = answer_rule(
                digest, request, recorded, timing if config.timing and request.stream else None
            )
        if config.recording.append(digest, rule, secrets):
            config.recorded.append(digest)
    except Exception:  # a reader's bug must not take the proxy down: the answer went out already
        log.exception("recording the answer to %s failed", request.summary())


def _refusal(codec: WireCodec | None, status: int, message: str, code: str) -> Response:
    """An error of the proxy's own, in the API's error shape (a plain OpenAI-style body elsewhere)."""
    spec = ErrorSpec(status=status, message=message, type="api_error", code=code)
    if codec is None:
        return JSONResponse({"error": {"message": message, "type": "api_error", "code": code}}, status)
    answered = error_answer(codec, spec, status, request_id(0, "record", code, message))
    return Response(answered.body, status, headers=_content_typed(answered.headers))


def _content_typed(headers: Mapping[str, str]) -> dict[str, str]:
    return {"content-type": "application/json", **headers}
