"""The benchmark runs end to end on a tiny load and prints every figure (no timing is asserted).

The bench script itself is the thing under test: it starts servers, drives them with the built-in
Python load generator (so the test does not depend on wrk being installed) and must print each case,
each figure and a verdict for each target.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bench.cases import count_events, split_events  # noqa: E402
from bench.loadgen import Req, Target, parse_wrk_output, wrk_lua  # noqa: E402
from bench.paced import summarise  # noqa: E402
from bench.pyload import RequestSource, ResponseReader, percentile  # noqa: E402

HTTP_CASES = ("chat", "chat_stream", "responses_stream", "messages_stream", "faker_template", "schema")


@pytest.mark.slow
def test_quick_bench_prints_every_figure() -> None:
    # Generous time limit: under `pytest -n 2` the bench shares its two cores with the other worker, and
    # each of its steps (servers starting, sizing the streams, the loads) can take several times longer.
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "run.py"), "--quick", "--loadgen", "python"],
        capture_output=True, text=True, timeout=900, cwd=ROOT, check=False,
    )  # fmt: skip
    out = proc.stdout
    assert proc.returncode == 0, proc.stderr[-3000:] + out[-3000:]
    assert "load generator: built-in python asyncio generator" in out
    assert "pinning: " in out
    for name in HTTP_CASES:
        section = _section(out, name)
        # every HTTP case either ran (both servers' figures and a same-round ratio) or says why not
        if "n/a:" in section.splitlines()[1]:
            continue
        assert re.search(
            r"synthgpt\s+[\d,]+ \[[\d,]+ \.\. [\d,]+\]\s+[\d.]+\s+[\d.]+\s+[\d,]+\s+\d+", section
        ), section
        assert re.search(
            r"ceiling\s+[\d,]+ \[[\d,]+ \.\. [\d,]+\]\s+[\d.]+\s+[\d.]+\s+[\d,]+\s+\d+", section
        ), section
        # both the repeated-request figures (memo hits) and the distinct-request ones (every answer drawn)
        assert "-- the same request repeated" in section and "-- distinct requests" in section, section
        assert len(re.findall(r"synthgpt\s+[\d,]+ \[", section)) == 2, section
        assert len(re.findall(r"ratio\s+[\d.]+ \[[\d.]+ \.\. [\d.]+\]x same-round", section)) == 2, section
        # the chat case also against the ceiling with synthgpt's batched writes (a reference row)
        batched = 2 if name == "chat" else 0
        assert len(re.findall(r"ceiling\+\s+[\d,]+ \[", section)) == batched, section
        reference = r"ratio\+\s+[\d.]+ \[[\d.]+ \.\. [\d.]+\]x same-round vs ceiling\+"
        assert len(re.findall(reference, section)) == batched, section
    for name in ("chat_stream", "responses_stream", "messages_stream"):
        section = _section(out, name)
        assert "50 SSE events" in section or "n/a: route missing" in section, section
    paced = _section(out, "paced")
    assert "-- every stream the same request" in paced and "-- every stream a different request" in paced
    for figure in (
        "within 5% of planned:",
        "lost",
        "duration error: median",
        "gap error: p50",
        "gap error once every stream has started",
        "first frame after request",
    ):
        assert paced.count(figure) == 2, (figure, paced)
    inproc = _section(out, "inproc")
    assert re.search(r"default text rule\s+[\d,]+ calls/s", inproc), inproc
    assert re.search(r"nested JSON-schema rule\s+[\d,]+ calls/s", inproc), inproc
    memory = _section(out, "memory")
    assert re.search(r"RSS idle [\d.]+ MB; after [\d,]+ requests [\d.]+ MB \(\d+ errors\)", memory), memory
    workers = _section(out, "workers")
    assert "measured how: " in workers and re.search(r"projected ratio [\d.]+x", workers), workers
    targets = _section(out, "targets")
    paced_rows = [f"paced{m} {what}" for m in ("", " distinct") for what in ("duration", "gaps", "lost")]
    rows = (*HTTP_CASES, *(f"{name} distinct" for name in HTTP_CASES), *paced_rows, "memory",
            "inproc default rule", "workers 2 vs 1 distinct")  # fmt: skip
    for row in rows:
        assert re.search(rf"^\s+{row}\s.*target .*(PASS|FAIL|n/a)$", targets, re.M), (row, targets)
    assert re.search(r"^\s+chat distinct\s.*target >= 0.5x ceiling", targets, re.M), targets
    assert re.search(r"^\s+schema distinct\s.*target >= 0.25x ceiling", targets, re.M), targets


def _section(out: str, name: str) -> str:
    m = re.search(rf"^== {re.escape(name)}[:\s].*?(?=^== |\Z)", out, re.M | re.S)
    assert m is not None, f"no section {name!r} in:\n{out}"
    return m.group(0)


def test_wrk_summary_line_is_parsed() -> None:
    text = "Running 1s test\nBENCH_WRK 1200 1000500 812 4090 0 1 0 2 0\n"
    r = parse_wrk_output(text)
    assert (r.requests, r.duration_s, r.p50_ms, r.p99_ms, r.errors) == (1200, 1.0005, 0.812, 4.09, 3)
    assert r.rps == pytest.approx(1199.4, abs=0.1)


def test_wrk_output_without_summary_raises() -> None:
    with pytest.raises(RuntimeError, match="no summary line"):
        parse_wrk_output("unable to connect to 127.0.0.1:1 Connection refused")


def test_wrk_lua_static_and_rotating_scripts() -> None:
    req = Req("/v1/chat/completions", b'{"a":"]=]"}', (("Content-Type", "application/json"),))
    static = wrk_lua(Target("127.0.0.1", 1, (req,)))
    assert 'wrk.body = [==[{"a":"]=]"}]==]' in static
    assert 'wrk.headers["Content-Type"] = "application/json"' in static
    assert "request = function" not in static
    rotating = wrk_lua(Target("127.0.0.1", 1, (req, req), unique=True))
    assert "request = function" in rotating
    assert "local unique = true" in rotating
    assert rotating.count('path = "/v1/chat/completions"') == 2


def test_response_reader_content_length_and_chunked() -> None:
    bodies: list[bytes] = []
    r = ResponseReader(bodies.append)
    assert not r.feed(b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nhel")
    assert r.feed(b"lo")
    assert (r.status, bodies) == (200, [b"hello"])
    bodies.clear()
    r.reset()
    assert not r.feed(b"HTTP/1.1 201 Created\r\ntransfer-encoding: chunked\r\n\r\n5\r\ndata:\r\n")
    assert not r.feed(b"3\r\n x\n\r")
    assert r.feed(b"\n0\r\n\r\n")
    assert (r.status, bodies) == (201, [b"data:", b" x\n"])


def test_request_source_rotates_and_numbers_bodies() -> None:
    spec = {"host": "h", "port": 1, "unique": True, "requests": [
        {"path": "/a", "body": '{"n":"{N}"}', "headers": [["X", "1"]]},
        {"path": "/b", "body": "{}", "headers": []},
    ]}  # fmt: skip
    src = RequestSource(spec)
    first, second = src.next(), src.next()
    assert first == b"POST /b HTTP/1.1\r\nHost: h:1\r\nContent-Length: 2\r\n\r\n{}"
    assert second == b'POST /a HTTP/1.1\r\nHost: h:1\r\nContent-Length: 9\r\nX: 1\r\n\r\n{"n":"2"}'


def test_split_events_and_percentile() -> None:
    body = b'event: a\ndata: {"x":1}\n\ndata: [DONE]\n\n'
    assert split_events(body) == [b'event: a\ndata: {"x":1}\n\n', b"data: [DONE]\n\n"]
    assert count_events(b"data: 1\r\n\r\ndata: 2\r\n\r\n") == 2
    assert percentile([1.0, 2.0, 3.0, 4.0], 50) == 2.0
    assert percentile([1.0, 2.0, 3.0, 4.0], 99) == 4.0
    assert percentile([], 99) == 0.0


def test_paced_summary_counts_lost_streams_and_gap_errors() -> None:
    ok = {"status": 200, "complete": True, "sent_at": 0.0, "frames": [0.010, 0.030, 0.050]}
    late = {"status": 200, "complete": True, "sent_at": 0.0, "frames": [0.010, 0.040, 0.060]}
    short = {"status": 200, "complete": False, "sent_at": 0.0, "frames": [0.010]}
    s = summarise([ok, late, short], frames=3, interval_ms=20.0)
    assert (s["streams"], s["completed"], s["lost"], s["within_5pct"]) == (3, 2, 1, 1)
    assert s["planned_ms"] == 40.0
    assert s["span_err_pct_max"] == pytest.approx(25.0)
    assert s["gap_err_ms_max"] == pytest.approx(10.0)
    assert json.dumps(s)  # what bench.paced prints


def test_appbench_runs_against_the_served_app(capsys: pytest.CaptureFixture[str]) -> None:
    # it failed with "HTTP 400: Invalid host header": its requests named a host the served app refuses
    from bench.appbench import main

    main(["--cases", "chat", "-n", "3", "--repeats", "1"])
    out = capsys.readouterr().out
    assert re.search(r"^chat\s+[\d.]+\s+[\d.]+\s+[\d.]+\s+1/1", out, re.M), out


@pytest.mark.parametrize(
    ("stage", "journaled"),
    [("accept", 0), ("resolve", 23), ("pipeline", 23), ("app", 23), ("ceiling", 1)],  # its answer's capture
)
def test_instruction_stages_go_as_far_as_they_say(stage: str, journaled: int) -> None:
    from bench.instructions import run_stage

    assert run_stage("chat", stage, 3) == journaled  # 20 warm-up requests, then 3


def test_instructions_without_valgrind_say_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil

    from bench import instructions

    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(SystemExit, match=r"needs valgrind: apt-get install -y valgrind"):
        instructions.main(["--cases", "chat"])
    monkeypatch.setattr(shutil, "which", lambda name: "/usr/bin/" + name)
    with pytest.raises(SystemExit, match=r"unknown nope, later \(cases: chat, "):
        instructions.main(["--cases", "chat,nope", "--stages", "app,later"])


def test_the_ceiling_with_work_spends_it_and_answers_the_same_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    import asyncio
    import time

    from bench import ceiling_app
    from bench.appbench import AsgiCall
    from bench.ceiling_app import create_app

    payloads = {"chat": {"content_type": "application/json", "body": '{"ok":true}'}}

    def call(work_us: float) -> tuple[int, bytes, float]:
        started = time.thread_time()
        status, body, _ = asyncio.run(
            AsgiCall("/v1/chat/completions", b"{}", (), query="case=chat").run(create_app(payloads, work_us))
        )
        return status, body, time.thread_time() - started

    assert call(0)[:2] == call(5000)[:2] == (200, b'{"ok":true}')
    assert call(5000)[2] >= 0.005  # at least the work asked for: it runs until that much CPU has passed
    # and the work is the request's, asked once per request, in seconds (none without --work-us), whatever
    # the app's own start costs on a slow machine
    asked: list[float] = []
    monkeypatch.setattr(ceiling_app, "_work", asked.append)
    call(0)
    call(5000)
    call(250)
    assert asked == [0.005, 0.00025]


ANNOTATED = """\
--------------------------------------------------------------------------------
Ir
--------------------------------------------------------------------------------
2,238,561,499 (100.0%)  PROGRAM TOTALS

