"""End to end: nginx round-robin in front of three `synthgpt serve --state redis://…` replicas, all real
processes on loopback ports (`bench.cluster`)."""

from __future__ import annotations

import itertools
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from bench.cluster import Cluster, missing_programs

pytestmark = pytest.mark.slow

RULES = Path(__file__).resolve().parents[2] / "bench" / "rules" / "scale_out.yaml"  # flaky, counted, default
CLIENTS = 50


def chat(text: str) -> dict[str, object]:
    return {"model": "gpt-4o", "messages": [{"role": "user", "content": text}]}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    problem = missing_programs()
    if problem:
        pytest.skip(problem)
    tmp = tmp_path_factory.mktemp("cluster")
    # a generous timeout: on a loaded CI machine a Redis reply may take longer than the 0.5 s default, and
    # this test is about counts, not about timeouts (a refused connection still fails at once)
    with Cluster(tmp, rules=[RULES], replicas=3, extra_args=("--state-timeout", "10")) as c:
        yield c


@pytest.fixture
def fresh(cluster: Cluster) -> Cluster:
    """Every test starts from zero calls, for every replica at once."""
    assert httpx.delete(cluster.url + "/_synthgpt/calls").status_code == 200
    return cluster


def in_parallel(n: int, work: object) -> None:
    assert callable(work)
    threads = [threading.Thread(target=work, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def test_a_sequence_in_order_across_replicas_under_50_clients(fresh: Cluster) -> None:
    texts: list[str] = []
    upstreams: set[str] = set()
    lock = threading.Lock()

    def client(i: int) -> None:
        with httpx.Client(base_url=fresh.url, timeout=30) as http:
            for _ in range(3):
                r = http.post("/v1/chat/completions", json=chat("flaky"))
                assert r.status_code == 200, r.text
                with lock:
                    texts.append(r.json()["choices"][0]["message"]["content"])
                    upstreams.add(r.headers["x-upstream"])

    in_parallel(CLIENTS, client)
    assert Counter(texts) == {"step one": 1, "step two": 1, "step three": 3 * CLIENTS - 2}
    assert upstreams == {u.removeprefix("http://") for u in fresh.replica_urls}
    # the journal holds every call of every replica, whichever replica answers the listing
    for _ in range(3):
        listing = httpx.get(fresh.url + "/_synthgpt/calls", params={"limit": "1"})
        assert listing.headers["x-total-count"] == str(3 * CLIENTS)


def test_the_same_request_gets_the_same_bytes_on_every_replica(fresh: Cluster) -> None:
    landed: set[str] = set()
    answers: set[tuple[bytes, str | None]] = set()
    for _ in range(6):
        r = httpx.post(fresh.url + "/v1/chat/completions", json=chat("hello"))
        answers.add((r.content, r.headers.get("x-request-id")))
        landed.add(r.headers["x-upstream"])
    assert len(landed) == 3 and len(answers) == 1


def test_a_previous_response_id_chain_across_replicas(fresh: Cluster) -> None:
    landed: list[str] = []
    previous: str | None = None
    with httpx.Client(base_url=fresh.url, timeout=30) as http:
        for turn in range(6):
            body: dict[str, object] = {"model": "gpt-4o", "input": f"turn {turn}"}
            if previous is not None:
                body["previous_response_id"] = previous
            r = http.post("/v1/responses", json=body)
            assert r.status_code == 200, r.text
            previous = r.json()["id"]
            landed.append(r.headers["x-upstream"])
    assert all(a != b for a, b in itertools.pairwise(landed)), landed  # round robin
    calls = httpx.get(fresh.url + "/_synthgpt/calls").json()
    assert [c["request"]["messages"] for c in calls] == [1, 3, 5, 7, 9, 11]


def test_redis_killed_and_restarted_mid_load_gives_no_wrong_answer(fresh: Cluster) -> None:
    """Every answer is a 200 with a call index no other answer has, or a 503 naming the store."""
    stateless = httpx.post(fresh.url + "/v1/chat/completions", json=chat("hello")).content
    statuses: Counter[int] = Counter()
    indices: list[str] = []
    wrong: list[str] = []
    stop = threading.Event()
    lock = threading.Lock()

    def client(i: int) -> None:
        with httpx.Client(base_url=fresh.url, timeout=30) as http:
            while not stop.is_set():
                counted = http.post("/v1/chat/completions", json=chat("count"))
                plain = http.post("/v1/chat/completions", json=chat("hello"))
                with lock:
                    statuses[counted.status_code] += 1
                    if counted.status_code == 200:
                        indices.append(counted.json()["choices"][0]["message"]["content"])
                    elif counted.status_code != 503 or counted.json()["error"]["code"] != "state_unavailable":
                        wrong.append(counted.text)
                    if plain.status_code != 200 or plain.content != stateless:
                        wrong.append(plain.text)

    threads = [threading.Thread(target=client, args=(i,)) for i in range(10)]
    for t in threads:
        t.start()
    time.sleep(1.0)
    fresh.redis.kill()
    time.sleep(1.0)
    fresh.redis.start()
    time.sleep(1.5)
    stop.set()
    for t in threads:
        t.join()
    assert wrong == []
    assert statuses[503] > 0 and statuses[200] > 0, statuses
    assert len(indices) == len(set(indices)), Counter(indices).most_common(3)  # no call index twice
    # and after the outage every replica answers stateful calls again
    for _ in range(3):
        assert httpx.post(fresh.url + "/v1/chat/completions", json=chat("count")).status_code == 200
        assert httpx.get(fresh.url + "/readyz").status_code == 200
