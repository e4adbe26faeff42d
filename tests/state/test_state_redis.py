"""`--state redis://…`: replicas share call counts, the Responses store and the journal through a real
redis-server, and answer 503 (never a wrong step) while it is away."""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from synthgpt import cli
from synthgpt.errors import ConfigError
from synthgpt.server.run import ServeConfig, create_app_from_config
from synthgpt.state import RedisState, open_state
from synthgpt.testing import InProcessTransport2
from tests.state._redis import RedisServer, Replicas, free_port

RULES = Path(__file__).resolve().parents[2] / "bench" / "rules" / "scale_out.yaml"


def chat(text: str) -> dict[str, object]:
    return {"model": "gpt-4o", "messages": [{"role": "user", "content": text}]}


@pytest.fixture
def rules() -> Path:
    return RULES


@pytest.fixture
def replicas(rules: Path, redis_server: RedisServer) -> Iterator[Replicas]:
    r = Replicas(rules, redis_server.url, 3)
    try:
        yield r
    finally:
        r.close()


def text_of(response: httpx2.Response) -> str:
    assert response.status_code == 200, response.text
    return str(response.json()["choices"][0]["message"]["content"])


def test_a_sequence_steps_across_replicas_in_call_order(replicas: Replicas) -> None:
    a, b, c = replicas.clients
    got = [text_of(client.post("/v1/chat/completions", json=chat("flaky"))) for client in (a, b, c, a)]
    assert got == ["step one", "step two", "step three", "step three"]


def test_times_is_counted_once_for_every_replica(replicas: Replicas) -> None:
    a, b, c = replicas.clients
    got = [text_of(client.post("/v1/chat/completions", json=chat("once"))) for client in (a, b, c)]
    assert got == ["limited", "limited", "stateless"]


