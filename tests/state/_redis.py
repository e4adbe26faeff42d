"""The `redis_server` fixture: a real `redis-server` (the Debian package) on a free loopback port
(`bench.cluster.RedisServer`), stopped after the test; `Replicas`: in-process apps sharing it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from starlette.applications import Starlette

from bench.cluster import REDIS, RedisServer, free_port
from synthgpt.server.run import ServeConfig, create_app_from_config
from synthgpt.testing import InProcessTransport2

__all__ = ["REDIS", "RedisServer", "Replicas", "free_port", "redis_server"]


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    if REDIS is None:
        pytest.skip("redis-server is not installed (apt-get install -y redis-server; make test does)")
    server = RedisServer(tmp_path)
    server.start()
    try:
        yield server
    finally:
        server.stop()


class Replicas:
    """Apps built as `synthgpt serve RULES --state URL` builds them, one client each."""

    def __init__(self, rules: Path, url: str, n: int, **settings: Any) -> None:
        config = ServeConfig(rule_files=(str(rules),), state=url, state_timeout=10,  # a loaded CI machine
                             **settings)  # fmt: skip
        self.apps: list[Starlette] = [create_app_from_config(config) for _ in range(n)]
        self.clients = [httpx2.Client(transport=InProcessTransport2(a), base_url="http://localhost")
                        for a in self.apps]  # fmt: skip

    def close(self) -> None:
        for c in self.clients:
            c.close()
        for a in self.apps:
            a.state.state_store.close()
