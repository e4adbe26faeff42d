"""The metrics of several workers (`server.metrics_shared`): the files they write give the exposition
prometheus_client's own metric objects gave for the same answers, summed over processes, with nothing
held back (not at exit, not until a later pass of the event loop), from several threads and after a fork."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.parser import text_string_to_metric_families

from synthgpt import MockGPT
from synthgpt.server import create_app, metrics_shared
from synthgpt.server.metrics import MULTIPROC_ENV
from synthgpt.server.metrics_shared import SharedMetrics, _Doubles
from synthgpt.server.observe import Observed

# Feeds one process's answers to the metrics, in the multiprocess directory argv[2]: `synthgpt` through
# `Metrics.count` as the server does, `prometheus_client` to prometheus_client's own metric objects, as
# `SharedMetrics` did before it wrote the files itself. Ends with `os._exit`: no clean-up at exit runs.
_FEED = r"""
import os, sys, types
mode, directory = sys.argv[1], sys.argv[2]
os.environ["PROMETHEUS_MULTIPROC_DIR"] = directory
from synthgpt import MockGPT
from synthgpt.server.metrics import BUCKETS, HELP, JOURNAL_HELP, Metrics
from synthgpt.server.observe import Observed

TIMES = [0.0, 0.0005, 0.00050000001, 0.001, 0.0049999, 0.005, 0.1, 0.1 + 0.2, 1.0, 2.5, 9.99, 10.0, 30.0,
         30.000001, 1e6, 1e-9, 0.0123456789, -0.001]
FAULTS = [(), ("error",), ("truncate",), ("disconnect", "delay", "slow"), (), ("error", "delay")]

def answers():
    for i in range(70):
        obs = Observed(api=("chat", "messages", "embeddings", "responses")[i % 4],
                       model=("gpt-4o", "claude", 'a "quoted" model', "ünï", "")[i % 5],
                       rule=("default", "triggers")[i % 2], status=(200, 429, 503)[i % 3],
                       frames=(0, 7, 0, 1, 0)[i % 5], duration_s=TIMES[i % len(TIMES)],
                       first_byte_s=TIMES[(i * 7) % len(TIMES)])
        yield obs, FAULTS[i % len(FAULTS)], min(i + 1, 9)  # the journal grows, then stays at its cap

if mode == "prometheus_client":
    from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
    r = CollectorRegistry(auto_describe=False)
    requests = Counter("synthgpt_requests", HELP["requests"], ["api", "model", "rule", "status"], registry=r)
    faults = Counter("synthgpt_faults", HELP["faults"], ["api", "kind"], registry=r)
    frames = Counter("synthgpt_stream_frames", HELP["frames"], ["api"], registry=r)
    answer = Histogram("synthgpt_answer_seconds", HELP["synthgpt_answer_seconds"], ["api"], buckets=BUCKETS,
                       registry=r)
    first_byte = Histogram("synthgpt_first_byte_seconds", HELP["synthgpt_first_byte_seconds"], ["api"],
                           buckets=BUCKETS, registry=r)
    journal = Gauge("synthgpt_journal_calls", JOURNAL_HELP, registry=r, multiprocess_mode="livesum")
    journal.set(0)
    for obs, kinds, size in answers():
        requests.labels(obs.api, obs.model, obs.rule, str(obs.status)).inc()
        for kind in kinds:
            faults.labels(obs.api, kind).inc()
        if obs.frames:
            frames.labels(obs.api).inc(obs.frames)
        answer.labels(obs.api), first_byte.labels(obs.api)  # both made at once, as SharedMetrics made them
        answer.labels(obs.api).observe(obs.duration_s)
        first_byte.labels(obs.api).observe(obs.first_byte_s)
        journal.set(size)
else:
    metrics = Metrics(MockGPT(seed=0))
    assert metrics.shared is not None
    for obs, kinds, size in answers():
        metrics.count(obs, kinds, types.SimpleNamespace(journal=range(size)))
