"""Shared pieces of the fuzz tests: one hypothesis profile, nasty JSON values, a log trap.

The profile is derandomized and database-free, so a CI run explores exactly the examples a local run
does, and a failure reproduces from the test name alone. `SYNTHGPT_FUZZ_SCALE=N` hunts longer.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

FUZZ = settings(
    derandomize=True,
    database=None,
    deadline=None,
    print_blob=False,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)


SCALE = int(os.environ.get("SYNTHGPT_FUZZ_SCALE", "1"))
"""`SYNTHGPT_FUZZ_SCALE=20` runs 20 times the examples, randomized: a longer hunt than CI affords."""


def fuzz(max_examples: int) -> settings:
    if SCALE > 1:
        return settings(FUZZ, max_examples=max_examples * SCALE, derandomize=False)
    return settings(FUZZ, max_examples=max_examples)


def _no_trigger(text: str) -> bool:
    # a `!MOCK_…!` trigger asks for a fault (a 500, a delay, a cut stream) on purpose
    return "!MOCK" not in text.upper()


texts = st.text(max_size=40).filter(_no_trigger)
"""Any code points, lone surrogates included (JSON can carry them as `\\ud800` escapes)."""

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    texts,
    st.sampled_from(
        [
            "",
            "user",
            "assistant",
            "system",
            "tool",
            "auto",
            "none",
            "required",
            "function",
            "json_schema",
            "json_object",
            "text",
            "base64",
            "float",
            "object",
            "string",
        ]
    ),
)

json_values = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(
            st.one_of(texts, st.sampled_from(["type", "role", "content", "name"])), children, max_size=4
        ),
    ),
    max_leaves=12,
)


def nested(depth: int, leaf: Any = 1) -> Any:
    """A value `depth` levels deep, alternating lists and objects."""
    value = leaf
    for i in range(depth):
        value = [value] if i % 2 else {"a": value}
    return value


nasty = st.one_of(
    json_values,
    st.integers(min_value=1, max_value=900).map(nested),
    st.just("x" * 100_000),
    st.just(list(range(5000))),
    st.just("\ud800"),
    st.just("\udfff tail"),
)
"""Values a field is replaced with: random JSON, deep nesting, huge values, lone surrogates, NaN."""


def encode(body: Any) -> bytes:
    """JSON bytes as a careless client sends them: NaN/Infinity literals, lone surrogates as escapes."""
    return json.dumps(body, allow_nan=True).encode()


class Trap(logging.Handler):
    """Collects every record at ERROR or above, or carrying a traceback."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.levelno >= logging.ERROR or record.exc_info:
            self.records.append(record)

    def report(self) -> str:
        return "\n".join(self.format(r) for r in self.records)


@contextmanager
def trapped(name: str = "synthgpt") -> Iterator[Trap]:
    trap = Trap()
    trap.setFormatter(logging.Formatter("%(name)s %(levelname)s %(message)s"))
    logger = logging.getLogger(name)
    logger.addHandler(trap)
    try:
        yield trap
    finally:
        logger.removeHandler(trap)
