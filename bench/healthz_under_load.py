"""`/healthz` latency while the largest legal requests run, on a real `synthgpt serve`.

    .venv/bin/python bench/healthz_under_load.py [--rounds 3]

Starts a server on a free loopback port, sends each large request below (largest legal embeddings batch
for the default `--max-answer-bytes`, 128 chat choices, a structured output near `max_schema_values`)
from a second thread while this one polls `/healthz` every 10 ms; prints the request's own time and the
health checks' median and worst latency. Stops the server at the end.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import threading
import time
from typing import Any

import httpx

LARGE: dict[str, tuple[str, dict[str, Any]]] = {
    "embeddings 118 x 3072 (8.3 MB)": (
        "/v1/embeddings",
        {"model": "text-embedding-3-large", "input": [f"text number {i}" for i in range(118)]},
    ),
    "chat n=128": (
        "/v1/chat/completions",
        {"model": "gpt-4o", "n": 128, "messages": [{"role": "user", "content": "write about the sea"}]},
    ),
    "chat schema, 3000 records": (
        "/v1/chat/completions",
        {
            "model": "gpt-4o",
            "messages": [{"role": "user", "content": "the records"}],
            "response_format": {"type": "json_schema", "json_schema": {"name": "r", "schema": {
                "type": "array", "minItems": 3000, "maxItems": 3000,
                "items": {"type": "object", "required": ["id", "name"],
                          "properties": {"id": {"type": "integer"}, "name": {"type": "string"}}},
            }}},
        },
    ),
}  # fmt: skip


def start() -> tuple[subprocess.Popen[bytes], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "synthgpt", "serve", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline().decode()
    url = line.rsplit(" ", 1)[-1].strip()
    for _ in range(200):
        try:
            httpx.get(url + "/healthz", timeout=1)
            break
        except httpx.HTTPError:
            time.sleep(0.05)
    return proc, url


def measure(url: str, path: str, body: dict[str, Any]) -> tuple[float, int, list[float]]:
    done = threading.Event()
    result: dict[str, Any] = {}

    def big() -> None:
        started = time.perf_counter()
        r = httpx.post(url + path, json=body, timeout=120)
        result.update(took=time.perf_counter() - started, status=r.status_code)
        done.set()

    latencies: list[float] = []
    with httpx.Client(base_url=url, timeout=30) as client:
        client.get("/healthz")
        thread = threading.Thread(target=big)
        thread.start()
        time.sleep(0.02)
        while not done.is_set():
            started = time.perf_counter()
            client.get("/healthz")
            latencies.append(time.perf_counter() - started)
            time.sleep(0.01)
        thread.join()
    return result["took"], result["status"], latencies


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    proc, url = start()
    try:
        for name, (path, body) in LARGE.items():
            for _ in range(args.rounds):
                took, status, lat = measure(url, path, {**body, "user": str(time.time())})  # never memoized
                ms = sorted(x * 1000 for x in lat)
                print(f"{name:32} {status} request {took:6.2f} s; healthz x{len(ms):3}: median "
                      f"{statistics.median(ms) if ms else 0:6.1f} ms, worst {max(ms, default=0):6.1f} ms")
    finally:
        proc.terminate()
        proc.wait(timeout=15)


if __name__ == "__main__":
    main()
