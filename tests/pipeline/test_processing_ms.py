"""`pipeline.processing_ms` hashes its label framed once (`seed_prefix`): the same milliseconds as the
`derive_seed("processing-ms", rid)` it was written with, for every kind of request id."""

from __future__ import annotations

import pytest

from synthgpt.pipeline import answer_request_id, processing_ms, request_id
from synthgpt.seeding import derive_seed


def _old(rid: str, first_delay_ms: float = 0.0) -> int:
    return 40 + derive_seed("processing-ms", rid) % 360 + int(first_delay_ms)


RIDS = [
    "", "req_", "req_0123456789abcdef0123456789abcdef", "é" * 300, "x" * 256, "x" * 255, "\u2028",
    request_id(7, "/v1/chat/completions", "abc"), answer_request_id(1, "chat", 2**63 + 5),
]  # fmt: skip


@pytest.mark.parametrize("rid", RIDS)
@pytest.mark.parametrize("delay", [0.0, 2.5, 1500.0])
def test_processing_ms_is_the_derived_one(rid: str, delay: float) -> None:
    assert processing_ms(rid, delay) == _old(rid, delay)


def test_processing_ms_on_many_ids() -> None:
    for n in range(2000):
        rid = answer_request_id(n % 7, "responses", n * 7919)
        assert processing_ms(rid) == _old(rid)
