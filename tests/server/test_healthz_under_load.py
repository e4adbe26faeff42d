"""A large but legal answer is drawn and encoded off the event loop: `/healthz` keeps answering while it
runs on a real server (issue 11, section 2). Figures: bench/healthz_under_load.py, bench/README.md."""

from __future__ import annotations

import threading
import time
from typing import Any

import httpx
import pytest

pytestmark = pytest.mark.slow

# ~4 MB of JSON, half the default max_answer_bytes: about 2 s of drawing and encoding on a busy machine,
# during which the event loop used to answer nothing
LARGE_EMBEDDINGS = {"model": "text-embedding-3-large", "input": [f"text number {i}" for i in range(60)]}


def test_healthz_answers_while_a_large_answer_is_drawn(start_server: Any) -> None:
    with start_server("--seed", "0") as url:
        done = threading.Event()
        result: dict[str, Any] = {}

        def large() -> None:
            started = time.perf_counter()
            r = httpx.post(url + "/v1/embeddings", json=LARGE_EMBEDDINGS, timeout=120)
            took = time.perf_counter() - started
            result.update(status=r.status_code, vectors=len(r.json()["data"]), took=took)
            done.set()

        latencies: list[float] = []
        with httpx.Client(base_url=url, timeout=30) as client:
            client.get("/healthz")
            thread = threading.Thread(target=large)
            thread.start()
            time.sleep(0.05)
            while not done.is_set():
                started = time.perf_counter()
                assert client.get("/healthz").status_code == 200
                latencies.append(time.perf_counter() - started)
                time.sleep(0.01)
            thread.join()
    assert (result["status"], result["vectors"]) == (200, 60)
    assert latencies, "the large request finished before any health check"
    # worst case, not a median: one stall is what a load balancer's health check sees (was 1.5-3.4 s)
    assert max(latencies) < 0.5, (result["took"], sorted(latencies)[-5:])
