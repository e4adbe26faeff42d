"""`GET /metrics` as Prometheus exposition, by prometheus_client: the part of `server.metrics` that needs it.

A module of its own so that prometheus_client (~5 MB of a server's memory) is loaded when `/metrics` is
first scraped, or when workers share their metrics (`serve --workers N`), not by every server.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily
from prometheus_client.registry import Collector
from prometheus_client.utils import floatToGoString

from .metrics import BUCKETS, HELP, JOURNAL_HELP

if TYPE_CHECKING:
    from ..engine import MockGPT
    from .metrics import Metrics
    from .observe import Observed

__all__ = ["SharedMetrics", "exposition"]

_BOUNDS = (*map(floatToGoString, BUCKETS), "+Inf")


def exposition(metrics: Metrics) -> bytes:
    registry = CollectorRegistry(auto_describe=False)
    if metrics.shared is not None:
        from prometheus_client import multiprocess as mp

        mp.MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
    else:
        registry.register(_Accumulated(metrics))
    if metrics.shared_journal or metrics.shared is None:
        registry.register(_SharedJournalSize(metrics.mock))
    return generate_latest(registry)


class _SharedJournalSize(Collector):
    """A journal every worker shares (SQLite) is counted once, when scraped, by the worker scraped."""

    def __init__(self, mock: MockGPT) -> None:
        self.mock = mock

    def collect(self) -> Iterator[GaugeMetricFamily]:
        yield GaugeMetricFamily("synthgpt_journal_calls", JOURNAL_HELP, value=len(self.mock.journal))


class _Accumulated(Collector):
    """One process's numbers as metric families, when scraped."""

    def __init__(self, metrics: Metrics) -> None:
        self.m = metrics

    def collect(self) -> Iterator[Any]:
        m = self.m
        requests = CounterMetricFamily("synthgpt_requests", HELP["requests"],
                                       labels=["api", "model", "rule", "status"])  # fmt: skip
        for (api, model, rule, status), n in sorted(m.requests.items()):
            requests.add_metric([api, model, rule, str(status)], n)
        faults = CounterMetricFamily("synthgpt_faults", HELP["faults"], labels=["api", "kind"])
        for (api, kind), n in sorted(m.faults.items()):
            faults.add_metric([api, kind], n)
        frames = CounterMetricFamily("synthgpt_stream_frames", HELP["frames"], labels=["api"])
        for api, n in sorted(m.frames.items()):
            frames.add_metric([api], n)
        yield from (requests, faults, frames)
        for name, per_api in (("synthgpt_answer_seconds", m.answer), ("synthgpt_first_byte_seconds",
                                                                       m.first_byte)):  # fmt: skip
            family = HistogramMetricFamily(name, HELP[name], labels=["api"])
            for api, h in sorted(per_api.items()):
                family.add_metric([api], list(zip(_BOUNDS, h.cumulative(), strict=True)), h.sum)
            yield family


class SharedMetrics:
    """prometheus_client's multiprocess metrics (`--workers N`): every update goes to this worker's files."""

    def __init__(self, mock: MockGPT, shared_journal: bool) -> None:
        r = CollectorRegistry(auto_describe=False)  # values live in the files; the registry is not read
        self.requests = Counter("synthgpt_requests", HELP["requests"], ["api", "model", "rule", "status"],
                                registry=r)  # fmt: skip
        self.faults = Counter("synthgpt_faults", HELP["faults"], ["api", "kind"], registry=r)
        self.frames = Counter("synthgpt_stream_frames", HELP["frames"], ["api"], registry=r)
        self.answer = Histogram("synthgpt_answer_seconds", HELP["synthgpt_answer_seconds"], ["api"],
                                buckets=BUCKETS, registry=r)  # fmt: skip
        self.first_byte = Histogram("synthgpt_first_byte_seconds", HELP["synthgpt_first_byte_seconds"],
                                    ["api"], buckets=BUCKETS, registry=r)  # fmt: skip
        self._children: dict[tuple[str, str, str, int], Any] = {}
        self._timing: dict[str, tuple[Any, Any]] = {}
        self.journal: Gauge | None = None
        if not shared_journal:
            self.journal = Gauge("synthgpt_journal_calls", JOURNAL_HELP, registry=r,
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
