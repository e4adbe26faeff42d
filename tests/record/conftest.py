from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.record._support import upstream_server


@pytest.fixture(scope="module")
def upstream() -> Iterator[str]:
    """synthgpt itself as the real API, on its own loopback port (one per test module)."""
    server = upstream_server()
    try:
        yield server.url
    finally:
        server.stop()