--------------------------------------------------------------------------------
Ir                       file:function
--------------------------------------------------------------------------------
22,348,428,733 (998.3%)  ???:0x0000000004936718'2 [???]
22,348,315,555 (998.3%)  /py/Python/ceval.c:_PyEval_EvalFrameDefault'2 [/py/lib/libpython3.11.so.1.0]
 2,238,000,000 (99.9%)  ???:(below main) [/py/bin/python3.11]
   146,685,000 ( 6.55%)  build/synthgpt/__native_x.c:CPyPy_drawing___draw_output [/s/native_x.so]
   145,971,000 ( 6.52%)  build/synthgpt/__native_x.c:CPyDef_drawing___draw_output [/s/native_x.so]
       500,000 ( 0.02%)  /work/build/synthgpt/__native_x.c:CPyDef_drawing___draw_output
    16,780,000 ( 0.75%)  /py/_blake2/blake2b-ref.c:PyBlake2_blake2b_compress.isra.0 [/py/_blake2.so]
"""


def test_function_costs_name_compiled_and_c_functions_once() -> None:
    """callgrind_annotate's table as function -> instructions: mypyc's own names (its wrappers, the
    nameless interpreter frames and recursive cycles left out), a name listed twice counted once, the
    total kept."""
    from bench.instructions import TOTAL, function_costs

    assert function_costs(ANNOTATED) == {
        TOTAL: 2_238_561_499,
        "drawing___draw_output": 145_971_000,
        "PyBlake2_blake2b_compress.isra.0": 16_780_000,
    }


def test_functions_are_listed_per_request_under_each_stage(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--functions N`: each stage's total, then its N costliest functions per request (the difference
    of the long and the short run over their 200 requests), the run's roots left out."""
    import shutil

    from bench import instructions

    monkeypatch.setattr(shutil, "which", lambda name: "/usr/bin/" + name)
    monkeypatch.setattr(instructions, "_count", lambda root, case, stage, n: 1_000 * n)

    def functions(root: object, case: str, stage: str, n: int) -> dict[str, int]:
        return {instructions.TOTAL: 1_000 * n, "main": 990 * n, "draw": 400 * n, "encode": 100 * n,
                "startup": 7}  # fmt: skip

    monkeypatch.setattr(instructions, "_functions", functions)
    instructions.main(["--cases", "chat", "--stages", "app", "--functions", "2"])
    lines = capsys.readouterr().out.splitlines()
    assert lines[-3:] == [
        f"{'chat':<18} {'app':<9} {1000:>12,} {'':>10}",
        f"    {400:>12,}  draw",
        f"    {100:>12,}  encode",
    ]
