"""A slow Redis holds up only the requests that need it: a real `synthgpt serve --state redis://…` keeps
answering `/healthz` and stateless requests at once while its redis-server is frozen (SIGSTOP), and the
stateful request that waited gets its exact step once Redis answers again."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from bench.cluster import _first_line, _stop
from tests.state._redis import RedisServer

RULES = Path(__file__).resolve().parents[2] / "bench" / "rules" / "scale_out.yaml"
FAST = 0.1  # seconds: what "at once" means here, on a loaded 2-core CI machine


def chat(text: str) -> dict[str, object]:
    return {"model": "gpt-4o", "messages": [{"role": "user", "content": text}]}


@pytest.fixture
def server(redis_server: RedisServer) -> Iterator[str]:
    cmd = [sys.executable, "-m", "synthgpt", "serve", str(RULES), "--port", "0", "--state", redis_server.url,
           "--state-timeout", "20", "--no-request-log"]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        line = _first_line(proc, timeout=120)
        assert line.startswith("synthgpt listening on "), line
        yield line.split(" on ", 1)[1].strip()
    finally:
        _stop(proc)
        if proc.stdout is not None:
            proc.stdout.close()


def timed(client: httpx.Client, method: str, path: str, body: object = None) -> tuple[float, httpx.Response]:
    started = time.perf_counter()
    r = client.request(method, path, json=body)
    return time.perf_counter() - started, r


def test_a_frozen_redis_holds_up_only_the_stateful_requests(server: str, redis_server: RedisServer) -> None:
    with httpx.Client(base_url=server, timeout=30) as client:
        stateless = client.post("/v1/chat/completions", json=chat("hello")).content
        assert client.post("/v1/chat/completions", json=chat("flaky")).json()["choices"][0]["message"][
            "content"] == "step one"  # fmt: skip
        redis_server.pause()
        waited: list[httpx.Response] = []
        try:
            stateful = threading.Thread(target=lambda: waited.append(
                httpx.post(server + "/v1/chat/completions", json=chat("flaky"), timeout=30)))  # fmt: skip
            stateful.start()
            time.sleep(0.3)  # the stateful request is now waiting for Redis
            assert not waited
            seconds: list[float] = []
            for _ in range(10):
                took, r = timed(client, "GET", "/healthz")
                assert r.status_code == 200
                seconds.append(took)
                took, r = timed(client, "POST", "/v1/chat/completions", chat("hello"))
                assert (r.status_code, r.content) == (200, stateless)  # the same bytes as before
                seconds.append(took)
            assert max(seconds) < FAST, seconds
            assert not waited  # still waiting: it needs the shared count
        finally:
            redis_server.resume()
        stateful.join(timeout=30)
    [r] = waited
    assert r.status_code == 200, r.text
    assert r.json()["choices"][0]["message"]["content"] == "step two"  # its exact step, none skipped
    calls = httpx.get(server + "/_synthgpt/calls").json()
    assert [c["rule"] for c in calls].count("default") == 11  # every stateless call journaled, late
