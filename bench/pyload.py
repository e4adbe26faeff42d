"""The built-in load generator, for machines without wrk: keep-alive HTTP/1.1 over raw asyncio sockets.

Each of `--connections` connections sends the same request again as soon as the previous answer is
complete, until `--duration` seconds have passed; it prints one JSON line with the request count,
the elapsed time and the latency percentiles. It is slower than wrk (one Python core), so it can cap
the figures it measures: the report names the generator used.

    python -m bench.pyload --target target.json --connections 32 --duration 5

target.json: {"host": ..., "port": ..., "unique": false, "requests": [{"path", "body", "headers"}]};
the requests are sent in turn, and with `unique` every `{N}` in a body becomes a counter.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

__all__ = ["RequestSource", "ResponseReader", "percentile", "run_load"]


class ResponseReader:
    """An incremental HTTP/1.1 response parser: `feed` bytes until it returns True.

    `on_body` (optional) sees the body as it completes: each whole chunk of a chunked body (one
    server send each, for a stream), or the whole body of a Content-Length answer.
    """

    __slots__ = ("_buf", "_chunked", "_length", "_pos", "close", "done", "on_body", "status")

    def __init__(self, on_body: Callable[[bytes], None] | None = None) -> None:
        self.on_body = on_body
        self.reset()

    def reset(self) -> None:
        self._buf = bytearray()
        self._pos = 0
        self._length = 0
        self._chunked = False
        self.status = 0
        self.close = False
        self.done = False

    def feed(self, data: bytes) -> bool:
        buf = self._buf
        buf += data
        if self.status == 0:
            end = buf.find(b"\r\n\r\n")
            if end < 0:
                return False
            lines = bytes(buf[:end]).decode("latin-1").split("\r\n")
            self.status = int(lines[0].split(" ", 2)[1])
            for line in lines[1:]:
                name, _, value = line.partition(":")
                name = name.strip().lower()
                if name == "content-length":
                    self._length = int(value)
                elif name == "transfer-encoding" and "chunked" in value.lower():
                    self._chunked = True
                elif name == "connection" and value.strip().lower() == "close":
                    self.close = True
            self._pos = end + 4
        if not self._chunked:
            if len(buf) - self._pos < self._length:
                return False
            if self.on_body is not None:
                self.on_body(bytes(buf[self._pos : self._pos + self._length]))
            self.done = True
            return True
        while True:
            eol = buf.find(b"\r\n", self._pos)
            if eol < 0:
                return False
            size = int(bytes(buf[self._pos : eol]).split(b";")[0], 16)
            end = eol + 2 + size + 2
            if len(buf) < end:
                return False
            if size and self.on_body is not None:
                self.on_body(bytes(buf[eol + 2 : eol + 2 + size]))
            self._pos = end
            if size == 0:
                self.done = True
                return True


class RequestSource:
    """The raw requests of a target spec, in turn; bodies made unique when the spec asks."""

    def __init__(self, spec: dict[str, Any]) -> None:
        self.host: str = spec["host"]
        self.port: int = int(spec["port"])
        self.unique = bool(spec.get("unique"))
        self._items = [(r["path"], r["body"], [tuple(h) for h in r["headers"]]) for r in spec["requests"]]
        self._static = [self._raw(path, body, headers) for path, body, headers in self._items]
        self._n = 0

    def _raw(self, path: str, body: str, headers: list[tuple[str, str]]) -> bytes:
        data = body.encode()
        head = [f"POST {path} HTTP/1.1", f"Host: {self.host}:{self.port}", f"Content-Length: {len(data)}"]
        head += [f"{k}: {v}" for k, v in headers]
        return ("\r\n".join(head) + "\r\n\r\n").encode() + data

    def next(self) -> bytes:
        self._n += 1
        i = self._n % len(self._items)
        if not self.unique:
            return self._static[i]
        path, body, headers = self._items[i]
        return self._raw(path, body.replace("{N}", str(self._n)), headers)


def percentile(sorted_values: list[float], q: float) -> float:
    """Nearest-rank percentile of an already sorted list (0 for an empty one)."""
    if not sorted_values:
        return 0.0
    k = min(len(sorted_values) - 1, max(0, round(q / 100.0 * len(sorted_values) + 0.5) - 1))
    return sorted_values[k]


class _Conn(asyncio.Protocol):
    def __init__(
        self,
        source: RequestSource,
        deadline: float,
        latencies: list[float],
        stats: dict[str, int],
        finished: asyncio.Future[None],
    ) -> None:
        self.source = source
        self.deadline = deadline
        self.latencies = latencies
        self.stats = stats
        self.finished = finished
        self.reader = ResponseReader()
        self.transport: asyncio.Transport | None = None
        self.started = 0.0

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's is not a subclass
        self._send()

    def _send(self) -> None:
        assert self.transport is not None
        self.reader.reset()
        self.started = time.perf_counter()
        self.transport.write(self.source.next())

    def data_received(self, data: bytes) -> None:
        if not self.reader.feed(data):
            return
        now = time.perf_counter()
        self.latencies.append(now - self.started)
        self.stats["bytes"] += len(self.reader._buf)
        if not 200 <= self.reader.status < 300:
            self.stats["status_errors"] += 1
        if now >= self.deadline or self.reader.close:
            assert self.transport is not None
            self.transport.close()
            return
        self._send()

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.reader.done:
            self.stats["read_errors"] += 1
        if not self.finished.done():
            self.finished.set_result(None)


async def run_load(source: RequestSource, connections: int, duration: float) -> dict[str, float]:
    loop = asyncio.get_running_loop()
    latencies: list[float] = []
    stats = {"bytes": 0, "status_errors": 0, "read_errors": 0, "connect_errors": 0}
    started = time.perf_counter()
    deadline = started + duration

    async def one() -> None:
        # a connection the server closes (Connection: close) is replaced until the deadline
        while time.perf_counter() < deadline:
            finished: asyncio.Future[None] = loop.create_future()
            try:
                await loop.create_connection(
                    lambda f=finished: _Conn(source, deadline, latencies, stats, f),  # type: ignore[misc]
                    source.host,
                    source.port,
                )
            except OSError:
                stats["connect_errors"] += 1
                await asyncio.sleep(0.01)
                continue
            await finished

    await asyncio.gather(*(one() for _ in range(connections)))
    elapsed = time.perf_counter() - started
    latencies.sort()
    return {
        "requests": len(latencies),
        "duration_s": elapsed,
        "p50_us": percentile(latencies, 50) * 1e6,
        "p99_us": percentile(latencies, 99) * 1e6,
        "bytes": stats["bytes"],
        "errors": stats["status_errors"] + stats["read_errors"] + stats["connect_errors"],
    }


def fast_loop() -> None:
    try:
        import uvloop
    except ImportError:
        return
    asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description="keep-alive HTTP/1.1 load generator")
    ap.add_argument("--target", type=Path, required=True, help="the target spec (JSON)")
    ap.add_argument("--connections", type=int, default=32)
    ap.add_argument("--duration", type=float, default=5.0)
    args = ap.parse_args(argv)
    fast_loop()
    source = RequestSource(json.loads(args.target.read_text()))
    result = asyncio.run(run_load(source, args.connections, args.duration))
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
