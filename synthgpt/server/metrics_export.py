"""`GET /metrics` as Prometheus exposition, by prometheus_client: the part of `server.metrics` that needs it.

A module of its own so that prometheus_client (~5 MB of a server's memory) is loaded when `/metrics` is
first scraped, or when workers share their metrics (`serve --workers N`, `server.metrics_shared`), not by
every server.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily
from prometheus_client.registry import Collector
from prometheus_client.utils import floatToGoString

from .metrics import BUCKETS, HELP, JOURNAL_HELP

if TYPE_CHECKING:
    from ..engine import MockGPT
    from .metrics import Metrics

__all__ = ["BOUNDS", "exposition"]

BOUNDS = (*map(floatToGoString, BUCKETS), "+Inf")
"""The buckets' upper bounds as their `le` label writes them."""


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
                family.add_metric([api], list(zip(BOUNDS, h.cumulative(), strict=True)), h.sum)
            yield family
