"""Item 5 of the parity issue: a client hanging up mid-stream is journaled as cancelled with the frames
sent, and `MockGPT(on_finish=…)` is called exactly once per call on every path."""

from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import httpx2
import openai
import pytest

from synthgpt import CallRecord, ErrorSpec, MockGPT, Rule
from synthgpt import generators as g
from synthgpt import matchers as m
from synthgpt.model import Fault
from synthgpt.testing import InProcessTransport2

SLOW = {"interval_ms": 40, "chunk_chars": 4}
RULES_YAML = """
rules:
  - name: slow
    match: {last_user: slow}
    output: {text: "one two three four five six seven eight nine ten eleven twelve"}
    stream: {interval_ms: 150, chunk_chars: 4}
"""


class Finishes:
    """An on_finish hook that keeps every call it is told of."""

    def __init__(self) -> None:
        self.calls: list[tuple[CallRecord | None, Any, bool]] = []

    def __call__(self, record: CallRecord | None, error: Any, cancelled: bool) -> None:
        self.calls.append((record, error, cancelled))

    def outcomes(self) -> Counter[str]:
        return Counter("refused" if r is None else r.outcome for r, _, _ in self.calls)


def _rules() -> list[Rule]:
    return [
        Rule("slow", m.last_user(contains="slow"), " ".join(["word"] * 12), stream=SLOW),
        Rule("teapot", m.last_user(contains="teapot"), error={"status": 418, "message": "short and stout"}),
        Rule(
            "cut",
            m.last_user(contains="cut"),
            "a b c d e f g h",
            stream={"faults": [{"kind": "truncate", "after": 3}]},
        ),
        Rule(
            "drop",
            m.last_user(contains="drop"),
            "a b c d e f g h",
            stream={"faults": [{"kind": "disconnect", "after": 2}], "interval_ms": 1},
        ),
        Rule("broken", m.last_user(contains="broken"), g.integer(0, 1).map(lambda x: 1 / 0)),
        Rule("only-hi", m.last_user(contains="hi"), "hello"),
    ]


def _ask(text: str, **extra: Any) -> dict[str, Any]:
    return {"model": "gpt-4o", "messages": [{"role": "user", "content": text}], **extra}


def test_python_generate_finishes_every_call_once() -> None:
    hook = Finishes()
    mock = MockGPT(_rules(), on_finish=hook)
    mock.generate(_ask("hi"))
    mock.generate(_ask("teapot"))
    mock.generate(_ask("cut"))  # not streamed: the fault does not apply
    mock.generate(_ask("cut", stream=True))
    with pytest.raises(Exception, match="division by zero"):
        mock.generate(_ask("broken"))
    with pytest.raises(ValueError, match="model"):
        mock.generate({"messages": [{"role": "user", "content": "hi"}]})
    assert len(hook.calls) == 6
    (done, _, c1), (err, spec, c2), (body, _, _), (cut, fault, c3), *refused = hook.calls
    (none1, exc1, _), (none2, exc2, _) = refused
    assert body is not None and body.outcome == "done"
    assert (done.outcome, err.outcome, cut.outcome) == ("done", "error", "fault")  # type: ignore[union-attr]
    assert (c1, c2, c3) == (False, False, False)
    assert isinstance(spec, ErrorSpec) and spec.status == 418
    assert isinstance(fault, Fault) and fault.kind == "truncate"
    assert none1 is None and "division by zero" in str(exc1)
    assert none2 is None and isinstance(exc2, ValueError)
    mock.finish(done)  # a second finish of the same call is a no-op
    assert len(hook.calls) == 6


def test_the_hook_must_be_callable() -> None:
    with pytest.raises(TypeError, match="on_finish must be callable, got int"):
        MockGPT(on_finish=3)  # type: ignore[arg-type]


