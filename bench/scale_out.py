"""Scale-out figures: throughput of 1 vs 3 replicas behind nginx, and what `--state redis://…` costs a call.

    python bench/scale_out.py            # ~1 minute
    python bench/scale_out.py --quick    # a few seconds per figure

1. Cost per call of the engine (`MockGPT.resolve`, in process, a `sequence` rule) with the state in memory
   (the default), the journal in SQLite, and the Redis state (counter + journal; counter only): µs per
   call and Redis round trips per call, counted at the client (`RedisLink.call`).
2. A Redis round trip three ways, µs each: the synchronous client inline, the same call handed to a worker
   thread (`asyncio.to_thread`), and the asyncio client the server uses (`redis.asyncio`).
3. Memo entries in Redis, where would they pay: for the cheap default chat answer, the Faker template rule
   and the nested-schema structured output (the `bench.cases` requests), the CPU of drawing and encoding
   the answer in process (`pipeline.answer`) against fetching its encoded bytes from Redis (a GET of an
   entry that size: a hit) and the GET every memo-eligible request would pay when the entry is not there
   (a miss), each one round trip; and the share of hits at which a shared memo breaks even.
4. Requests/s through nginx round-robin to 1 and to 3 `synthgpt serve --state redis://…` replicas, with
   the built-in load generator (bench/pyload.py) in this process. The load generator takes a core of its
   own; with 2 cores, 3 replicas + nginx + the generator share them, so the 3-replica figure shows what
   the state layer allows on this machine, not linear scaling. The report prints the core count and the
   1-minute load average (other processes sharing the machine) next to it.

Needs `redis-server` and `nginx` (apt-get install -y redis-server nginx).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
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
    import redis.asyncio

    client = redis.Redis.from_url(redis_url)
    client.ping()

    async def measure() -> dict[str, float]:
        aclient = redis.asyncio.Redis.from_url(redis_url)
        await aclient.ping()
        started = time.perf_counter()
        for _ in range(calls):
            client.incr("synthgpt:bench:hop")
        inline = (time.perf_counter() - started) / calls * 1e6
        started = time.perf_counter()
        for _ in range(calls):
            await asyncio.to_thread(client.incr, "synthgpt:bench:hop")
        threaded = (time.perf_counter() - started) / calls * 1e6
        started = time.perf_counter()
        for _ in range(calls):
            await aclient.incr("synthgpt:bench:hop")
        asynchronous = (time.perf_counter() - started) / calls * 1e6
        await aclient.aclose()
        return {"inline_us": inline, "to_thread_us": threaded, "asyncio_us": asynchronous}

    try:
        return asyncio.run(measure())
    finally:
        client.delete("synthgpt:bench:hop")
        client.close()


MEMO_CASES = ("chat", "faker_template", "schema")


def memo_costs(redis_url: str, calls: int) -> list[dict[str, Any]]:
    """Per case: µs to draw and encode the answer in process vs µs to fetch its bytes from Redis."""
    import redis.asyncio

    from bench.cases import CASES, PROMPT
    from synthgpt.codec.openai_chat.encode import ChatCodec
    from synthgpt.journal import record_from_dict, record_to_dict
    from synthgpt.pipeline import answer
    from synthgpt.rules.defaults import default_rules
    from synthgpt.rules.loader import mock_from_files

    faker_rules = Path(__file__).resolve().parent / "rules" / "faker_template.yaml"
    codec, rows = ChatCodec(), []

    async def fetch(key: str, n: int) -> float:
        client = redis.asyncio.Redis.from_url(redis_url)
        await client.get(key)
        started = time.perf_counter()
        for _ in range(n):
            await client.get(key)
        took = (time.perf_counter() - started) / n * 1e6
        await client.aclose()
        return took

    import redis as sync_redis

    writer = sync_redis.Redis.from_url(redis_url)
    try:
        for name in MEMO_CASES:
            case = next(c for c in CASES if c.name == name)
            if case.server == "rules":
                mock = mock_from_files([faker_rules])
            else:
                from synthgpt import MockGPT

                mock = MockGPT(default_rules())
            mock.journal = type(mock.journal)(0)  # keep nothing: the journal is not what is measured
            # distinct requests (a counter in the prompt), as a memo would see them on first sight
            bodies = [json.dumps(case.make_body(f"{PROMPT} #{i}", None, False)).encode()
                      for i in range(calls)]  # fmt: skip
            for raw in bodies[:20]:
                answer(mock, codec, raw, {}, {})
            started = time.perf_counter()
            answers = [answer(mock, codec, raw, {}, {}) for raw in bodies]
            draw = (time.perf_counter() - started) / calls * 1e6
            # an entry as `state.memo` keeps it; a hit also decodes it and journals the call (replay)
            last = answers[-1]
            assert last.generation is not None
            kept_body = base64.b64encode(last.body).decode()
            kept_record = record_to_dict(last.generation.record)
            kept = {"status": 200, "headers": last.headers, "body": kept_body, "record": kept_record}
            entry = json.dumps(kept, separators=(",", ":"))
            started = time.perf_counter()
            for _ in range(calls):
                stored = json.loads(entry)
                base64.b64decode(stored["body"])
                mock.replay(last.generation.rule, record_from_dict(stored["record"]))
            replay = (time.perf_counter() - started) / calls * 1e6
            size = len(entry)
            writer.set("synthgpt:bench:memo", entry)
            hit = asyncio.run(fetch("synthgpt:bench:memo", calls)) + replay
            miss = asyncio.run(fetch("synthgpt:bench:absent", calls))
            # a shared memo saves (draw - hit) per hit and costs `miss` per miss: it pays above this share
            breaks_even = miss / (draw - hit + miss) if draw > hit else None
            rows.append({"case": name, "draw_us": draw, "entry_bytes": size, "redis_hit_us": hit,
                         "replay_us": replay, "redis_miss_us": miss, "round_trips": 1,
                         "break_even_hit_share": breaks_even})  # fmt: skip
    finally:
        writer.delete("synthgpt:bench:memo")
        writer.close()
    return rows


def throughput(workdir: Path, replicas: int, duration: float, connections: int) -> dict[str, float]:
    rules = RULES
    sub = workdir / f"cluster-{replicas}"
    sub.mkdir(exist_ok=True)
    with Cluster(sub, rules=[rules], replicas=replicas, durable=False) as c:
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
    parser.add_argument("--no-throughput", action="store_true",
                        help="only the in-process figures (no replicas, no nginx)")  # fmt: skip
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
        server = RedisServer(redis_dir, durable=False)
        server.start()
        try:
            engine = engine_costs(server.url, work, calls)
            hops = [hop_costs(server.url, calls) for _ in range(3)]
            memo = memo_costs(server.url, min(calls, 1000))
        finally:
            server.stop()
        hop = {k: statistics.median(h[k] for h in hops) for k in hops[0]}
        load_before = os.getloadavg()[0]
        scaling = [] if args.no_throughput else [throughput(work, n, duration, connections) for n in (1, 3)]
    report = {"cores": os.cpu_count(), "load_1min": load_before, "engine": engine, "hop": hop, "memo": memo,
              "throughput": scaling}  # fmt: skip
    if args.json:
        print(json.dumps(report))
        return 0
    print(f"cost per call of the state store (MockGPT.resolve of a `sequence` rule, {calls} calls)")
    for row in engine:
        us, trips = row["us_per_call"], row["round_trips"]
        print(f"  {row['state']:<26} {us:8.1f} µs/call   {trips:.2f} round trips")
    print("one Redis round trip: sync client inline, handed to a thread (asyncio.to_thread), asyncio client")
    print(f"  inline {hop['inline_us']:.1f} µs   to_thread {hop['to_thread_us']:.1f} µs   "
          f"asyncio {hop['asyncio_us']:.1f} µs")  # fmt: skip
    print("memo entries in Redis: an answer drawn in process vs its bytes fetched (1 round trip a fetch)")
    for row in memo:
        even = row["break_even_hit_share"]
        print(f"  {row['case']:<15} draw {row['draw_us']:7.1f} µs   {row['entry_bytes']:6d} B   "
              f"Redis hit {row['redis_hit_us']:6.1f} µs (replay {row['replay_us']:5.1f})   "
              f"miss {row['redis_miss_us']:6.1f} µs   "
              f"pays above {'never' if even is None else f'{even:.0%} hits'}")  # fmt: skip
    if not scaling:
        return 0
    print(f"throughput through nginx round-robin, --state redis, {connections} connections, "
          f"{duration:.0f} s, {os.cpu_count()} cores, load generator in this process, "
          f"1-min load average {load_before:.2f} before")  # fmt: skip
    for row in scaling:
        print(f"  {row['replicas']} replica(s) {row['rps']:9.0f} req/s   p50 {row['p50_us'] / 1000:.2f} ms   "
              f"p99 {row['p99_us'] / 1000:.2f} ms   errors {row['errors']:.0f}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
