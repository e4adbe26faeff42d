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
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily
from prometheus_client.registry import Collector
from prometheus_client.utils import floatToGoString
from starlette.requests import Request
from starlette.responses import Response

if TYPE_CHECKING:
    from ..engine import MockGPT
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
    """The counters and histograms of one app.

    In one process they are plain numbers, added to per answer and turned into metric families when
    scraped (prometheus_client's own metric objects take a lock per update: ~15 us per answer, more than
    answering from the memo costs). With several workers they are prometheus_client's multiprocess
    metrics, whose values the workers share through files.
    """

    def __init__(self, mock: MockGPT) -> None:
        self._mock = mock
        # A journal in memory is each worker's own: each reports its size and the scrape sums them.
        # A shared (SQLite) one is read when scraped instead, so it is not counted once per worker.
        self.shared_journal = not _in_memory(mock)
        self._shared = _SharedMetrics(mock, self.shared_journal) if multiprocess() else None
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
        if self._shared is not None:
            self._shared.count(key, obs, faults, mock)
            return
        for kind in faults:
            self.faults[(api, kind)] = self.faults.get((api, kind), 0) + 1
        if obs.frames:
            self.frames[api] = self.frames.get(api, 0) + obs.frames
        (self.answer.get(api) or self.answer.setdefault(api, _Histogram())).observe(obs.duration_s)
        (self.first_byte.get(api) or self.first_byte.setdefault(api, _Histogram())).observe(obs.first_byte_s)

    def exposition(self) -> bytes:
        registry = CollectorRegistry(auto_describe=False)
        if self._shared is not None:
            from prometheus_client import multiprocess as mp

            mp.MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
        else:
            registry.register(_Accumulated(self))
        if self.shared_journal or self._shared is None:
            registry.register(_SharedJournalSize(self._mock))
        return generate_latest(registry)


class _Histogram:
    __slots__ = ("counts", "sum")

    def __init__(self) -> None:
        self.counts = [0] * (len(_BUCKETS) + 1)  # per bucket, the last one +Inf
        self.sum = 0.0

    def observe(self, value: float) -> None:
        self.counts[bisect.bisect_left(_BUCKETS, value)] += 1
        self.sum += value

    def buckets(self) -> list[tuple[str, float]]:
        out, total = [], 0
        for bound, n in zip((*map(floatToGoString, _BUCKETS), "+Inf"), self.counts, strict=True):
            total += n
            out.append((bound, float(total)))
        return out


class _Accumulated(Collector):
    """One process's numbers as metric families, when scraped."""

    def __init__(self, metrics: Metrics) -> None:
        self.m = metrics

    def collect(self) -> Iterator[Any]:
        m = self.m
        requests = CounterMetricFamily("synthgpt_requests", _HELP["requests"],
                                       labels=["api", "model", "rule", "status"])  # fmt: skip
        for (api, model, rule, status), n in sorted(m.requests.items()):
            requests.add_metric([api, model, rule, str(status)], n)
        faults = CounterMetricFamily("synthgpt_faults", _HELP["faults"], labels=["api", "kind"])
        for (api, kind), n in sorted(m.faults.items()):
            faults.add_metric([api, kind], n)
        frames = CounterMetricFamily("synthgpt_stream_frames", _HELP["frames"], labels=["api"])
        for api, n in sorted(m.frames.items()):
            frames.add_metric([api], n)
        yield from (requests, faults, frames)
        for name, per_api in (("synthgpt_answer_seconds", m.answer), ("synthgpt_first_byte_seconds",
                                                                       m.first_byte)):  # fmt: skip
            family = HistogramMetricFamily(name, _HELP[name], labels=["api"])
            for api, h in sorted(per_api.items()):
                family.add_metric([api], h.buckets(), h.sum)
            yield family


_HELP = {
    "requests": "API requests answered.",
    "faults": "Faults injected into answers.",
    "frames": "SSE frames sent.",
    "synthgpt_answer_seconds": "Request received to answer fully sent.",
    "synthgpt_first_byte_seconds": "Request received to status line sent.",
}


class _SharedMetrics:
    """prometheus_client's multiprocess metrics (`--workers N`): every update goes to this worker's files."""

    def __init__(self, mock: MockGPT, shared_journal: bool) -> None:
        r = CollectorRegistry(auto_describe=False)  # values live in the files; the registry is not read
        self.requests = Counter("synthgpt_requests", _HELP["requests"], ["api", "model", "rule", "status"],
                                registry=r)  # fmt: skip
        self.faults = Counter("synthgpt_faults", _HELP["faults"], ["api", "kind"], registry=r)
        self.frames = Counter("synthgpt_stream_frames", _HELP["frames"], ["api"], registry=r)
        self.answer = Histogram("synthgpt_answer_seconds", _HELP["synthgpt_answer_seconds"], ["api"],
                                buckets=_BUCKETS, registry=r)  # fmt: skip
        self.first_byte = Histogram("synthgpt_first_byte_seconds", _HELP["synthgpt_first_byte_seconds"],
                                    ["api"], buckets=_BUCKETS, registry=r)  # fmt: skip
        self._children: dict[tuple[str, str, str, int], Any] = {}
        self._timing: dict[str, tuple[Any, Any]] = {}
        self.journal: Gauge | None = None
        if not shared_journal:
            self.journal = Gauge("synthgpt_journal_calls", _JOURNAL_HELP, registry=r,
                                 multiprocess_mode="livesum")  # fmt: skip
            self.journal.set(len(mock.journal))

    def count(self, key: tuple[str, str, str, int], obs: Observed, faults: tuple[str, ...],
              mock: MockGPT) -> None:  # fmt: skip
        api = obs.api
        children = self._children
        child = children.get(key)
        if child is None:  # `labels()` takes a lock and builds its key on every call: looked up once
            child = children[key] = self.requests.labels(key[0], key[1], key[2], str(key[3]))
        child.inc()
        for kind in faults:
            self.faults.labels(api, kind).inc()
        if obs.frames:
            self.frames.labels(api).inc(obs.frames)
        timing = self._timing.get(api)
        if timing is None:
            timing = self._timing[api] = (self.answer.labels(api), self.first_byte.labels(api))
        timing[0].observe(obs.duration_s)
        timing[1].observe(obs.first_byte_s)
        if self.journal is not None:
            self.journal.set(len(mock.journal))


def _in_memory(mock: MockGPT) -> bool:
    from ..journal import Journal

    return type(mock.journal) is Journal


async def metrics_endpoint(request: Request) -> Response:
    metrics: Metrics = request.app.state.metrics
    return Response(metrics.exposition(), media_type=CONTENT_TYPE)
