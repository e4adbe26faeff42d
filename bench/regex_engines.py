"""Rule regexes: Python's `re` against RE2 (`google-re2`) and the `regex` module with a timeout.

    .venv/bin/python bench/regex_engines.py

Prints, per engine, the time to search typical rule regexes in a typical message, and the time of the
catastrophic case of issue 11, `(a+)+$` against 27 `a`s and a `!`. (`regex` is not a dependency; the
script skips it when it is not installed.)
"""

from __future__ import annotations

import importlib.util
import re
import time
from collections.abc import Callable
from typing import Any

from synthgpt.linear_regex import compile_rule_regex

TYPICAL = [r"^hi (?P<who>\w+)", r"weather in (?P<city>[A-Z][a-z]+)", r"\b(refund|cancel)\b",
           r"order #?\d{4,}"]  # fmt: skip
MESSAGE = "Hello there, what's the weather in Paris tomorrow? Also please cancel order 12345. " * 3
EVIL, EVIL_TEXT = r"(a+)+$", "a" * 27 + "!"


def _per_search(search: Callable[[str], Any], n: int = 20_000) -> float:
    started = time.perf_counter()
    for _ in range(n):
        search(MESSAGE)
    return (time.perf_counter() - started) / n * 1e6


def main() -> None:
    import re2

    opts = re2.Options()
    opts.log_errors = False
    engines: dict[str, Callable[[str], Callable[[str], Any]]] = {
        "re": lambda p: re.compile(p).search,
        "re2": lambda p: re2.compile(p, opts).search,
        "synthgpt RuleRegex": lambda p: compile_rule_regex(p, ignore_case=True).search,
    }
    if importlib.util.find_spec("regex"):
        import regex

        def with_timeout(p: str) -> Callable[[str], Any]:
            r = regex.compile(p)
            return lambda t: r.search(t, timeout=0.1)

        engines["regex(timeout=0.1)"] = with_timeout
    for name, compile_ in engines.items():  # (the evil case last: `re` takes its time)
        typical = sum(_per_search(compile_(p)) for p in TYPICAL) / len(TYPICAL)
        evil = compile_(EVIL)
        started = time.perf_counter()
        try:
            found = evil(EVIL_TEXT) is not None
            outcome = f"match={found}"
        except TimeoutError:
            outcome = "TimeoutError"
        took = time.perf_counter() - started
        print(f"{name:>18}: typical search {typical:6.2f} us; (a+)+$ on 27 a's + '!': {took * 1000:9.2f} ms "
              f"({outcome})")


if __name__ == "__main__":
    main()