os._exit(0)
"""


def _feed(mode: str, directory: Path) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run([sys.executable, "-c", _FEED, mode, str(directory)], env=env, capture_output=True,
                          text=True)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]


def _exposition(directory: Path) -> str:
    registry = CollectorRegistry()
    MultiProcessCollector(registry, path=str(directory))  # type: ignore[no-untyped-call]
    return generate_latest(registry).decode()


def _families(text: str) -> list[str]:
    """The families' text, in name order: the files' order in the directory decides theirs."""
    return sorted(text.split("# HELP "))


def _samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}  # fmt: skip


@pytest.mark.slow
def test_two_processes_expose_what_prometheus_clients_metrics_did_summed_with_nothing_lost_at_exit(
    tmp_path: Path,
) -> None:
    texts = {}
    for mode in ("prometheus_client", "synthgpt"):
        (tmp_path / mode).mkdir()
        for _ in range(2):  # two workers, one after the other: different pids, the same answers
            _feed(mode, tmp_path / mode)
        texts[mode] = _exposition(tmp_path / mode)
    assert _families(texts["synthgpt"]) == _families(texts["prometheus_client"])  # every byte, bar the order
    assert sorted(p.name.split("_")[0] for p in (tmp_path / "synthgpt").iterdir()) == [
        "counter", "counter", "gauge", "gauge", "histogram", "histogram"]  # fmt: skip
    got = _samples(texts["synthgpt"])
    assert sum(v for (n, _), v in got.items() if n == "synthgpt_requests_total") == 140
    assert got[("synthgpt_answer_seconds_count", (("api", "chat"),))] == 36
    assert got[("synthgpt_journal_calls", ())] == 18  # each worker's own journal, at its cap of 9
    assert got[("synthgpt_requests_total", (("api", "chat"), ("model", "gpt-4o"), ("rule", "default"),
                                            ("status", "200")))] == 4  # answers 0 and 60, twice  # fmt: skip


# ---------------------------------------------------------------------------------------- in this process


@pytest.fixture
def shared(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A multiprocess directory for this process's `SharedMetrics` (prometheus_client's own metric objects
    stay as they are: only the journal's gauge would use them)."""
    monkeypatch.setenv(MULTIPROC_ENV, str(tmp_path))
    monkeypatch.setattr(metrics_shared, "_files", None)
    yield tmp_path
    if metrics_shared._files is not None:
        metrics_shared._files.close()


def _answer(api: str = "chat", model: str = "gpt-4o", duration_s: float = 0.25,
            first_byte_s: float = 0.5) -> Observed:  # fmt: skip
    return Observed(api=api, model=model, rule="default", status=200, duration_s=duration_s,
                    first_byte_s=first_byte_s)  # fmt: skip


def _count(metrics: SharedMetrics, obs: Observed, faults: tuple[str, ...] = ()) -> None:
    metrics.count((obs.api, obs.model, obs.rule, obs.status), obs, faults, MockGPT(seed=0))


def _total(directory: Path, name: str) -> float:
    return sum(v for (n, _), v in _samples(_exposition(directory)).items() if n == name)


