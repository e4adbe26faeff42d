"""In-process speed: `MockGPT.generate` calls per second, no HTTP at all.

Run by bench/run.py in its own process pinned to the server core; prints one JSON line.

    python -m bench.inproc --duration 2
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
from collections.abc import Callable
from typing import Any

from .cases import NESTED_SCHEMA, PROMPT

__all__ = ["calls_per_second", "measure"]


def calls_per_second(fn: Callable[[], Any], duration: float) -> float:
    for _ in range(20):  # warm caches (compiled schema, Faker instances) before timing
        fn()
    calls = 0
    started = time.perf_counter()
    deadline = started + duration
    while True:
        for _ in range(50):
            fn()
        calls += 50
        now = time.perf_counter()
        if now >= deadline:
            return calls / (now - started)


def measure(duration: float) -> dict[str, Any]:
    """Calls/s of each rule twice: one request over and over (`MockGPT.generate` replays it from the
    engine's memo from its third call, `synthgpt.engine.memo`) and a counter in the prompt (`_distinct`:
    every answer decoded, drawn and journaled)."""
    from synthgpt import MockGPT, Rule
    from synthgpt import generators as g
    from synthgpt import matchers as m

    def text_req(i: int | None = None) -> dict[str, Any]:
        prompt = PROMPT if i is None else f"{PROMPT} (request {i})"
        return {"model": "gpt-4o", "messages": [{"role": "user", "content": prompt}]}

    def schema_req(i: int | None = None) -> dict[str, Any]:
        prompt = "Make up an order" if i is None else f"Make up an order (request {i})"
        return {
            "model": "gpt-4o",
            "messages": [{"role": "user", "content": prompt}],
            "response_schema": {
                "kind": "json_schema", "name": "order", "strict": True, "schema": NESTED_SCHEMA,
            },
        }

    results: dict[str, Any] = {}
    text_mock = MockGPT(seed=1)
    results["default_text"] = calls_per_second(lambda: text_mock.generate(text_req()), duration)
    counter = itertools.count()
    results["default_text_distinct"] = calls_per_second(
        lambda: text_mock.generate(text_req(next(counter))), duration
    )
    try:
        schema_mock = MockGPT([Rule("schema", m.always(), g.from_request_schema())], seed=1)
        schema_mock.generate(schema_req())
        results["schema"] = calls_per_second(lambda: schema_mock.generate(schema_req()), duration)
        results["schema_distinct"] = calls_per_second(
            lambda: schema_mock.generate(schema_req(next(counter))), duration
        )
    except Exception as exc:  # the schema generator may not exist yet in a partial checkout
        results["schema"] = results["schema_distinct"] = f"n/a: {type(exc).__name__}: {exc}"
    return results


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description="MockGPT.generate calls per second")
    ap.add_argument("--duration", type=float, default=2.0)
    ap.add_argument("--synthgpt-root", help="import synthgpt from this checkout")
    args = ap.parse_args(argv)
    if args.synthgpt_root:
        sys.path.insert(0, args.synthgpt_root)
    print(json.dumps(measure(args.duration)), flush=True)


if __name__ == "__main__":
    main()