def test_in_process_every_path_finishes_exactly_once() -> None:
    hook = Finishes()
    mock = MockGPT(_rules(), on_finish=hook)
    http = httpx2.Client(transport=InProcessTransport2(mock))
    client = openai.OpenAI(api_key="k", base_url="http://synth.test/v1", max_retries=0, http_client=http)
    client.chat.completions.create(**_ask("hi"))  # done, JSON
    list(client.chat.completions.create(**_ask("hi"), stream=True))  # done, stream
    with pytest.raises(openai.APIStatusError):
        client.chat.completions.create(**_ask("teapot"))  # error answer
    with pytest.raises(openai.BadRequestError):
        client.chat.completions.create(model="", messages=[{"role": "user", "content": "hi"}])  # refused
    with pytest.raises(openai.InternalServerError):
        client.chat.completions.create(**_ask("broken"))  # draw error: refused with a 500
    list(client.chat.completions.create(**_ask("cut"), stream=True))  # fault: truncated
    with pytest.raises(openai.APIConnectionError):
        list(client.chat.completions.create(**_ask("drop"), stream=True))  # fault: dropped
    stream = client.chat.completions.create(**_ask("slow"), stream=True)
    got = [next(iter(stream)) for _ in range(3)]
    assert len(got) == 3
    stream.close()  # the client hangs up mid-stream
    deadline = time.monotonic() + 5
    while len(hook.calls) < 8 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert hook.outcomes() == Counter({"done": 2, "error": 1, "refused": 2, "fault": 2, "cancelled": 1})
    assert len(hook.calls) == 8
    cancelled = [r for r, _, c in hook.calls if c]
    assert len(cancelled) == 1 and cancelled[0] is not None
    assert 3 <= cancelled[0].frames_sent < 14  # type: ignore[operator]
    record = mock.records[-1]
    assert (record.rule, record.outcome, record.cancelled) == ("slow", "cancelled", True)
    by_rule = {r.rule: r for r in mock.records}
    assert by_rule["cut"].frames_sent == 3
    assert by_rule["drop"].frames_sent == 2


@pytest.mark.slow
def test_a_real_client_hanging_up_on_a_live_server_is_journaled(start_server: Any, tmp_path: Path) -> None:
    rules = tmp_path / "rules.yaml"
    rules.write_text(RULES_YAML)
    with start_server(str(rules)) as url, httpx.Client(base_url=url, timeout=10) as client:
        body = {"model": "gpt-4o", "messages": [{"role": "user", "content": "slow please"}], "stream": True}
        with client.stream("POST", "/v1/chat/completions", json=body) as r:
            lines = r.iter_lines()
            events = 0
            while events < 3:
                if next(lines).startswith("data: "):
                    events += 1
        # the connection is closed here, mid-stream (15+ frames were planned, 150 ms apart)
        deadline = time.monotonic() + 5
        while True:
            calls = client.get("/_synthgpt/calls").json()
            if (calls and calls[-1]["outcome"] != "streaming") or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        whole = client.post("/v1/chat/completions", json={**body, "stream": False}).json()
        calls = client.get("/_synthgpt/calls").json()
    assert [c["outcome"] for c in calls] == ["cancelled", "done"]
    assert 3 <= calls[0]["frames_sent"] <= 5
    assert calls[1]["frames_sent"] is None
    assert json.dumps(whole)  # the server still answers after the hang-up


def test_the_sqlite_journal_records_the_hang_up(tmp_path: Path) -> None:
    from synthgpt import SQLiteJournal

    mock = MockGPT(_rules())
    mock.journal = SQLiteJournal(tmp_path / "calls.sqlite")
    http = httpx2.Client(transport=InProcessTransport2(mock))
    client = openai.OpenAI(api_key="k", base_url="http://synth.test/v1", max_retries=0, http_client=http)
    stream = client.chat.completions.create(**_ask("slow"), stream=True)
    next(iter(stream))
    stream.close()
    client.chat.completions.create(**_ask("hi"))
    again = SQLiteJournal(tmp_path / "calls.sqlite")  # what another worker reads from the file
    try:
        deadline = time.monotonic() + 5
        while again[0].outcome == "streaming" and time.monotonic() < deadline:
            time.sleep(0.01)
        assert [(r.rule, r.outcome) for r in again] == [("slow", "cancelled"), ("only-hi", "done")]
        assert again[0].frames_sent is not None and again[0].frames_sent >= 1
    finally:
        again.close()
        mock.journal.close()  # type: ignore[attr-defined]
        http.close()


def test_answers_replayed_from_the_memo_are_finished_too() -> None:
    hook = Finishes()
    mock = MockGPT(_rules(), on_finish=hook)
    http = httpx2.Client(transport=InProcessTransport2(mock))
    client = openai.OpenAI(api_key="k", base_url="http://synth.test/v1", max_retries=0, http_client=http)
    for _ in range(4):
        client.chat.completions.create(**_ask("hi"))
        list(client.chat.completions.create(**_ask("hi"), stream=True))
        list(client.chat.completions.create(**_ask("cut"), stream=True))
    http.close()
    assert hook.outcomes() == Counter({"done": 8, "fault": 4})
    assert [r.frames_sent for r in mock.records if r.rule == "cut"] == [3, 3, 3, 3]
    assert len({id(r) for r, _, _ in hook.calls}) == 12  # each call its own record, finished once
