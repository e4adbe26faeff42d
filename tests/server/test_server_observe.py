"""What the server did: one log line per answered API request (text and JSON) and `GET /metrics`, parsed
from the real Prometheus exposition; with `--workers 2`, a shared journal and metrics summed over both."""

from __future__ import annotations

import asyncio
import io
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from synthgpt import MockGPT
from synthgpt.journal import CallRecord
from synthgpt.server import create_app
from synthgpt.server.observe import configure_request_log

HI = {"model": "gpt-4o", "messages": [{"role": "user", "content": "Tell me about tides"}]}


def ask(text: str, **extra: Any) -> dict[str, Any]:
    return {"model": "gpt-4o", "messages": [{"role": "user", "content": text}], **extra}


@pytest.fixture
def log() -> Iterator[io.StringIO]:
    buf = io.StringIO()
    configure_request_log("text", stream=buf)
    yield buf
    configure_request_log("text", enabled=False)


def client(mock: MockGPT) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=create_app(mock)), base_url="http://synth")


def _only_duration(line: str) -> tuple[str, float]:
    m = re.fullmatch(r"(.*) duration_ms=(\d+\.\d+|\d+)", line)
    assert m, line
    return m.group(1), float(m.group(2))


async def test_one_text_line_per_answer_naming_api_model_rule_seed_status(log: io.StringIO) -> None:
    mock = MockGPT(seed=0)
    async with client(mock) as c:
        assert (await c.post("/v1/chat/completions", json=HI)).status_code == 200
        assert (await c.post("/v1/chat/completions", json=ask("x !MOCK_ERROR:429!"))).status_code == 429
        assert (await c.post("/v1/chat/completions", content=b"{nope")).status_code == 400
        streamed = await c.post("/v1/messages", json={**ask("hi"), "max_tokens": 50, "stream": True})
        assert (await c.get("/healthz")).status_code == 200  # not an API request: not logged
    await asyncio.sleep(0)  # the lines of a pass of the loop are written when the next pass starts
    seeds = [r.seed for r in mock.journal]
    frames = streamed.text.count("\n\n")
    lines = [_only_duration(line) for line in log.getvalue().splitlines()]
    assert [text for text, _ in lines] == [
        f"synthgpt: POST /v1/chat/completions 200 api=chat model=gpt-4o rule=default seed={seeds[0]} "
        "stream=false frames=0 faults=-",
        f"synthgpt: POST /v1/chat/completions 429 api=chat model=gpt-4o rule=triggers seed={seeds[1]} "
        "stream=false frames=0 faults=error",
        "synthgpt: POST /v1/chat/completions 400 api=chat model=- rule=- seed=- stream=false frames=0 "
        "faults=-",
        f"synthgpt: POST /v1/messages 200 api=messages model=gpt-4o rule=default seed={seeds[2]} "
        f"stream=true frames={frames} faults=-",
    ]
    assert frames > 3
    assert all(0 < ms < 10_000 for _, ms in lines)


async def test_json_lines_and_memo_replays_are_logged_alike() -> None:
    buf = io.StringIO()
    configure_request_log("json", stream=buf)
    try:
        mock = MockGPT(seed=3)
        async with client(mock) as c:
            bodies = [(await c.post("/v1/chat/completions", json=HI)).content for _ in range(3)]
        await asyncio.sleep(0)
    finally:
        configure_request_log("text", enabled=False)
    assert bodies[0] == bodies[1] == bodies[2]
    lines = [json.loads(line) for line in buf.getvalue().splitlines()]
    assert len(lines) == 3
    seed = str(mock.journal[0].seed)
    for line in lines:  # the third answer came from the memo: the same fields
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", line.pop("time"))
        assert isinstance(line.pop("duration_ms"), float)
        assert line == {
            "level": "info", "logger": "synthgpt.access", "message": "answered", "method": "POST",
            "path": "/v1/chat/completions", "api": "chat", "model": "gpt-4o", "rule": "default",
            "seed": seed, "status": 200, "stream": False, "frames": 0, "faults": [],
        }  # fmt: skip


def _samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    out = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


