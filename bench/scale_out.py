"""Scale-out figures: throughput of 1 vs 3 replicas behind nginx, and what `--state redis://…` costs a call.

    python bench/scale_out.py            # ~1 minute
    python bench/scale_out.py --quick    # a few seconds per figure

1. Cost per call of the engine (`MockGPT.resolve`, in process, a `sequence` rule) with the state in memory
   (the default), the journal in SQLite, and the Redis state (counter + journal; counter only): µs per
   call and Redis round trips per call, counted at the client (`RedisLink.call`).
2. The hop the asyncio alternative would add: a sync Redis round trip inline on the event loop vs the same
   call handed to a worker thread (`asyncio.to_thread`), µs each: why the Redis calls are made inline.
3. Requests/s through nginx round-robin to 1 and to 3 `synthgpt serve --state redis://…` replicas, with
   the built-in load generator (bench/pyload.py). On a machine with fewer free cores than replicas + nginx +
   load generator the 3-replica figure cannot rise much; the report prints the core count next to it.

Needs `redis-server` and `nginx` (apt-get install -y redis-server nginx).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make the repository root importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.cluster import Cluster, RedisServer, missing_programs
from bench.pyload import RequestSource, run_load

RULES = Path(__file__).resolve().parent / "rules" / "scale_out.yaml"
REQUEST = {"model": "gpt-4o", "messages": [{"role": "user", "content": "flaky"}]}


def engine_costs(redis_url: str, workdir: Path, calls: int) -> list[dict[str, Any]]:
    from synthgpt.journal import SQLiteJournal
    from synthgpt.rules.loader import mock_from_files
    from synthgpt.state import RedisState

    rules = RULES
    rows: list[dict[str, Any]] = []
    for mode in ("memory", "sqlite journal", "redis counter", "redis counter + journal"):
        mock = mock_from_files([rules])
        state: RedisState | None = None
        trips = [0]
        if mode == "sqlite journal":
            mock.journal = SQLiteJournal(workdir / "bench.sqlite")
        elif mode.startswith("redis"):
            state = RedisState(redis_url)
            call = state.link.call

            def counted(command: Any, call: Any = call, trips: list[int] = trips) -> Any:
                trips[0] += 1
                return call(command)

            state.link.call = counted  # type: ignore[method-assign]
            state.counter.reset()
            mock.counter = state.counter
            if mode.endswith("journal"):
                mock.journal = state.journal(1000)
        for _ in range(200):  # warm up (and fill the journal to its bound)
            mock.resolve(REQUEST)
        trips[0] = 0
        started = time.perf_counter()
        for _ in range(calls):
            mock.resolve(REQUEST)
        elapsed = time.perf_counter() - started
        rows.append({"state": mode, "us_per_call": elapsed / calls * 1e6, "round_trips": trips[0] / calls})
        if state is not None:
            state.close()
    return rows


def hop_costs(redis_url: str, calls: int) -> dict[str, float]:
    import redis

    client = redis.Redis.from_url(redis_url)
    client.ping()

    async def measure() -> dict[str, float]:
        started = time.perf_counter()
        for _ in range(calls):
            client.incr("synthgpt:bench:hop")
        inline = (time.perf_counter() - started) / calls * 1e6
        started = time.perf_counter()
        for _ in range(calls):
            await asyncio.to_thread(client.incr, "synthgpt:bench:hop")
        threaded = (time.perf_counter() - started) / calls * 1e6
        return {"inline_us": inline, "to_thread_us": threaded}

    try:
        return asyncio.run(measure())
    finally:
        client.delete("synthgpt:bench:hop")
        client.close()


def throughput(workdir: Path, replicas: int, duration: float, connections: int) -> dict[str, float]:
    rules = RULES
    sub = workdir / f"cluster-{replicas}"
    sub.mkdir(exist_ok=True)
    with Cluster(sub, rules=[rules], replicas=replicas) as c:
        body = json.dumps(REQUEST)
        spec = {"host": "127.0.0.1", "port": c.port, "unique": False,
                "requests": [{"path": "/v1/chat/completions", "body": body,
                              "headers": [["Content-Type", "application/json"]]}]}  # fmt: skip
        asyncio.run(run_load(RequestSource(spec), connections, min(1.0, duration)))  # warm up
        result = asyncio.run(run_load(RequestSource(spec), connections, duration))
    rps = result["requests"] / result["duration_s"]
    return {"replicas": replicas, "rps": rps, "p50_us": result["p50_us"], "p99_us": result["p99_us"],
            "errors": result["errors"]}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="a few seconds per figure")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the report")
    args = parser.parse_args(argv)
    problem = missing_programs()
    if problem:
        print(f"scale_out: {problem}", file=sys.stderr)
        return 2
    calls, duration, connections = (300, 2.0, 16) if args.quick else (3000, 8.0, 32)
    with tempfile.TemporaryDirectory(prefix="synthgpt-scale-") as tmp:
        work = Path(tmp)
        redis_dir = work / "redis"
        redis_dir.mkdir()
        server = RedisServer(redis_dir)
        server.start()
        try:
            engine = engine_costs(server.url, work, calls)
            hops = [hop_costs(server.url, calls) for _ in range(3)]
        finally:
            server.stop()
        hop = {k: statistics.median(h[k] for h in hops) for k in hops[0]}
        scaling = [throughput(work, n, duration, connections) for n in (1, 3)]
    report = {"cores": os.cpu_count(), "engine": engine, "hop": hop, "throughput": scaling}
    if args.json:
        print(json.dumps(report))
        return 0
    print(f"cost per call of the state store (MockGPT.resolve of a `sequence` rule, {calls} calls)")
    for row in engine:
        us, trips = row["us_per_call"], row["round_trips"]
        print(f"  {row['state']:<26} {us:8.1f} µs/call   {trips:.2f} round trips")
    print("a Redis round trip on the event loop vs handed to a worker thread (asyncio.to_thread)")
    print(f"  inline {hop['inline_us']:.1f} µs   to_thread {hop['to_thread_us']:.1f} µs")
    print(f"throughput through nginx round-robin, --state redis, {connections} connections, "
          f"{duration:.0f} s, {os.cpu_count()} cores")  # fmt: skip
    for row in scaling:
        print(f"  {row['replicas']} replica(s) {row['rps']:9.0f} req/s   p50 {row['p50_us'] / 1000:.2f} ms   "
              f"p99 {row['p99_us'] / 1000:.2f} ms   errors {row['errors']:.0f}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
