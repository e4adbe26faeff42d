"""Per-request cost of the ASGI apps alone, in process: no sockets, no load generator, no HTTP parser.

A profiling aid next to bench/run.py. It calls synthgpt's Starlette app and the ceiling app directly
with a prepared ASGI scope, many times, and prints microseconds of CPU per request (the best of several
repeats, so a busy machine disturbs it little) and how many `send` calls each answer took. With
`--profile` it runs the synthgpt app under cProfile and prints where the time goes.

    python -m bench.appbench                        # every HTTP case
    python -m bench.appbench --cases chat --profile # one case, with a profile
    python -m bench.appbench --synthgpt-root /tmp/patched   # measure a patched checkout

What this leaves out (uvicorn's HTTP parsing and socket writes) is the same for both apps except for
the number of writes, which `sends` shows.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import dataclasses
import io
import json
import pstats
import sys
import time
from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

if TYPE_CHECKING:
    from bench.cases import Case, Prepared

__all__ = ["AsgiCall", "ceiling_for", "measure_app", "rule_files"]

ROOT = Path(__file__).resolve().parent.parent
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[MutableMapping[str, Any], Receive, Send], Awaitable[None]]


class AsgiCall:
    """One request replayed against an ASGI app the way uvicorn's httptools protocol presents it."""

    def __init__(self, path: str, body: bytes, headers: tuple[tuple[str, str], ...], query: str = "") -> None:
        self.body = body
        self.headers: list[tuple[bytes, bytes]] = []
        hdrs = [(b"host", b"127.0.0.1:8000"), (b"content-length", str(len(body)).encode())]
        hdrs += [(k.lower().encode(), v.encode()) for k, v in headers]
        self.scope: dict[str, Any] = {
            "type": "http", "asgi": {"version": "3.0", "spec_version": "2.3"}, "http_version": "1.1",
            "server": ("127.0.0.1", 8000), "client": ("127.0.0.1", 50000), "scheme": "http", "method": "POST",
            "root_path": "", "path": path, "raw_path": path.encode(), "query_string": query.encode(),
            "headers": hdrs, "state": {},
        }  # fmt: skip

    async def run(self, app: App) -> tuple[int, bytes, int]:
        """(status, body bytes, number of body sends) of one call; `self.headers` keeps the raw headers."""
        sent_body = False
        never: asyncio.Event = asyncio.Event()

        async def receive() -> Message:
            nonlocal sent_body
            if not sent_body:
                sent_body = True
                return {"type": "http.request", "body": self.body, "more_body": False}
            await never.wait()  # the client stays connected; cancelled when the response ends
            return {"type": "http.disconnect"}

        status = 0
        chunks: list[bytes] = []
        sends = 0

        async def send(message: Message) -> None:
            nonlocal status, sends
            if message["type"] == "http.response.start":
                status = message["status"]
                self.headers = list(message.get("headers", ()))
            elif message["type"] == "http.response.body" and message.get("body"):
                sends += 1
                chunks.append(message["body"])

        await app(dict(self.scope), receive, send)
        return status, b"".join(chunks), sends


async def _loop(app: App, call: AsgiCall, n: int) -> float:
    started = time.process_time()
    for _ in range(n):
        await call.run(app)
    return (time.process_time() - started) / n * 1e6


def measure_app(app: App, call: AsgiCall, n: int, repeats: int) -> float:
    """Best-of-`repeats` CPU microseconds per request over `n` requests."""

    async def go() -> float:
        for _ in range(min(n, 50)):
            await call.run(app)
        return min([await _loop(app, call, n) for _ in range(repeats)])

    return asyncio.run(go())


def rule_files() -> list[str]:
    """The rule files of the `rules` cases (`Case.server == "rules"`), in order."""
    return [str(p) for p in sorted((ROOT / "bench" / "rules").glob("*.yaml"))]


def ceiling_for(case: Case, app: App) -> tuple[Prepared, App]:
    """The case's request and synthgpt's answer to it, captured from `app` in process, and the ceiling app
    answering that request (`?case=<name>`) with those bytes. `Prepared.skip` says when it could not."""
    import httpx

    from bench.cases import prepare
    from bench.ceiling_app import create_app

    prep = prepare(case, "http://127.0.0.1:8000", transport=httpx.ASGITransport(app=app))  # an allowed Host
    return prep, create_app({case.name: prep.ceiling_payload()} if not prep.skip else {})