def test_concurrent_claims_never_over_issue(redis_server: RedisServer, rules: Path) -> None:
    """50 threads, 3 replicas' own Redis clients: a `times: 2` rule answers exactly twice, a 3-step
    sequence gives each of its first two steps exactly once."""
    replicas = Replicas(rules, redis_server.url, 3)
    try:
        results: list[str] = []
        lock = threading.Lock()

        def worker(i: int) -> None:
            client = replicas.clients[i % 3]
            for text in ("once", "flaky"):
                got = text_of(client.post("/v1/chat/completions", json=chat(text)))
                with lock:
                    results.append(got)

        threads = [threading.Thread(target=worker, args=(i,)) for i in range(50)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert Counter(results) == {"limited": 2, "stateless": 48, "step one": 1, "step two": 1,
                                    "step three": 48}  # fmt: skip
    finally:
        replicas.close()


def test_a_response_stored_on_one_replica_continues_on_another(replicas: Replicas) -> None:
    a, b, c = replicas.clients
    first = a.post("/v1/responses", json={"model": "gpt-4o", "input": "hello"})
    assert first.status_code == 200, first.text
    second = b.post("/v1/responses", json={"model": "gpt-4o", "input": "and then?",
                                           "previous_response_id": first.json()["id"]})  # fmt: skip
    assert second.status_code == 200, second.text
    third = c.post("/v1/responses", json={"model": "gpt-4o", "input": "last",
                                          "previous_response_id": second.json()["id"]})  # fmt: skip
    assert third.status_code == 200, third.text
    calls = c.get("/_synthgpt/calls").json()
    assert [call["request"]["messages"] for call in calls] == [1, 3, 5]  # the whole conversation each time


def test_the_response_store_expires_entries(redis_server: RedisServer) -> None:
    state = open_state(redis_server.url, ttl=7)
    assert isinstance(state, RedisState)
    try:
        store = state.responses()
        store.put("resp_x", ())
        assert state.link.client.ttl("synthgpt:response:resp_x") == 7
        assert store.get("resp_x") == ()
        assert store.get("resp_missing") is None
    finally:
        state.close()


def test_the_journal_counts_every_replica_and_delete_resets_all(replicas: Replicas) -> None:
    a, b, c = replicas.clients
    for i, client in enumerate((a, b, c, a, b, c)):
        text_of(client.post("/v1/chat/completions", json=chat("flaky" if i < 2 else f"hi {i}")))
    for client in (a, b, c):
        listing = client.get("/_synthgpt/calls")
        assert listing.headers["x-total-count"] == "6"
        assert [(r["index"], r["rule"]) for r in listing.json()] == [
            (0, "flaky"), (1, "flaky"), (2, "default"), (3, "default"), (4, "default"), (5, "default")]
    export = b.get("/_synthgpt/calls", params={"format": "jsonl", "rule": "flaky"})
    assert [json.loads(line)["output"]["choices"][0]["parts"][0]["text"]
            for line in export.text.splitlines()] == ["step one", "step two"]  # fmt: skip
    assert c.delete("/_synthgpt/calls").json() == {"deleted": 6}
    assert a.get("/_synthgpt/calls").headers["x-total-count"] == "0"
    # the counts restarted for every replica: the sequence begins again wherever the call lands
    assert text_of(b.post("/v1/chat/completions", json=chat("flaky"))) == "step one"
    assert text_of(a.post("/v1/chat/completions", json=chat("once"))) == "limited"


def test_redis_lost_mid_run_503_for_stateful_then_recovers(
    replicas: Replicas, redis_server: RedisServer
) -> None:
    a, b, _ = replicas.clients
    before = a.post("/v1/chat/completions", json=chat("hello")).content
    stored = a.post("/v1/responses", json={"model": "gpt-4o", "input": "hello"}).json()["id"]
    assert text_of(b.post("/v1/chat/completions", json=chat("flaky"))) == "step one"
    redis_server.kill()
    # stateless answers: the same bytes as before
    assert a.post("/v1/chat/completions", json=chat("hello")).content == before
    assert b.post("/v1/chat/completions", json=chat("hello")).content == before
    # stateful ones: 503 in the API's own error shape, naming the cause
    for client, body in ((a, chat("flaky")), (b, chat("once"))):
        r = client.post("/v1/chat/completions", json=body)
        assert r.status_code == 503, r.text
        error = r.json()["error"]
        assert (error["type"], error["code"], error["param"]) == ("server_error", "state_unavailable", None)
        assert error["message"].startswith(
            f"The shared state store is unavailable (Redis at redis://127.0.0.1:{redis_server.port}/0: ")
    r = b.post("/v1/responses", json={"model": "gpt-4o", "input": "more", "previous_response_id": stored})
    assert (r.status_code, r.json()["error"]["code"]) == (503, "state_unavailable")
    anthropic = a.post("/v1/messages", json={"model": "claude-x", "max_tokens": 50,
                                             "messages": [{"role": "user", "content": "flaky"}]})  # fmt: skip
    assert anthropic.status_code == 503
    assert anthropic.json()["type"] == "error"
    ready = a.get("/readyz")
    assert ready.status_code == 503
    assert ready.json()["status"] == "unavailable"
    assert a.get("/healthz").status_code == 200
    redis_server.start()  # back, with its data (append-only file)
    assert a.get("/readyz").json() == {"status": "ready", "rules": 4, "state": "redis"}
    assert text_of(a.post("/v1/chat/completions", json=chat("flaky"))) == "step two"
    r = b.post("/v1/responses", json={"model": "gpt-4o", "input": "more", "previous_response_id": stored})
    assert r.status_code == 200, r.text


def test_readyz_in_memory(rules: Path) -> None:
    app = create_app_from_config(ServeConfig(rule_files=(str(rules),)))
    with httpx2.Client(transport=InProcessTransport2(app), base_url="http://localhost") as client:
        r = client.get("/readyz")
    assert (r.status_code, r.json()) == (200, {"status": "ready", "rules": 4, "state": "memory"})


def test_redis_down_at_start_up_is_a_clear_exit(capsys: pytest.CaptureFixture[str]) -> None:
    port = free_port()  # nothing listens there
    assert cli.main(["serve", "--port", "0", "--state", f"redis://127.0.0.1:{port}/0"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"synthgpt serve: error: cannot reach the state store: Redis at "
                          f"redis://127.0.0.1:{port}/0: ")  # fmt: skip
    assert "Connection refused" in err


def test_synthgpt_state_env_var_is_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SYNTHGPT_STATE", "redis://10.0.0.1:6379/2")
    assert cli.build_parser().parse_args(["serve"]).state == "redis://10.0.0.1:6379/2"
    assert cli.build_parser().parse_args(["serve", "--state", "memory"]).state == "memory"


def test_a_state_url_that_is_not_redis_is_refused() -> None:
    with pytest.raises(ConfigError, match="must be 'memory' or redis://HOST:PORT/DB, got 'localhost'"):
        open_state("localhost")
    with pytest.raises(ConfigError, match=r"--state must be redis://HOST:PORT/DB .* got 'http://x'"):
        open_state("http://x")


def test_the_shared_journal_shows_how_each_call_ended(replicas: Replicas) -> None:
    a, b, _ = replicas.clients
    streamed = a.post("/v1/chat/completions", json={**chat("hello"), "stream": True})
    assert streamed.status_code == 200
    frames = streamed.text.count("data: ")
    # a replica's journal writes leave in the background; a listing waits for its own replica's only, so
    # replica a's is asked first (on a loaded machine a's write could otherwise land after b's)
    assert len(a.get("/_synthgpt/calls").json()) == 1
    text_of(b.post("/v1/chat/completions", json=chat("hello")))
    calls = b.get("/_synthgpt/calls").json()
    assert [(c["outcome"], c["frames_sent"]) for c in calls] == [("done", frames), ("done", None)]


def test_round_trips_per_call(redis_server: RedisServer, tmp_path: Path) -> None:
    """What each store costs a call in Redis round trips (bench/scale_out.py reports the µs next to it)."""
    from bench.scale_out import engine_costs

    rows = engine_costs(redis_server.url, tmp_path, 20)
    assert [(r["state"], r["round_trips"]) for r in rows] == [
        ("memory", 0), ("sqlite journal", 0), ("redis counter", 1), ("redis counter + journal", 3)]


def test_a_heavy_answer_drawn_in_the_worker_thread_takes_its_claimed_step(replicas: Replicas) -> None:
    """`n=64` is drawn in the worker thread (`server.offload.heavy`): it uses the claim made for it on the
    loop, never a second one (which would skip a step)."""
    a, b, _ = replicas.clients
    heavy = {**chat("flaky"), "n": 64}
    got = []
    for client in (a, b, a):
        r = client.post("/v1/chat/completions", json=heavy)
        assert r.status_code == 200, r.text
        got.append({c["message"]["content"] for c in r.json()["choices"]})
    assert got == [{"step one"}, {"step two"}, {"step three"}]


def test_the_workers_of_a_replica_journal_into_redis(redis_server: RedisServer) -> None:
    """`--workers 2 --state redis://…` without `--journal`: the workers journal into Redis, as every replica
    does, not into a temporary file of their own (which would keep their calls from the other replicas)."""
    import contextlib
    import io

    from synthgpt.journal.redis import RedisJournal
    from synthgpt.server.run import _share_between_workers, build_mock, open_config_state

    out = io.StringIO()
    with contextlib.ExitStack() as cleanup:
        config = _share_between_workers(ServeConfig(workers=2, state=redis_server.url), cleanup, out)
        assert config.journal is None and not config.journal_scratch
        state = open_config_state(config)
        try:
            assert isinstance(build_mock(config, state).journal, RedisJournal)
        finally:
            state.close()
    assert "temporary file" not in out.getvalue()