def test_answers_counted_from_several_threads_are_all_there(shared: Path) -> None:
    metrics = SharedMetrics(MockGPT(seed=0), shared_journal=True)
    times = (0.25, 0.5, 2**-10, 40.0)  # sums exact in any order

    def answer(n: int) -> None:
        for i in range(n):
            _count(metrics, _answer(duration_s=times[i % 4], first_byte_s=times[(i + 1) % 4]), ("error",))

    threads = [threading.Thread(target=answer, args=(400,)) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    got = _samples(_exposition(shared))
    chat = (("api", "chat"),)
    assert _total(shared, "synthgpt_requests_total") == 2400
    assert got[("synthgpt_faults_total", (("api", "chat"), ("kind", "error")))] == 2400
    assert got[("synthgpt_answer_seconds_count", chat)] == 2400
    assert got[("synthgpt_answer_seconds_sum", chat)] == 600 * sum(times)
    assert got[("synthgpt_answer_seconds_bucket", (("api", "chat"), ("le", "0.0005")))] == 0
    assert got[("synthgpt_answer_seconds_bucket", (("api", "chat"), ("le", "0.001")))] == 600
    assert got[("synthgpt_answer_seconds_bucket", (("api", "chat"), ("le", "0.5")))] == 1800
    assert got[("synthgpt_answer_seconds_bucket", (("api", "chat"), ("le", "30.0")))] == 1800


def test_a_file_grown_past_its_first_size_keeps_every_entry(shared: Path) -> None:
    metrics = SharedMetrics(MockGPT(seed=0), shared_journal=True)
    for i in range(1400):  # ~180 bytes an entry: the counters' file doubles twice
        _count(metrics, _answer(model=f"model-{i:04d}"), ("truncate",))
        _count(metrics, _answer(model="gpt-4o", duration_s=0.0))
    counters = next(shared.glob("counter_*.db"))
    assert counters.stat().st_size > 2 * 65536
    got = _samples(_exposition(shared))
    counted = {dict(labels)["model"]: v for (name, labels), v in got.items()
               if name == "synthgpt_requests_total"}  # fmt: skip
    assert counted == {"gpt-4o": 1400, **{f"model-{i:04d}": 1 for i in range(1400)}}
    assert got[("synthgpt_faults_total", (("api", "chat"), ("kind", "truncate")))] == 1400
    assert got[("synthgpt_answer_seconds_bucket", (("api", "chat"), ("le", "0.0005")))] == 1400


def test_a_file_left_by_a_process_of_the_same_pid_is_continued(tmp_path: Path) -> None:
    # as prometheus_client's own values continue it
    path = str(tmp_path / "counter_synthgpt-1.db")
    first = _Doubles(path)
    at = first.add("a")
    first.values[first.add("b")] += 2.5
    first.values[at] += 1.0
    first.close()
    again = _Doubles(path)
    assert again.add("a") == at and again.values[at] == 1.0
    again.values[again.add("c")] += 4.0
    again.close()
    from prometheus_client.mmap_dict import MmapedDict

    read = MmapedDict.read_all_values_from_file(path)  # type: ignore[no-untyped-call]
    assert [(key, value) for key, value, _, _ in read] == [("a", 1.0), ("b", 2.5), ("c", 4.0)]


def test_a_forked_child_counts_in_files_of_its_own_from_zero(shared: Path) -> None:
    metrics = SharedMetrics(MockGPT(seed=0), shared_journal=True)
    for _ in range(2):
        _count(metrics, _answer())
    pid = os.fork()
    if pid == 0:  # pragma: no cover  # the child: counts 3 and leaves at once
        try:
            for _ in range(3):
                _count(metrics, _answer())
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
    _count(metrics, _answer())
    assert (shared / f"counter_synthgpt-{pid}.db").exists()
    assert _total(shared, "synthgpt_requests_total") == 6  # 3 here, 3 there: not the parent's 2 again
    assert _total(shared, "synthgpt_answer_seconds_count") == 6


async def test_an_answer_is_in_the_files_when_the_request_ends_not_a_pass_of_the_loop_later(
    shared: Path,
) -> None:
    app = create_app(MockGPT(seed=0))
    body = json.dumps({"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]}).encode()
    scope: dict[str, Any] = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST", "scheme": "http",
        "path": "/v1/chat/completions", "raw_path": b"/v1/chat/completions", "query_string": b"",
        "root_path": "", "headers": [(b"content-type", b"application/json")], "client": ("127.0.0.1", 1),
        "server": ("127.0.0.1", 80),
    }  # fmt: skip
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    async with app.router.lifespan_context(app):
        await app(scope, receive, send)
        # no await since: a write left for the loop's next pass would not be in the files yet
        assert sent[-1]["type"] == "http.response.body" and not sent[-1].get("more_body")
        assert _total(shared, "synthgpt_requests_total") == 1
        assert _total(shared, "synthgpt_first_byte_seconds_count") == 1