async def test_metrics_count_requests_faults_frames_latency_and_journal() -> None:
    mock = MockGPT(seed=0)
    async with client(mock) as c:
        stream = await c.post("/v1/chat/completions", json=ask("hello", stream=True))
        await c.post("/v1/chat/completions", json=ask("hello"))
        await c.post("/v1/chat/completions", json=ask("hello"))
        await c.post("/v1/chat/completions", json=ask("a !MOCK_ERROR:503!"))
        cut = await c.post("/v1/chat/completions", json=ask("b !MOCK_TRUNCATE:2!", stream=True))
        await c.post("/v1/embeddings", json={"model": "text-embedding-3-small", "input": "x"})
        reply = await c.get("/metrics")
    assert reply.status_code == 200
    assert reply.headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8"
    got = _samples(reply.text)

    def value(name: str, **labels: str) -> float:
        return got[(name, tuple(sorted(labels.items())))]

    assert value("synthgpt_requests_total", api="chat", model="gpt-4o", rule="default", status="200") == 3
    assert value("synthgpt_requests_total", api="chat", model="gpt-4o", rule="triggers", status="503") == 1
    assert value("synthgpt_requests_total", api="chat", model="gpt-4o", rule="triggers", status="200") == 1
    assert value("synthgpt_requests_total", api="embeddings", model="text-embedding-3-small",
                 rule="embeddings", status="200") == 1  # fmt: skip
    assert sum(v for (n, _), v in got.items() if n == "synthgpt_requests_total") == 6
    assert value("synthgpt_faults_total", api="chat", kind="error") == 1
    assert value("synthgpt_faults_total", api="chat", kind="truncate") == 1
    frames = stream.text.count("\n\n") + cut.text.count("\n\n")
    assert cut.text.count("\n\n") == 2
    assert value("synthgpt_stream_frames_total", api="chat") == frames
    assert value("synthgpt_answer_seconds_count", api="chat") == 5
    assert value("synthgpt_answer_seconds_bucket", api="chat", le="+Inf") == 5
    assert value("synthgpt_first_byte_seconds_count", api="embeddings") == 1
    assert 0 < value("synthgpt_answer_seconds_sum", api="chat") < 10
    assert value("synthgpt_journal_calls") == len(mock.journal) == 6


async def test_metrics_with_a_shared_journal_read_it_when_scraped(tmp_path: Path) -> None:
    from synthgpt.journal import SQLiteJournal

    mock = MockGPT(seed=0)
    mock.journal = SQLiteJournal(str(tmp_path / "calls.sqlite"))
    async with client(mock) as c:
        await c.post("/v1/chat/completions", json=HI)
        mock.journal.add(lambda i: CallRecord(i, mock.journal[0].request, "other", 1, mock.journal[0].output,
                                               0.0, 0.0))  # another worker's call  # fmt: skip
        got = _samples((await c.get("/metrics")).text)
    assert got[("synthgpt_journal_calls", ())] == 2


# ------------------------------------------------------------------------------------------ two workers


def _metric_total(url: str, name: str) -> float:
    return sum(v for (n, _), v in _samples(httpx.get(url + "/metrics").text).items() if n == name)


@pytest.mark.slow
def test_two_workers_share_the_journal_and_the_metrics(start_server: Any, tmp_path: Path) -> None:
    log = tmp_path / "serve.log"
    with start_server("--workers", "2", env={"SYNTHGPT_LOG_FORMAT": "json"}, stderr=log) as url:
        for i in range(10):  # a new connection per call, so the kernel may hand them to either worker
            body = ask(f"call {i}", stream=i % 2 == 0)
            assert httpx.post(url + "/v1/chat/completions", json=body).status_code == 200
        for _ in range(4):  # whichever worker answers sees every call
            listing = httpx.get(url + "/_synthgpt/calls")
            assert listing.headers["x-total-count"] == "10"
            assert _metric_total(url, "synthgpt_requests_total") == 10
            assert _metric_total(url, "synthgpt_answer_seconds_count") == 10
            assert _metric_total(url, "synthgpt_journal_calls") == 10
    text = log.read_text()
    assert (
        "synthgpt: 2 workers share one journal in a temporary file (--journal PATH.sqlite keeps it)" in text
    )
    lines = [json.loads(line) for line in text.splitlines() if line.startswith("{")]
    assert sorted(line["path"] for line in lines) == ["/v1/chat/completions"] * 10
    assert {line["rule"] for line in lines} == {"default"}


