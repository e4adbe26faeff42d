"""One Redis connection pool and what every Redis-backed store does with a failure.

Calls are synchronous redis-py calls made where the answer is drawn (the server's event loop thread): a
loopback round trip costs tens of microseconds, less than handing the draw to a worker thread would
(see docs/scale-out.md for the figures). So that a Redis that hangs cannot stall the loop for long,
every command has a short timeout (`--state-timeout`), and after a timeout the link answers "down" at
once for a second before trying again. Refused connections fail fast by themselves and are retried on
the next call, so the link recovers as soon as Redis is back.

No command is retried: an increment whose reply was lost may have been applied, and sending it again
would skip a step of a `sequence`. The caller answers 503 instead.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar
from urllib.parse import urlsplit

from ..errors import ConfigError, StateUnavailable

__all__ = ["DEFAULT_TIMEOUT", "RedisLink"]

T = TypeVar("T")
DEFAULT_TIMEOUT = 0.5
_COOL_DOWN = 1.0  # seconds answered "down" without trying, after a timeout


class RedisLink:
    def __init__(self, url: str, *, timeout: float = DEFAULT_TIMEOUT, prefix: str = "synthgpt") -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("redis", "rediss", "unix"):
            raise ConfigError(f"--state must be redis://HOST:PORT/DB (or rediss://, unix://), got {url!r}")
        if timeout <= 0:
            raise ConfigError(f"--state-timeout must be > 0 seconds, got {timeout}")
        try:
            import redis
            from redis.backoff import NoBackoff
            from redis.retry import Retry
        except ImportError:  # pragma: no cover - redis is a dependency of the `redis` extra
            raise ConfigError("--state redis://… needs redis-py: pip install 'synthgpt[redis]'") from None
        self.url = url
        self.prefix = prefix
        self._errors: tuple[type[BaseException], ...] = (redis.RedisError, OSError)
        self._timeouts: tuple[type[BaseException], ...] = (redis.TimeoutError, TimeoutError)
        try:
            self.client: Any = redis.Redis.from_url(
                url, socket_timeout=timeout, socket_connect_timeout=timeout, retry=Retry(NoBackoff(), 0)
            )
        except ValueError as exc:
            raise ConfigError(f"--state {url!r}: {exc}") from None
        self._down_until = 0.0
        self._lock = threading.Lock()
        self.failures = 0
        """Commands that failed since start-up (a Redis outage shows here and in the log)."""

    @property
    def where(self) -> str:
        """The URL without its password, for messages."""
        parts = urlsplit(self.url)
        host = parts.hostname or ""
        return f"{parts.scheme}://{host}:{parts.port or 6379}{parts.path}" if host else self.url

    def call(self, command: Callable[[Any], T]) -> T:
        """`command(client)`, or `StateUnavailable` naming the cause."""
        if self._down_until and time.monotonic() < self._down_until:
            raise StateUnavailable(f"Redis at {self.where} timed out moments ago")
        try:
            result = command(self.client)
        except self._errors as exc:
            with self._lock:
                self.failures += 1
                if isinstance(exc, self._timeouts):
                    self._down_until = time.monotonic() + _COOL_DOWN
            raise StateUnavailable(f"Redis at {self.where}: {_reason(exc)}") from exc
        self._down_until = 0.0
        return result

    def check(self) -> str | None:
        try:
            self.call(lambda c: c.ping())
        except StateUnavailable as exc:
            return exc.cause
        return None

    def key(self, *parts: str) -> str:
        return ":".join((self.prefix, *parts))

    def close(self) -> None:
        self.client.close()


def _reason(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.split("\n")[0]