def _synthgpt_app(rule_files: list[str], memo: bool) -> App:
    from synthgpt.server.run import ServeConfig, create_app_from_config

    config = ServeConfig(rule_files=tuple(rule_files), seed=1)
    if not memo:  # every call drawn and encoded: what distinct requests cost
        config = dataclasses.replace(config, memo_entries=0)
    app: App = create_app_from_config(config)
    return app


def _unstreamed(body: bytes) -> bytes:
    """A stream case's request body asking for the answer as one JSON body instead."""
    data = json.loads(body)
    data["stream"] = False
    return json.dumps(data, separators=(",", ":")).encode()


def main(argv: list[str] | None = None) -> None:
    from bench.cases import CASES

    ap = argparse.ArgumentParser(description="per-request CPU of the ASGI apps, in process")
    ap.add_argument("--cases", default=",".join(c.name for c in CASES))
    ap.add_argument("-n", type=int, default=500, help="requests per repeat")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--profile", action="store_true", help="cProfile the synthgpt app and print the top")
    ap.add_argument("--sort", default="cumulative", help="the profile's order (cumulative, tottime, ...)")
    ap.add_argument("--callers", metavar="REGEX", help="with --profile: who calls the functions matching")
    ap.add_argument("--synthgpt-root", type=Path, help="import synthgpt from this checkout")
    ap.add_argument("--memo", action="store_true", help="keep the memo on: repeated requests are replayed")
    ap.add_argument(
        "--pair", action="store_true",
        help="also time each stream case's body with `stream: false`: what streaming adds to one answer",
    )  # fmt: skip
    args = ap.parse_args(argv)
    if args.synthgpt_root:
        sys.path.insert(0, str(args.synthgpt_root.resolve()))
    names = [c.strip() for c in args.cases.split(",") if c.strip()]
    memo: bool = args.memo
    apps = {
        "builtin": _synthgpt_app([], memo),
        "rules": _synthgpt_app(rule_files(), memo),
    }
    print(f"synthgpt from {__import__('synthgpt').__file__}; memo {'on' if memo else 'off (all drawn)'}")
    pair_head = f" {'non-stream us':>13} {'stream adds':>11}" if args.pair else ""
    print(f"{'case':<18} {'synthgpt us':>12} {'ceiling us':>11} {'ratio':>6} {'sends s/c':>10}{pair_head}")
    for case in (c for c in CASES if c.name in names):
        app = apps[case.server]
        prep, ceiling = ceiling_for(case, app)
        if prep.skip:
            print(f"{case.name:<18} {prep.skip}")
            continue
        s_call = AsgiCall(case.path, prep.body, case.headers)
        c_call = AsgiCall(case.path, prep.body, case.headers, query=f"case={case.name}")
        s_us = measure_app(app, s_call, args.n, args.repeats)
        c_us = measure_app(ceiling, c_call, args.n, args.repeats)
        s_sends = asyncio.run(s_call.run(app))[2]
        c_sends = asyncio.run(c_call.run(ceiling))[2]
        pair = ""
        if args.pair and case.stream:
            # the same request answered as one JSON body: the answer drawn alike, only the encoding differs
            whole = AsgiCall(case.path, _unstreamed(prep.body), case.headers)
            w_us = measure_app(app, whole, args.n, args.repeats)
            pair = f" {w_us:>13.1f} {s_us - w_us:>11.1f}"
        sends = f"{s_sends:>5}/{c_sends:<4}"
        print(f"{case.name:<18} {s_us:>12.1f} {c_us:>11.1f} {c_us / s_us:>6.2f} {sends}{pair}")
        if args.profile:
            prof = cProfile.Profile()
            prof.enable()
            asyncio.run(_loop(app, s_call, args.n))
            prof.disable()
            out = io.StringIO()
            stats = pstats.Stats(prof, stream=out).sort_stats(args.sort)
            stats.print_stats(45)
            if args.callers:
                stats.print_callers(args.callers)
            print(out.getvalue().replace(str(ROOT) + "/", ""))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