async def test_past_max_series_new_models_count_as_other(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("synthgpt.server.metrics.MAX_SERIES", 2)
    async with client(MockGPT(seed=0)) as c:
        for model in ("a", "b", "c", "d", "a"):
            await c.post("/v1/chat/completions", json={**HI, "model": model})
        got = _samples((await c.get("/metrics")).text)
    counted = {dict(labels)["model"]: v for (name, labels), v in got.items()
               if name == "synthgpt_requests_total"}  # fmt: skip
    assert counted == {"a": 2, "b": 1, "_other": 2}


async def test_frames_of_streams_framed_other_than_sse_are_counted(log: io.StringIO) -> None:
    # the stream tells the frames it sent: an NDJSON (Ollama) stream has no blank lines to count
    mock = MockGPT(seed=0)
    body = {**ask("Tell me about tides"), "model": "llama3", "stream": True}
    async with client(mock) as c:
        streamed = await c.post("/api/chat", json=body)
    await asyncio.sleep(0)
    assert streamed.status_code == 200
    lines = streamed.text.splitlines()
    assert len(lines) > 3
    (text, _), = [_only_duration(line) for line in log.getvalue().splitlines()]
    assert text.endswith(f"stream=true frames={len(lines)} faults=-"), text


class _Writes(io.StringIO):
    """A log stream that remembers each write: how the lines reached it, not only what they say."""

    def __init__(self) -> None:
        super().__init__()
        self.writes: list[str] = []

    def write(self, s: str) -> int:
        self.writes.append(s)
        return super().write(s)


async def test_answers_ending_in_one_pass_of_the_loop_are_written_in_one_write() -> None:
    buf = _Writes()
    configure_request_log("text", stream=buf)
    try:
        mock = MockGPT(seed=0)
        async with client(mock) as c:
            alone = await c.post("/v1/chat/completions", json=HI)
            assert alone.status_code == 200 and buf.writes == []  # held to the end of this pass of the loop
            await asyncio.sleep(0)
            assert len(buf.writes) == 1
            asks = [c.post("/v1/chat/completions", json=ask(f"q {i}")) for i in range(4)]
            together = await asyncio.gather(*asks)
            assert [r.status_code for r in together] == [200] * 4
            await asyncio.sleep(0)  # the pass of the loop that wrote them ends
    finally:
        configure_request_log("text", enabled=False)
    lines = buf.getvalue().splitlines()
    assert len(lines) == 5
    assert all(line.startswith("synthgpt: POST /v1/chat/completions 200 ") for line in lines)
    assert sorted(_only_duration(line)[0].split(" seed=")[1] for line in lines[1:]) == sorted(
        f"{r.seed} stream=false frames=0 faults=-" for r in list(mock.journal)[1:]
    )
    assert len(buf.writes) == 2, buf.writes  # the four answers of one pass: one write


def test_the_line_is_the_formatters_line_with_or_without_a_log_record() -> None:
    import logging

    from synthgpt.server.observe import Observed, TextLineFormatter, line_fields, text_line

    scope = {"method": "POST", "path": "/v1/chat/completions"}
    cases = [
        Observed(api="chat", model="gpt-4o", rule="default", seed=2**64 - 1, status=200, duration_s=0.001234),
        Observed(api="messages", model="a b", rule='say "hi"', seed=None, status=0, stream=True, frames=7),
        Observed(api="chat", model="", rule="", seed=0, status=429, duration_s=12.0),
        Observed(api="", model='"', rule="r", seed=-1, status=500, frames=0, duration_s=1e-9),
    ]
    for obs in cases:
        for faults in ((), ("error",), ("truncate", "slow")):
            fields = line_fields(scope, obs, faults)
            record = logging.LogRecord("synthgpt.access", logging.INFO, __file__, 0, "answered", (), None)
            record.synthgpt = fields
            assert text_line(scope, obs, faults) == TextLineFormatter().format(record)


async def test_a_handler_added_to_the_access_logger_still_gets_every_record() -> None:
    import logging

    from synthgpt.server.observe import ACCESS_LOGGER

    buf = io.StringIO()
    configure_request_log("text", stream=buf)
    seen: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            seen.append(record)

    extra = Keep()
    logging.getLogger(ACCESS_LOGGER).addHandler(extra)
    try:
        async with client(MockGPT(seed=0)) as c:
            assert (await c.post("/v1/chat/completions", json=HI)).status_code == 200
    finally:
        logging.getLogger(ACCESS_LOGGER).removeHandler(extra)  # the handlers flush the records they hold
        configure_request_log("text", enabled=False)
    assert len(seen) == 1 and seen[0].synthgpt["rule"] == "default"  # type: ignore[attr-defined]
    assert buf.getvalue().startswith("synthgpt: POST /v1/chat/completions 200 api=chat model=gpt-4o ")
