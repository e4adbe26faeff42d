"""The `redis_server` fixture: a real `redis-server` (the Debian package) on a free loopback port
(`bench.cluster.RedisServer`), stopped after the test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.cluster import REDIS, RedisServer, free_port

__all__ = ["REDIS", "RedisServer", "free_port", "redis_server"]


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    if REDIS is None:
        pytest.skip("redis-server is not installed (apt-get install -y redis-server; .ci/run does)")
    server = RedisServer(tmp_path)
    server.start()
    try:
        yield server
    finally:
        server.stop()
