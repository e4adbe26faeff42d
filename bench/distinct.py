"""CPU per distinct request, in process, and a digest of every answer (to prove a change byte-identical).

Every request differs (a counter in the prompt), so nothing is replayed from the memo: this is the cost of
decoding, drawing and encoding an answer through synthgpt's ASGI app, without sockets or HTTP parsing.
The first digest covers the status and body of each answer, the second its headers: the same digests before
and after a change mean the change altered no byte on the wire for these requests.

    python -m bench.distinct                         # every case, µs of CPU per request and digests
    python -m bench.distinct --cases chat --profile  # plus a cProfile of one case
    python -m bench.distinct --memo                  # with the memo on, as served (every lookup misses)
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import hashlib
import io
import json
import pstats
import sys
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.appbench import ROOT, App, AsgiCall, _synthgpt_app, rule_files
from bench.cases import CASES, PROMPT, Case

__all__ = ["main"]

STREAM_LIMIT = 40  # output tokens of a stream case: about 50 events, no sizing needed


def bodies(case: Case, n: int, offset: int = 0) -> list[bytes]:
    limit = STREAM_LIMIT if case.stream else None
    made = (case.make_body(f"{PROMPT} #{offset + i}", limit, case.stream) for i in range(n))
    return [json.dumps(body, separators=(",", ":")).encode() for body in made]


async def _run(
    app: App, case: Case, reqs: list[bytes], digest: hashlib._Hash | None, heads: hashlib._Hash | None = None
) -> float:
    started = time.process_time()
    for body in reqs:
        call = AsgiCall(case.path, body, case.headers)
        status, data, _ = await call.run(app)
        if digest is not None:
            digest.update(str(status).encode() + b"\0" + data + b"\0")
        if heads is not None:
            heads.update(b"".join(k + b":" + v + b"\n" for k, v in call.headers) + b"\0")
    return (time.process_time() - started) / len(reqs) * 1e6


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description="per-request CPU of distinct requests, in process")
    ap.add_argument("--cases", default=",".join(c.name for c in CASES))
    ap.add_argument("-n", type=int, default=400, help="requests per repeat")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--synthgpt-root", type=Path, help="import synthgpt from this checkout")
    ap.add_argument("--memo", action="store_true",
                    help="keep the memo on, as `serve` does: what its misses cost counts too")  # fmt: skip
    args = ap.parse_args(argv)
    if args.synthgpt_root:
        sys.path.insert(0, str(args.synthgpt_root.resolve()))
    apps = {
        "builtin": _synthgpt_app([], args.memo),
        "rules": _synthgpt_app(rule_files(), args.memo),
    }
    names = [c.strip() for c in args.cases.split(",") if c.strip()]
    print(f"synthgpt from {__import__('synthgpt').__file__}")
    print(f"{'case':<18} {'us/req':>8}  digest of {args.n} answers (bodies, headers)")
    for case in (c for c in CASES if c.name in names):
        app = apps[case.server]
        digest, heads = hashlib.sha256(), hashlib.sha256()
        asyncio.run(_run(app, case, bodies(case, args.n), digest, heads))  # also warms caches
        best = min(
            asyncio.run(_run(app, case, bodies(case, args.n, (r + 1) * args.n), None))
            for r in range(args.repeats)
        )
        print(f"{case.name:<18} {best:>8.1f}  {digest.hexdigest()[:16]} {heads.hexdigest()[:16]}")
        if args.profile:
            prof = cProfile.Profile()
            reqs = bodies(case, args.n, 10**6)
            prof.enable()
            asyncio.run(_run(app, case, reqs, None))
            prof.disable()
            out = io.StringIO()
            pstats.Stats(prof, stream=out).sort_stats("tottime").print_stats(40)
            print(out.getvalue().replace(str(ROOT) + "/", ""))


if __name__ == "__main__":
    main()
