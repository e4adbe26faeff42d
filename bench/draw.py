"""CPU per draw of the draw stage alone: generators against a ready request, no decoding, no journal.

Each case draws 400 values from distinct seeds (best of several repeats, after a warm-up that fills the
per-process caches a long run has filled: compiled schemas, Faker tables). Run it against two checkouts
to A/B a change to the generators:

    python -m bench.draw                                  # this checkout
    python -m bench.draw --synthgpt-root /tmp/base        # another one
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

__all__ = ["main"]

_TEMPLATE = (
    "Dear {{ fake('name') }}, your order {{ fake('bothify', text='??-#####') }} ships to "
    "{{ fake('street_address') }}, {{ fake('city') }} {{ fake('postcode') }}. We will email "
    "{{ fake('email') }} or call {{ fake('phone_number') }} when {{ fake('company') }} picks it up on "
    "{{ fake('day_of_week') }}. About your message, \"{{ last_user }}\": it is in good hands."
)


def _cases() -> dict[str, tuple[Any, Callable[[int], Any]]]:
    from bench.cases import NESTED_SCHEMA, PROMPT
    from synthgpt import generators as g
    from synthgpt.generators.core import DrawContext
    from synthgpt.model import ModelRequest

    chat = ModelRequest.from_dict({"model": "m", "messages": [{"role": "user", "content": PROMPT}]})
    schema_req = ModelRequest.from_dict(
        {
            "model": "m",
            "messages": [{"role": "user", "content": "Make up an order"}],
            "response_schema": {"kind": "json_schema", "name": "order", "schema": NESTED_SCHEMA},
        }
    )

    def ctx(req: ModelRequest) -> Callable[[int], Any]:
        return lambda seed: DrawContext(req, seed, now=1_767_225_600)

    return {
        "prose": (g.prose(), ctx(chat)),
        "fake_name": (g.fake("name"), ctx(chat)),
        "objects": (g.objects({f"f{i}": g.integer(0, 100) for i in range(20)}), ctx(chat)),
        "template": (g.template(_TEMPLATE), ctx(chat)),
        "schema": (g.from_request_schema(), ctx(schema_req)),
    }


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description="µs of CPU per draw, generators alone")
    ap.add_argument("--cases", default="prose,fake_name,objects,template,schema")
    ap.add_argument("-n", type=int, default=400)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--warm", type=int, default=3000, help="draws before timing (fills per-process tables)")
    ap.add_argument("--synthgpt-root", type=Path, help="import synthgpt from this checkout")
    args = ap.parse_args(argv)
    if args.synthgpt_root:
        sys.path.insert(0, str(args.synthgpt_root.resolve()))
    print(f"synthgpt from {__import__('synthgpt').__file__}")
    cases = _cases()
    for name in (c.strip() for c in args.cases.split(",") if c.strip()):
        gen, make = cases[name]
        for seed in range(args.warm):
            gen.draw(make(seed))
        best = float("inf")
        for r in range(args.repeats):
            ctxs = [make(10**6 * (r + 1) + i) for i in range(args.n)]
            started = time.process_time()
            for c in ctxs:
                gen.draw(c)
            best = min(best, (time.process_time() - started) / args.n * 1e6)
        print(f"{name:<12} {best:>8.1f} us/draw")


if __name__ == "__main__":
    main()
