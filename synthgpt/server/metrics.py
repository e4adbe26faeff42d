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

import os
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector
from starlette.requests import Request
from starlette.responses import Response

if TYPE_CHECKING:
    from ..mock import MockGPT
    from .observe import Observed

__all__ = ["CONTENT_TYPE", "MAX_SERIES", "MULTIPROC_ENV", "Metrics", "metrics_endpoint", "multiprocess"]

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"
MAX_SERIES = 1000
_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)


def multiprocess() -> bool:
    """Values go to `PROMETHEUS_MULTIPROC_DIR` (set before prometheus_client was imported)."""
    return bool(os.environ.get(MULTIPROC_ENV))


class _SharedJournalSize(Collector):
    """A journal every worker shares (SQLite) is counted once, when scraped, by the worker scraped."""

    def __init__(self, mock: MockGPT) -> None:
        self.mock = mock

    def collect(self) -> Iterator[GaugeMetricFamily]:
        yield GaugeMetricFamily("synthgpt_journal_calls", _JOURNAL_HELP, value=len(self.mock.journal))


_JOURNAL_HELP = "Calls held by the journal (GET /_synthgpt/calls)."


class Metrics:
    """The counters and histograms of one app."""

    def __init__(self, mock: MockGPT) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.requests = Counter("synthgpt_requests", "API requests answered.",
                                ["api", "model", "rule", "status"], registry=r)  # fmt: skip
        self.faults = Counter("synthgpt_faults", "Faults injected into answers.", ["api", "kind"], registry=r)
        self.frames = Counter("synthgpt_stream_frames", "SSE frames sent.", ["api"], registry=r)
        self.answer = Histogram("synthgpt_answer_seconds", "Request received to answer fully sent.",
                                ["api"], buckets=_BUCKETS, registry=r)  # fmt: skip
        self.first_byte = Histogram("synthgpt_first_byte_seconds", "Request received to status line sent.",
                                    ["api"], buckets=_BUCKETS, registry=r)  # fmt: skip
        # A journal in memory is each worker's own: each reports its size and the scrape sums them.
        # A shared (SQLite) one is read when scraped instead, so it is not counted once per worker.
        self.shared_journal = not _in_memory(mock)
        self.journal: Gauge | None = None
        if not self.shared_journal:
            self.journal = Gauge("synthgpt_journal_calls", _JOURNAL_HELP, registry=r,
                                 multiprocess_mode="livesum")  # fmt: skip
            self.journal.set(len(mock.journal))
        self._series: dict[tuple[str, ...], Any] = {}
        self._mock = mock

    def count(self, obs: Observed, mock: MockGPT) -> None:
        model = obs.model
        key = (obs.api, model, obs.rule, str(obs.status))
        child = self._series.get(key)
        if child is None:
            if len(self._series) >= MAX_SERIES:
                key = (obs.api, "_other", obs.rule, str(obs.status))
                child = self._series.get(key)
            if child is None:
                child = self._series[key] = self.requests.labels(*key)
        child.inc()
        for kind in obs.faults:
            self.faults.labels(obs.api, kind).inc()
        if obs.frames:
            self.frames.labels(obs.api).inc(obs.frames)
        self.answer.labels(obs.api).observe(obs.duration_s)
        self.first_byte.labels(obs.api).observe(obs.first_byte_s)
        if self.journal is not None and mock is self._mock:
            self.journal.set(len(mock.journal))

    def exposition(self) -> bytes:
        if multiprocess():
            from prometheus_client import multiprocess as mp

            registry = CollectorRegistry()
            mp.MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
        else:
            registry = self.registry
        if self.shared_journal:
            registry = _with(registry, _SharedJournalSize(self._mock))
        return generate_latest(registry)


def _in_memory(mock: MockGPT) -> bool:
    from ..journal import Journal

    return type(mock.journal) is Journal


class _Joined(Collector):
    def __init__(self, *parts: Collector) -> None:
        self.parts = parts

    def collect(self) -> Iterator[Any]:
        for part in self.parts:
            yield from part.collect()


def _with(registry: CollectorRegistry, extra: Collector) -> CollectorRegistry:
    joined = CollectorRegistry(auto_describe=False)
    joined.register(_Joined(registry, extra))
    return joined


async def metrics_endpoint(request: Request) -> Response:
    metrics: Metrics = request.app.state.metrics
    return Response(metrics.exposition(), media_type=CONTENT_TYPE)
