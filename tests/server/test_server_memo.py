"""The server's memo of encoded answers (`synthgpt.server.memo`): the same bytes as drawing, every call
journaled, and no replay where an answer may depend on call order or on a moving clock."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from synthgpt import FixedClock, MockGPT, Rule, RuleSet, StepClock
from synthgpt import generators as g
from synthgpt import matchers as m
from synthgpt.engine.memo import generation
from synthgpt.rules.script import sequence
from synthgpt.server import create_app
from synthgpt.server.memo import MemoEntry, ResponseMemo

HI = {"model": "gpt-4o", "messages": [{"role": "user", "content": "Tell me about tides"}]}
REQUESTS: list[tuple[str, dict[str, Any]]] = [
    ("/v1/chat/completions", HI),
    ("/v1/chat/completions", {**HI, "stream": True}),
    ("/v1/chat/completions", {**HI, "response_format": {"type": "json_schema", "json_schema": {
        "name": "city", "schema": {"type": "object", "properties": {"name": {"type": "string"}},
                                   "required": ["name"]}}}}),
    ("/v1/responses", {"model": "gpt-4o", "input": "Tell me about tides", "stream": True}),
    ("/v1/responses", {"model": "gpt-4o", "input": "Tell me about tides"}),
    ("/v1/messages", {"model": "claude-sonnet-4-5", "max_tokens": 64, "stream": True,
                      "messages": [{"role": "user", "content": "Tell me about tides"}]}),
    ("/v1/embeddings", {"model": "text-embedding-3-small", "input": "tides"}),
]  # fmt: skip


def client(mock: MockGPT, **kwargs: Any) -> tuple[httpx.AsyncClient, Any]:
    app = create_app(mock, **kwargs)
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://synth"), app


async def post_each(c: httpx.AsyncClient, times: int) -> list[tuple[int, dict[str, str], bytes]]:
    out = []
    for _ in range(times):
        for path, body in REQUESTS:
            r = await c.post(path, content=json.dumps(body))
            out.append((r.status_code, dict(r.headers), r.content))
    return out


async def test_replayed_answers_are_byte_identical_to_drawn_ones() -> None:
    memo_client, app = client(MockGPT(seed=3))
    plain_client, _ = client(MockGPT(seed=3), memo_entries=0)
    async with memo_client as a, plain_client as b:
        replayed = await post_each(a, 4)
        drawn = await post_each(b, 4)
    assert [s for s, _, _ in replayed] == [200] * len(replayed)
    assert replayed == drawn
    memo: ResponseMemo = app.state.memo
    # kept the second time a request comes, replayed from the third on
    assert (memo.misses, memo.hits, len(memo)) == (2 * len(REQUESTS), 2 * len(REQUESTS), len(REQUESTS))


async def test_every_replayed_call_is_journaled_and_counted() -> None:
    mock = MockGPT(seed=1)
    c, app = client(mock)
    async with c:
        for _ in range(4):
            r = await c.post("/v1/chat/completions", json=HI)
            assert r.status_code == 200
    assert app.state.memo.hits == 2
    records = mock.records
    assert [r.index for r in records] == [0, 1, 2, 3]
    first = records[0]
    assert all((r.request, r.output, r.rule, r.seed, r.at, r.captures)
               == (first.request, first.output, first.rule, first.seed, first.at, first.captures)
               for r in records)  # fmt: skip
    rule = mock.rules[records[0].rule]
    assert rule.call_count == 4
    assert [r.index for r in rule.calls] == [0, 1, 2, 3]


async def test_a_replayed_responses_answer_is_kept_for_previous_response_id() -> None:
    c, app = client(MockGPT(seed=1))
    body = {"model": "gpt-4o", "input": "Tell me about tides"}
    async with c:
        first = (await c.post("/v1/responses", json=body)).json()
        assert (await c.post("/v1/responses", json=body)).json() == first  # now kept
        (store,) = _stores(app)
        store.clear()
        again = await c.post("/v1/responses", json=body)  # replayed: must put the answer back in the store
        assert app.state.memo.hits == 1 and again.json() == first
        follow = await c.post("/v1/responses", json={"model": "gpt-4o", "previous_response_id": first["id"],
                                                     "input": "and the moon?"})  # fmt: skip
    assert follow.status_code == 200


def _stores(app: Any) -> list[Any]:
    found = []
    for route in app.routes:
        store = getattr(getattr(route.endpoint, "codec", None), "store", None)  # an API route's codec
        if store is not None and store not in found:
            found.append(store)
    return found


@pytest.mark.parametrize(
    "rules",
    [
        pytest.param([Rule("twice", m.always(), "first answer", times=2), Rule("then", m.always(), "later")],
                     id="times"),
        pytest.param([Rule("seq", m.always(), sequence("one", "two", "three"))], id="sequence"),
        pytest.param([Rule("tpl", m.always(), g.template("call number {{ call_index }}"))], id="template"),
    ],
)  # fmt: skip
async def test_call_order_dependent_rules_are_never_replayed(rules: list[Rule]) -> None:
    mock = MockGPT(rules)
    c, app = client(mock)
    async with c:
        texts = [(await c.post("/v1/chat/completions", json=HI)).json()["choices"][0]["message"]["content"]
                 for _ in range(3)]  # fmt: skip
    expected = {
        "twice": ["first answer", "first answer", "later"],
        "seq": ["one", "two", "three"],
        "tpl": ["call number 0", "call number 1", "call number 2"],
    }[rules[0].name]
    assert texts == expected
    assert (app.state.memo.hits, len(app.state.memo)) == (0, 0)
    assert len(mock.records) == 3


async def test_a_rule_after_a_times_rule_is_not_replayed() -> None:
    rules = [Rule("once", m.last_user(contains="other"), "other", times=1), Rule("main", m.always(), "main")]
    c, app = client(MockGPT(rules))
    async with c:
        for _ in range(2):
            assert (await c.post("/v1/chat/completions", json=HI)).status_code == 200
    assert (app.state.memo.hits, len(app.state.memo)) == (0, 0)


async def test_a_moving_clock_bypasses_the_memo() -> None:
    c, app = client(MockGPT(clock=StepClock(1_767_225_600, step=5)))
    async with c:
        created = [(await c.post("/v1/chat/completions", json=HI)).json()["created"] for _ in range(3)]
    assert created == [1_767_225_600, 1_767_225_605, 1_767_225_610]
    assert (app.state.memo.hits, app.state.memo.misses, len(app.state.memo)) == (0, 0, 0)


async def test_new_rules_seed_or_clock_reading_forget_every_answer() -> None:
    mock = MockGPT([Rule("a", m.always(), "from a")])
    c, app = client(mock)

    async def text() -> str:
        r = await c.post("/v1/chat/completions", json=HI)
        content: str = r.json()["choices"][0]["message"]["content"]
        return content

    async with c:
        assert [await text(), await text(), await text()] == ["from a"] * 3
        mock.rules = RuleSet([Rule("b", m.always(), "from b")])
        assert await text() == "from b"
        mock.clock = FixedClock(1_800_000_000)
        r = await c.post("/v1/chat/completions", json=HI)
        assert r.json()["created"] == 1_800_000_000
    assert app.state.memo.hits == 1


async def test_headers_are_part_of_the_key() -> None:
    rules = [Rule("beta", m.header("x-variant", "b"), "variant b"), Rule("rest", m.always(), "plain")]
    c, app = client(MockGPT(rules))
    async with c:
        plain = await c.post("/v1/chat/completions", json=HI)
        beta = await c.post("/v1/chat/completions", json=HI, headers={"x-variant": "b"})
    assert plain.json()["choices"][0]["message"]["content"] == "plain"
    assert beta.json()["choices"][0]["message"]["content"] == "variant b"
    assert app.state.memo.hits == 0


async def test_the_memo_is_bounded() -> None:
    c, app = client(MockGPT(), memo_entries=2)
    async with c:
        for i in range(5):
            body = {**HI, "messages": [{"role": "user", "content": f"question {i}"}]}
            for _ in range(2):
                assert (await c.post("/v1/chat/completions", json=body)).status_code == 200
    assert len(app.state.memo) == 2


async def test_requests_seen_once_are_not_kept() -> None:
    c, app = client(MockGPT())
    async with c:
        for i in range(20):
            body = {**HI, "messages": [{"role": "user", "content": f"question {i}"}]}
            assert (await c.post("/v1/chat/completions", json=body)).status_code == 200
    assert (len(app.state.memo), app.state.memo.nbytes, app.state.memo.hits) == (0, 0, 0)


def test_byte_bound_keeps_the_newest_answers() -> None:
    memo = ResponseMemo(max_entries=10, max_bytes=3100)
    mock = MockGPT()
    gen = generation(mock)
    record = mock.resolve({"model": "synth-1", "messages": [{"role": "user", "content": "hi"}]}).record
    assert memo.sighting(mock, ("/p", b"", (), b"-")) == (None, None)  # a miss
    for i in range(5):
        entry = MemoEntry(200, [], b"x" * 1000, mock.rules[record.rule], record)
        assert memo.sighting(mock, ("/p", b"", (), str(i).encode())) == (None, None)  # seen
        assert memo.sighting(mock, ("/p", b"", (), str(i).encode())) == (None, gen)  # seen again: kept
        memo.put(gen, ("/p", b"", (), str(i).encode()), entry)
    assert len(memo) == 2 and memo.nbytes <= 3100
    assert memo.sighting(mock, ("/p", b"", (), b"4"))[0] is not None
    assert memo.sighting(mock, ("/p", b"", (), b"0"))[0] is None
    mock.seed += 1  # another generation: nothing kept is answered
    assert memo.sighting(mock, ("/p", b"", (), b"4"))[0] is None and len(memo) == 0


async def test_older_journal_records_read_back_whole() -> None:
    """The journal packs all but its newest records; reading them gives back what was recorded."""
    mock = MockGPT(seed=2)
    c, _ = client(mock)
    bodies = [{**HI, "messages": [{"role": "user", "content": f"question {i % 25}"}]} for i in range(60)]
    async with c:
        for body in bodies:
            assert (await c.post("/v1/chat/completions", json=body)).status_code == 200
    records = mock.records
    assert [r.index for r in records] == list(range(60))
    twin = MockGPT(seed=2)
    for record, body in zip(records, bodies, strict=True):
        expected = twin.generate(record.request)
        assert record.request.last_user == body["messages"][0]["content"]  # type: ignore[index]
        assert (record.output, record.rule, record.at) == (expected, "default", twin.clock.now())
    assert mock.journal[5] == records[5] and mock.journal[-1] == records[-1]


async def test_replays_wait_their_turn_while_paced_streams_run(monkeypatch: pytest.MonkeyPatch) -> None:
    # a burst of replays is cheap each but not all together: like drawn answers, they start only within
    # the pacer's slice, so running streams' due frames go out first
    from synthgpt.server import pacing

    admitted: list[int] = []

    async def admit(self: pacing.Pacer) -> None:
        admitted.append(self.running)

    monkeypatch.setattr(pacing.Pacer, "admit", admit)
    c, _ = client(MockGPT(seed=3))
    async with c:
        for _ in range(3):
            await c.post("/v1/chat/completions", content=json.dumps(HI))
        assert admitted == []  # no paced stream running: no admission step at all
        pacing.pacer().running = 1  # as if a paced stream were in progress on this loop
        try:
            r = await c.post("/v1/chat/completions", content=json.dumps(HI))
        finally:
            pacing.pacer().running = 0
    assert r.status_code == 200
    assert admitted == [1]


async def test_kept_answers_hold_their_size_not_the_encoders_buffer() -> None:
    """orjson's bytes keep the buffer they were written in (a 3 KB answer held 32 KB): the memo keeps a
    copy sized to fit (`jsonutil.fitted`), so its byte bound is what it holds."""
    import gc
    import tracemalloc

    mock = MockGPT([Rule("long", m.always(), "tide pools " * 300)], seed=1, journal_size=0)
    c, app = client(mock)
    bodies = [{**HI, "messages": [{"role": "user", "content": f"question {i}"}]} for i in range(40)]
    async with c:
        for body in bodies:  # the first sighting keeps nothing
            assert (await c.post("/v1/chat/completions", json=body)).status_code == 200
        gc.collect()
        tracemalloc.start()
        try:
            base = tracemalloc.get_traced_memory()[0]
            for body in bodies:  # the second keeps each answer
                assert (await c.post("/v1/chat/completions", json=body)).status_code == 200
            gc.collect()
            held = tracemalloc.get_traced_memory()[0] - base
        finally:
            tracemalloc.stop()
    memo: ResponseMemo = app.state.memo
    assert len(memo) == 40 and memo.nbytes > 40 * 3300
    assert held < 3 * memo.nbytes, (held, memo.nbytes)  # the bodies, their records and keys; not 32 KB each
