"""`GET /metrics`: Prometheus text exposition of what the server answered (prometheus_client).

    synthgpt_requests_total{api,model,rule,status}   API requests answered
    synthgpt_faults_total{api,kind}                  faults injected (error, truncate, disconnect, …)
    synthgpt_stream_frames_total{api}                SSE frames sent
    synthgpt_answer_seconds{api}                     histogram: request received -> answer fully sent
    synthgpt_first_byte_seconds{api}                 histogram: request received -> status line sent
    synthgpt_journal_calls                           calls held by the journal (`/_synthgpt/calls`)

Each app has its own registry (tests build many apps in one process). With several workers
(`serve --workers N`) prometheus_client's multiprocess mode is on: `serve` points
`PROMETHEUS_MULTIPROC_DIR` at a fresh directory before any worker starts, every worker writes its values
there, and whichever worker answers `/metrics` reports the sum over all of them.

`model` comes from the request, so a client could make it take any number of values: past
`MAX_SERIES` label sets, new models are counted as `model="_other"`.
"""

from __future__ import annotations

import bisect
import os
from itertools import accumulate
from typing import TYPE_CHECKING

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

if TYPE_CHECKING:
    from ..engine import MockGPT
    from .metrics_shared import SharedMetrics
    from .observe import Observed

__all__ = ["BUCKETS", "CONTENT_TYPE", "HELP", "JOURNAL_HELP", "MAX_SERIES", "MULTIPROC_ENV", "Metrics",
           "metrics_endpoint", "multiprocess"]  # fmt: skip

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"
MAX_SERIES = 1000
BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)


def multiprocess() -> bool:
    """Values go to `PROMETHEUS_MULTIPROC_DIR` (set before prometheus_client was imported)."""
    return bool(os.environ.get(MULTIPROC_ENV))


JOURNAL_HELP = "Calls held by the journal (GET /_synthgpt/calls)."


class Metrics:
    """The counters and histograms of one app.

    In one process they are plain numbers, added to per answer and turned into metric families when
    scraped (prometheus_client's own metric objects take a lock per update: ~15 us per answer, more than
    answering from the memo costs). With several workers, `metrics_shared.SharedMetrics` adds them to
    the files the workers share instead (`requests` is still kept, for `MAX_SERIES`).
    """

    def __init__(self, mock: MockGPT) -> None:
        self.mock = mock
        # A journal in memory is each worker's own: each reports its size and the scrape sums them.
        # A shared (SQLite) one is read when scraped instead, so it is not counted once per worker.
        self.shared_journal = not _in_memory(mock)
        self.shared: SharedMetrics | None = None
        if multiprocess():
            from .metrics_shared import SharedMetrics

            self.shared = SharedMetrics(mock, self.shared_journal)
        self.requests: dict[tuple[str, str, str, int], int] = {}
        """(api, model, rule, status) -> answers; with several workers, only this worker's label sets."""
        self.faults: dict[tuple[str, str], int] = {}
        self.frames: dict[str, int] = {}
        self.answer: dict[str, _Histogram] = {}
        self.first_byte: dict[str, _Histogram] = {}

    def count(self, obs: Observed, faults: tuple[str, ...], mock: MockGPT) -> None:
        api = obs.api
        key = (api, obs.model, obs.rule, obs.status)
        requests = self.requests
        seen = requests.get(key)
        if seen is None:
            if len(requests) >= MAX_SERIES:
                key = (api, "_other", obs.rule, obs.status)
            seen = requests.get(key, 0)
        requests[key] = seen + 1
        if self.shared is not None:
            self.shared.count(key, obs, faults, mock)
            return
        for kind in faults:
            self.faults[(api, kind)] = self.faults.get((api, kind), 0) + 1
        if obs.frames:
            self.frames[api] = self.frames.get(api, 0) + obs.frames
        (self.answer.get(api) or self.answer.setdefault(api, _Histogram())).observe(obs.duration_s)
        (self.first_byte.get(api) or self.first_byte.setdefault(api, _Histogram())).observe(obs.first_byte_s)

    def exposition(self) -> bytes:
        from .metrics_export import exposition  # prometheus_client (~5 MB) is loaded with the first scrape

        return exposition(self)


class _Histogram:
    __slots__ = ("counts", "sum")

    def __init__(self) -> None:
        self.counts = [0] * (len(BUCKETS) + 1)  # per bucket, the last one +Inf
        self.sum = 0.0

    def observe(self, value: float) -> None:
        self.counts[bisect.bisect_left(BUCKETS, value)] += 1
        self.sum += value

    def cumulative(self) -> list[float]:
        """How many values fell at or below each bucket's bound, the last bound +Inf."""
        return list(map(float, accumulate(self.counts)))


HELP = {
    "requests": "API requests answered.",
    "faults": "Faults injected into answers.",
    "frames": "SSE frames sent.",
    "synthgpt_answer_seconds": "Request received to answer fully sent.",
    "synthgpt_first_byte_seconds": "Request received to status line sent.",
}


def _in_memory(mock: MockGPT) -> bool:
    from ..journal import Journal

    return type(mock.journal) is Journal


async def metrics_endpoint(request: Request) -> Response:
    metrics: Metrics = request.app.state.metrics
    if metrics.shared is None:  # one process's numbers, which its event loop adds to: read on it
        return Response(metrics.exposition(), media_type=CONTENT_TYPE)
    # the workers' files, and a journal they share gathered from every worker: off the event loop
    return Response(await run_in_threadpool(metrics.exposition), media_type=CONTENT_TYPE)
