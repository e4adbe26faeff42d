"""CPU of the engine's own work per distinct request, in process: rule matching and `MockGPT.resolve`
around the generators' draw.

    .venv/bin/python -m bench.resolve                 # built-in rules, a plain chat request
    .venv/bin/python -m bench.resolve -n 4000 --repeats 7
    .venv/bin/python -m bench.resolve --synthgpt-root /tmp/base   # the same figures for another checkout

Requests are decoded up front (decoding is not the engine's) and each differs (a counter in the prompt),
as in `bench.distinct`. Printed, in µs of thread CPU per request (the best of the repeats):

- `match`: `RuleSet.resolve(request)`, the first-match search over the built-in rules (claim included);
- `resolve`: the whole `MockGPT.resolve(request)`;
- `outside draw`: `resolve` again for the same requests, each rule's generator answering with what it
  drew the first time (a dict look-up): everything the engine adds (budget, token counting, seed,
  matching, the choice, stop/limit, usage, the output, the record and the journal);
- `no journal`: the same with a journal that keeps nothing (packing old records is the journal's cost).
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


class _Drawn:
    """A rule's generator replaced by the answers it drew: the draw costs a dict look-up, so what
    `resolve` costs then is the engine's own work."""

    def __init__(self, inner: Any, answers: dict[int, Any]) -> None:
        self.inner = inner
        self.answers = answers

    def draw(self, ctx: Any) -> Any:
        return self.answers[id(ctx.received)]

    def __repr__(self) -> str:
        return repr(self.inner)


class _Recording:
    """A rule's generator, its answers kept by request."""

    def __init__(self, inner: Any, answers: dict[int, Any]) -> None:
        self.inner = inner
        self.answers = answers

    def draw(self, ctx: Any) -> Any:
        value = self.answers[id(ctx.received)] = self.inner.draw(ctx)
        return value

    def __repr__(self) -> str:
        return repr(self.inner)


def _per_request(run: Callable[[Any], Any], batches: list[list[Any]]) -> float:
    """µs of thread CPU per request of `run`, the best batch after the first (which warms caches)."""
    best = float("inf")
    for reqs in batches:
        t = time.thread_time_ns()
        for req in reqs:
            run(req)
        best = min(best, (time.thread_time_ns() - t) / len(reqs) / 1000)
    return best


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description="CPU of rule matching and of MockGPT.resolve outside the draw")
    ap.add_argument("-n", type=int, default=2000, help="requests per repeat")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--synthgpt-root", type=Path, help="import synthgpt from this checkout (A/B runs)")
    args = ap.parse_args(argv)
    if args.synthgpt_root:
        sys.path.insert(0, str(args.synthgpt_root.resolve()))

    import synthgpt
    from synthgpt import MockGPT
    from synthgpt.journal import Journal

    print(f"synthgpt from {synthgpt.__file__}")
    batches = [_requests(args.n, (r + 1) * args.n) for r in range(args.repeats + 1)]
    match = _per_request(MockGPT().rules.resolve, batches)

    answers: dict[int, Any] = {}
    drawing = MockGPT()
    for rule in drawing.rules:
        rule.generator = _Recording(rule.generator, answers)  # type: ignore[assignment]
    whole = _per_request(drawing.resolve, batches)

    engine = MockGPT()
    for rule in engine.rules:
        rule.generator = _Drawn(rule.generator, answers)  # type: ignore[assignment]
    outside = _per_request(engine.resolve, batches)
    engine.journal = Journal(0)  # keeps nothing: the rules' histories still do
    unjournaled = _per_request(engine.resolve, batches)

    print(f"match         {match:8.2f} µs  (RuleSet.resolve, built-in rules, plain chat)")
    print(f"resolve       {whole:8.2f} µs")
    print(f"outside draw  {outside:8.2f} µs  (resolve with every draw answered from a dict)")
    print(f"  no journal  {unjournaled:8.2f} µs  (the same, the journal keeping nothing)")


if __name__ == "__main__":
    main()
