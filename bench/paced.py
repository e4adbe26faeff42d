"""The paced-stream client: N concurrent streams, every SSE frame timestamped on arrival.

wrk sees only whole responses, so this client reads each stream itself. It opens all connections
first, then sends every request at once, and records the arrival time of each frame (a frame is one
SSE event, i.e. one blank-line-terminated block of the de-chunked body). Per stream it reports the
span from first to last frame against the planned (frames - 1) x interval, which does not depend on
whether the server also waits before the first frame, and every gap's distance from the interval.

    python -m bench.paced --port 8000 --request-file req.http --streams 500 --interval-ms 20 --frames 50
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import time
from pathlib import Path
from typing import Any, cast

from .pyload import ResponseReader, fast_loop, percentile

__all__ = ["run_paced", "summarise"]


class _Stream(asyncio.Protocol):
    def __init__(self, opened: asyncio.Future[None], finished: asyncio.Future[None]) -> None:
        self.opened = opened
        self.finished = finished
        self.frames: list[float] = []
        self.sent_at = 0.0
        self._tail = b""
        self.reader = ResponseReader(self._body)
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's is not a subclass
        self.opened.set_result(None)

    def send(self, request: bytes) -> None:
        assert self.transport is not None
        self.sent_at = time.perf_counter()
        self.transport.write(request)

    def _body(self, data: bytes) -> None:
        now = time.perf_counter()
        joined = self._tail + data
        # frames end with a blank line; keep one byte so a "\n\n" split across reads still counts
        self.frames.extend([now] * joined.count(b"\n\n"))
        self._tail = joined[-1:] if not joined.endswith(b"\n\n") else b""

    def data_received(self, data: bytes) -> None:
        if self.reader.feed(data) and self.transport is not None:
            self.transport.close()

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.opened.done():
            self.opened.set_exception(exc or ConnectionError("closed before connect"))
        if not self.finished.done():
            self.finished.set_result(None)


def numbered(request: bytes, n: int) -> bytes:
    """`request` (raw HTTP) with every `{N}` of its body replaced by `n`, and its Content-Length to match."""
    head, _, body = request.partition(b"\r\n\r\n")
    body = body.replace(b"{N}", str(n).encode())
    lines = [ln for ln in head.split(b"\r\n") if not ln.lower().startswith(b"content-length:")]
    lines.append(b"Content-Length: " + str(len(body)).encode())
    return b"\r\n".join(lines) + b"\r\n\r\n" + body


async def run_paced(
    host: str, port: int, request: bytes, streams: int, timeout: float, *, unique: bool = False
) -> list[dict[str, Any]]:
    """One record per stream: status, whether it completed, sent_at and the frame arrival times."""
    loop = asyncio.get_running_loop()
    conns: list[_Stream] = []
    finished: list[asyncio.Future[None]] = []
    for _ in range(streams):
        opened: asyncio.Future[None] = loop.create_future()
        done: asyncio.Future[None] = loop.create_future()
        conn = _Stream(opened, done)
        conns.append(conn)
        finished.append(done)
        await loop.create_connection(lambda c=conn: c, host, port)  # type: ignore[misc]
        await opened
    requests = [numbered(request, i) if unique else request for i in range(streams)]
    for conn, raw in zip(conns, requests, strict=True):
        conn.send(raw)
    await asyncio.wait(finished, timeout=timeout)
    out = []
    for conn in conns:
        if conn.transport is not None and not conn.transport.is_closing():
            conn.transport.close()
        out.append(
            {
                "status": conn.reader.status,
                "complete": conn.reader.done,
                "sent_at": conn.sent_at,
                "frames": conn.frames,
            }
        )
    return out


def summarise(
    records: list[dict[str, Any]], frames: int, interval_ms: float, *, exact: bool = True
) -> dict[str, Any]:
    """Figures over every stream; with `exact=False` (distinct requests, whose answers differ in length) a
    stream may have any number of frames (two at least) and is planned to last (its frames - 1) x interval."""
    planned_ms = (frames - 1) * interval_ms
    span_errors: list[float] = []
    gap_errors: list[float] = []
    first_frame: list[float] = []
    def whole(r: dict[str, Any]) -> bool:
        n = len(r["frames"])
        return bool(r["status"] == 200 and r["complete"] and (n == frames if exact else n > 1))

    ok = [r for r in records if whole(r)]
    lost = len(records) - len(ok)
    # Once every stream has its first frame, the server is no longer busy starting streams: gaps after
    # that show the pacing itself, apart from the start-up burst.
    all_started = max((r["frames"][0] for r in ok), default=0.0)
    steady_errors: list[float] = []
    for r in ok:
        times: list[float] = r["frames"]
        span = (times[-1] - times[0]) * 1e3
        planned = (len(times) - 1) * interval_ms
        span_errors.append(abs(span - planned) / planned * 100.0 if planned else 0.0)
        for a, b in itertools.pairwise(times):
            err = abs((b - a) * 1e3 - interval_ms)
            gap_errors.append(err)
            if a >= all_started:
                steady_errors.append(err)
        first_frame.append((times[0] - r["sent_at"]) * 1e3)
    span_errors.sort()
    gap_errors.sort()
    steady_errors.sort()
    first_frame.sort()
    return {
        "streams": len(records),
        "completed": len(records) - lost,
        "lost": lost,
        "frames": frames,
        "interval_ms": interval_ms,
        "planned_ms": planned_ms,
        "within_5pct": sum(1 for e in span_errors if e <= 5.0),
        "span_err_pct_p50": percentile(span_errors, 50),
        "span_err_pct_max": span_errors[-1] if span_errors else 0.0,
        "gap_err_ms_p50": percentile(gap_errors, 50),
        "gap_err_ms_p99": percentile(gap_errors, 99),
        "gap_err_ms_max": gap_errors[-1] if gap_errors else 0.0,
        "steady_gaps": len(steady_errors),
        "steady_gap_err_ms_p99": percentile(steady_errors, 99),
        "first_frame_ms_p50": percentile(first_frame, 50),
        "first_frame_ms_p99": percentile(first_frame, 99),
    }


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description="paced SSE stream client")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--request-file", type=Path, required=True)
    ap.add_argument("--streams", type=int, default=500)
    ap.add_argument("--frames", type=int, default=50)
    ap.add_argument("--interval-ms", type=float, default=20.0)
    ap.add_argument("--unique", action="store_true", help="replace {N} in the body by the stream's number")
    args = ap.parse_args(argv)
    fast_loop()
    timeout = 30.0 + args.frames * args.interval_ms / 1e3 * 4
    records = asyncio.run(
        run_paced(
            args.host, args.port, args.request_file.read_bytes(), args.streams, timeout, unique=args.unique
        )
    )
    print(json.dumps(summarise(records, args.frames, args.interval_ms, exact=not args.unique)), flush=True)


if __name__ == "__main__":
    main()
