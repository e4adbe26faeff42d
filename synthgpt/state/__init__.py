"""State a server's replicas share: `--state memory` (the default) or `--state redis://HOST:PORT/DB`.

    StateStore (Protocol)     base.py: what the server asks of a state store
    ├── MemoryState           every process counts and keeps its own (the default)
    └── RedisState            redis.py: call counters, journal, Responses store in one shared Redis
    CallCounter (Protocol)    base.py: the rule call counts `times` and `sequence` read
    RedisLink                 link.py: the connection, its timeouts, and failure -> `StateUnavailable` (503)
    SharedAnswers             aio.py: the server's round trips, awaited outside the draw lock
    SharedMemo                memo.py: expensive answers kept in Redis for every replica (`--state-memo-us`)

`open_state(url)` builds the store for a `--state` value and checks it answers (a clear `ConfigError`
otherwise, so a server never starts against a Redis it cannot reach).
"""

from __future__ import annotations

from ..errors import ConfigError
from .base import CallCounter, MemoryState, StateStore
from .link import DEFAULT_TIMEOUT
from .redis import DEFAULT_TTL, RedisState

__all__ = ["DEFAULT_TIMEOUT", "DEFAULT_TTL", "CallCounter", "MemoryState", "RedisState", "StateStore",
           "open_state"]  # fmt: skip


def open_state(
    url: str | None, *, ttl: int = DEFAULT_TTL, timeout: float = DEFAULT_TIMEOUT, memo_us: int = 0
) -> StateStore:
    """The state store for a `--state` value (None or `memory`: in-process), reachable or a ConfigError."""
    if url is None or url == "memory":
        return MemoryState()
    if "://" not in url:
        raise ConfigError(f"--state must be 'memory' or redis://HOST:PORT/DB, got {url!r}")
    state = RedisState(url, ttl=ttl, timeout=timeout, memo_us=memo_us)
    problem = state.check()
    if problem is not None:
        state.close()
        raise ConfigError(f"cannot reach the state store: {problem}")
    return state
