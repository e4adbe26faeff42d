"""CPU of the engine's own work per distinct request, in process: rule matching and `MockGPT.resolve`
around the generators' draw.

    .venv/bin/python -m bench.resolve                 # built-in rules, a plain chat request
    .venv/bin/python -m bench.resolve -n 4000 --repeats 7

Requests are decoded up front (decoding is not the engine's) and each differs (a counter in the prompt),
as in `bench.distinct`. Printed, in µs of thread CPU per request (the best of the repeats):

- `match`: `RuleSet.resolve(request)`, the first-match search over the built-in rules (claim included);
- `resolve`: the whole `MockGPT.resolve(request)`;
- `draw`: the part of it spent inside the answering rule's generator (`Generator.draw`, timed by a
  wrapper whose own ~0.2 µs counts as outside);
- `journal`: the part spent in `journal.add` (storing, and packing records 16 calls old);
- `outside draw`: `resolve - draw`, everything the engine adds (budget, token counting, seed, matching,
  stop/limit, usage, the output and the record), and that without the journal's store.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.cases import PROMPT

__all__ = ["main"]


def _requests(n: int, offset: int) -> list[Any]:
    from synthgpt.codec.openai_chat.encode import ChatCodec

    codec = ChatCodec()
    headers = {"content-type": "application/json", "authorization": "Bearer sk-test"}
    bodies = (
        {"model": "gpt-4o", "messages": [{"role": "user", "content": f"{PROMPT} #{offset + i}"}]}
        for i in range(n)
    )
    return [codec.decode(json.loads(json.dumps(b)), headers, {}) for b in bodies]


class _Clock:
    """Thread CPU spent inside a wrapped callable, summed."""

    def __init__(self) -> None:
        self.ns = 0

    def wrap(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            t = time.thread_time_ns()
            try:
                return fn(*args, **kwargs)
            finally:
                self.ns += time.thread_time_ns() - t

        return timed


class _Timed:
    """A rule's generator, its draws timed."""

    def __init__(self, inner: Any, clock: _Clock) -> None:
        self.draw = clock.wrap(inner.draw)
        self.inner = inner

    def __repr__(self) -> str:
        return repr(self.inner)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description="CPU of rule matching and of MockGPT.resolve outside the draw")
    ap.add_argument("-n", type=int, default=2000, help="requests per repeat")
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args(argv)

    from synthgpt import MockGPT

    mock = MockGPT()
    draws = _Clock()
    for rule in mock.rules:
        rule.generator = _Timed(rule.generator, draws)  # type: ignore[assignment]
    journal = _Clock()
    store = mock.journal.add
    mock.journal.add = journal.wrap(store)  # type: ignore[method-assign]

    batches = [_requests(args.n, (r + 1) * args.n) for r in range(args.repeats + 1)]
    match_us: list[float] = []
    for reqs in batches:
        rules = mock.rules
        t = time.thread_time_ns()
        for req in reqs:
            rules.resolve(req)
        match_us.append((time.thread_time_ns() - t) / len(reqs) / 1000)
    mock.rules.reset()

    rows: list[tuple[float, float, float]] = []
    for reqs in batches:
        draws.ns = journal.ns = 0
        t = time.thread_time_ns()
        for req in reqs:
            mock.resolve(req)
        total = time.thread_time_ns() - t
        n = len(reqs) * 1000
        rows.append((total / n, draws.ns / n, journal.ns / n))
    resolve, draw, stored = min(rows[1:])  # the first batch warms caches
    print(f"match         {min(match_us[1:]):8.2f} µs  (RuleSet.resolve, built-in rules, plain chat)")
    print(f"resolve       {resolve:8.2f} µs")
    print(f"draw          {draw:8.2f} µs")
    print(f"journal       {stored:8.2f} µs")
    print(f"outside draw  {resolve - draw:8.2f} µs  ({resolve - draw - stored:.2f} µs without the journal)")


if __name__ == "__main__":
    main()
