"""The ceiling: a minimal Starlette app answering synthgpt's routes with fixed bytes of the same size.

It does what any Python ASGI app must do for a request (receive the body, send a response) and
nothing else, so its requests/s on this machine is the ceiling a mock can approach. The bench
captures synthgpt's real answer for each case and passes it in a JSON payload file:

    {"chat": {"content_type": "application/json", "body": "..."},
     "chat_stream": {"content_type": "text/event-stream", "events": ["data: ...\\n\\n", ...]}}

A request picks its payload with `?case=<name>`. A stream payload is sent one SSE event per ASGI
send (what a straightforward Starlette StreamingResponse does), which is the baseline the unpaced
stream target is measured against.

    python bench/ceiling_app.py --port 8001 --payloads payloads.json

`--work-us N` adds N µs of CPU per request (Python building and parsing small JSON documents, as an app
does): what a served answer costs an app whose own work is that much more than the ceiling's (PROFILE.md,
round 11). Not used by `run.py`.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response, StreamingResponse
from starlette.routing import Route

__all__ = ["ROUTES", "create_app"]

ROUTES = ("/v1/chat/completions", "/v1/responses", "/v1/messages", "/v1/embeddings")


def _load(payloads: dict[str, Any]) -> dict[bytes, tuple[str, bytes | list[bytes]]]:
    table: dict[bytes, tuple[str, bytes | list[bytes]]] = {}
    for name, p in payloads.items():
        key = b"case=" + name.encode()
        if "events" in p:
            table[key] = (p["content_type"], [e.encode() for e in p["events"]])
        else:
            table[key] = (p["content_type"], p["body"].encode())
    return table


def _work(seconds: float) -> None:
    """Spend `seconds` of this thread's CPU as an app spends it: small objects made, encoded, parsed."""
    until, i = time.thread_time() + seconds, 0
    while time.thread_time() < until:
        json.loads(json.dumps({"a": [i, str(i), {"k": i * 2.5}], "b": "x" * (i % 50)}))
        i += 1


def create_app(payloads: dict[str, Any], work_us: float = 0.0) -> Starlette:
    table = _load(payloads)

    async def answer(request: Request) -> Response:
        await request.body()
        if work_us:
            _work(work_us / 1e6)
        found = table.get(request.scope["query_string"])
        if found is None:
            return PlainTextResponse("unknown case", status_code=404)
        content_type, body = found
        if isinstance(body, bytes):
            return Response(body, media_type=content_type)
        events = body

        async def one_send_per_event() -> AsyncIterator[bytes]:
            for e in events:
                yield e

        return StreamingResponse(one_send_per_event(), media_type=content_type)

    return Starlette(routes=[Route(path, answer, methods=["POST"]) for path in ROUTES])


def _batched_protocol() -> type[Any]:
    """uvicorn's httptools protocol with synthgpt's batched writes: the reference that shows what of
    synthgpt's lead over the plain ceiling comes from gathering writes rather than from its own work."""
    import sys

    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

    # run as a script: the checkout's synthgpt
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from synthgpt.server.writes import BatchedWrites

    class BatchedProtocol(HttpToolsProtocol):  # type: ignore[misc]
        def connection_made(self, transport: Any) -> None:
            super().connection_made(BatchedWrites(transport, self.loop))

    return BatchedProtocol


def main(argv: list[str] | None = None) -> None:
    import uvicorn

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=8001)
    ap.add_argument("--payloads", type=Path, required=True)
    ap.add_argument("--batched-writes", action="store_true",
                    help="gather writes per loop pass as `synthgpt serve` does (server.writes)")  # fmt: skip
    ap.add_argument("--work-us", type=float, default=0.0, metavar="N",
                    help="spend N µs of CPU per request besides answering (PROFILE.md)")  # fmt: skip
    args = ap.parse_args(argv)
    app = create_app(json.loads(args.payloads.read_text()), args.work_us)
    uvicorn.run(
        app,
        host=args.host,
        port=args.port,
        workers=1,
        loop="uvloop",
        http=_batched_protocol() if args.batched_writes else "httptools",
        log_level="warning",
        access_log=False,
        server_header=False,
        date_header=False,
    )


if __name__ == "__main__":
    main()
