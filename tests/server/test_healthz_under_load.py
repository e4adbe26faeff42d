"""A large but legal answer is drawn and encoded off the event loop: `/healthz` keeps answering while it
runs on a real server (issue 11, section 2). Figures: bench/healthz_under_load.py, bench/README.md."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.healthz_under_load import measure

pytestmark = [pytest.mark.slow, pytest.mark.timing]

# ~4 MB of JSON, half the default max_answer_bytes: about 2 s of drawing and encoding on a busy machine,
# during which the event loop used to answer nothing
LARGE_EMBEDDINGS = {"model": "text-embedding-3-large", "input": [f"text number {i}" for i in range(60)]}


def test_healthz_answers_while_a_large_answer_is_drawn(start_server: Any) -> None:
    with start_server("--seed", "0") as url:
        took, status, latencies = measure(url, "/v1/embeddings", LARGE_EMBEDDINGS)
    assert status == 200
    assert latencies, "the large request finished before any health check"
    # worst case, not a median: one stall is what a load balancer's health check sees (was 1.5-3.4 s)
    assert max(latencies) < 0.5, (took, sorted(latencies)[-5:])
