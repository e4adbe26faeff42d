"""CPU of counting answers in prometheus_client's multiprocess mode (`serve --workers N`), in process.

Points `PROMETHEUS_MULTIPROC_DIR` at a fresh directory before anything imports prometheus_client, builds
the app as `serve` does (memo off) and runs N distinct chat requests through it (bench.distinct's way).
Run it twice under cachegrind and take the difference, so start-up cancels out:

    valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \\
        python -m bench.metrics_shared 230          # minus the same with 30, divided by 200

`--single` leaves the variable unset (one process's plain numbers), for comparison; `--scrape` prints
`/metrics` at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

__all__ = ["main"]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description="CPU of multiprocess metrics per answer, in process")
    ap.add_argument("n", type=int, nargs="?", default=230, help="distinct chat requests")
    ap.add_argument("--single", action="store_true", help="no PROMETHEUS_MULTIPROC_DIR")
    ap.add_argument("--scrape", action="store_true", help="print /metrics at the end")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as shared:
        if not args.single:
            os.environ["PROMETHEUS_MULTIPROC_DIR"] = shared
        import prometheus_client  # noqa: F401  # loaded here in both modes, so the difference is per answer

        from bench.appbench import AsgiCall, _synthgpt_app
        from bench.cases import CASES
        from bench.distinct import _run, bodies

        chat = next(c for c in CASES if c.name == "chat")
        app = _synthgpt_app([], memo=False)
        asyncio.run(_run(app, chat, bodies(chat, 20, offset=10**6), None))  # warm: the first answers differ
        asyncio.run(_run(app, chat, bodies(chat, args.n), None))
        if args.scrape:

            async def scrape() -> bytes:
                call = AsgiCall("/metrics", b"", ())
                call.scope["method"] = "GET"
                return (await call.run(app))[1]

            sys.stdout.write(asyncio.run(scrape()).decode())


if __name__ == "__main__":
    main()
