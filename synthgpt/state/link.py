"""The Redis connections and what every Redis-backed store does with a failure.

The server talks to Redis through `redis.asyncio` (`acall`): a request waiting for Redis yields the event
loop, so a slow or paused Redis never holds up `/healthz`, stateless answers or other connections' stream
frames. Each event loop gets its own asyncio client (an asyncio connection belongs to the loop that
opened it: the server has one, in-process tests and transports may run several). Code with no running
loop (the worker thread drawing heavy answers, the library used synchronously, the admin listing built in
a thread) uses the synchronous client (`call`); see docs/scale-out.md.

Every command has a short timeout (`--state-timeout`), and after a timeout the link answers "down" at
once for a second before trying again. Refused connections fail fast by themselves and are retried on
the next call, so the link recovers as soon as Redis is back.

No command is retried: an increment whose reply was lost may have been applied, and sending it again
would skip a step of a `sequence`. The caller answers 503 instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
import weakref
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar
from urllib.parse import urlsplit

from ..errors import ConfigError, StateUnavailable

__all__ = ["DEFAULT_TIMEOUT", "RedisLink", "run_script"]

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
            import redis.asyncio
            from redis.backoff import NoBackoff
            from redis.retry import Retry
        except ImportError:  # pragma: no cover - redis is a dependency of the `redis` extra
            raise ConfigError("--state redis://… needs redis-py: pip install 'synthgpt[redis]'") from None
        self.url = url
        self.prefix = prefix
        self.timeout = timeout
        self._errors: tuple[type[BaseException], ...] = (redis.RedisError, OSError, asyncio.TimeoutError)
        self._timeouts: tuple[type[BaseException], ...] = (redis.TimeoutError, TimeoutError)
        options: dict[str, Any] = {"socket_timeout": timeout, "socket_connect_timeout": timeout}
        try:
            self.client: Any = redis.Redis.from_url(url, retry=Retry(NoBackoff(), 0), **options)
        except ValueError as exc:
            raise ConfigError(f"--state {url!r}: {exc}") from None
        from redis.asyncio.retry import Retry as AsyncRetry

        self._async_client: Callable[[], Any] = lambda: redis.asyncio.Redis.from_url(
            url, retry=AsyncRetry(NoBackoff(), 0), **options)  # fmt: skip
        self._async: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any] = weakref.WeakKeyDictionary()
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
        """`command(client)` with the synchronous client, or `StateUnavailable` naming the cause."""
        self._refuse_while_cooling()
        try:
            result = command(self.client)
        except self._errors as exc:
            raise self._failed(exc) from exc
        self._down_until = 0.0
        return result

    def aclient(self) -> Any:
        """The asyncio client of the running event loop (made on first use there)."""
        loop = asyncio.get_running_loop()
        client = self._async.get(loop)
        if client is None:
            client = self._async[loop] = self._async_client()
        return client

    async def acall(self, command: Callable[[Any], Awaitable[T]]) -> T:
        """`await command(asyncio client)`, or `StateUnavailable` naming the cause: the loop serves others
        meanwhile."""
        self._refuse_while_cooling()
        try:
            # the socket timeout bounds each read; this bounds the whole command (a script, a SCAN loop)
            result = await asyncio.wait_for(command(self.aclient()), self.timeout)
        except self._errors as exc:
            raise self._failed(exc) from exc
        self._down_until = 0.0
        return result

    def _refuse_while_cooling(self) -> None:
        if self._down_until and time.monotonic() < self._down_until:
            raise StateUnavailable(f"Redis at {self.where} timed out moments ago")

    def _failed(self, exc: BaseException) -> StateUnavailable:
        with self._lock:
            self.failures += 1
            if isinstance(exc, self._timeouts):
                self._down_until = time.monotonic() + _COOL_DOWN
        return StateUnavailable(f"Redis at {self.where}: {_reason(exc)}")

    def check(self) -> str | None:
        try:
            self.call(lambda c: c.ping())
        except StateUnavailable as exc:
            return exc.cause
        return None

    async def acheck(self) -> str | None:
        """`check` without blocking the loop (`/readyz`)."""
        try:
            await self.acall(lambda c: c.ping())
        except StateUnavailable as exc:
            return exc.cause
        return None

    def key(self, *parts: str) -> str:
        return ":".join((self.prefix, *parts))

    def close(self) -> None:
        self.client.close()
        # an asyncio client's connections belong to its loop: closed there (a loop already closed took
        # its sockets with it)
        try:
            current: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            current = None
        for loop, client in list(self._async.items()):
            if loop.is_closed():
                continue
            if loop is current:
                loop.create_task(client.aclose())
            elif loop.is_running():
                with contextlib.suppress(Exception):
                    asyncio.run_coroutine_threadsafe(client.aclose(), loop).result(timeout=self.timeout)
            else:
                with contextlib.suppress(Exception):
                    loop.run_until_complete(client.aclose())
        self._async.clear()


async def run_script(client: Any, script: Any, keys: list[str], args: list[str]) -> Any:
    """A script registered with the synchronous client (`register_script`), run by an asyncio client:
    by its hash, loaded again when Redis has forgotten it (a restart empties its script cache)."""
    from redis.exceptions import NoScriptError

    try:
        return await client.evalsha(script.sha, len(keys), *keys, *args)
    except NoScriptError:
        return await client.eval(script.script, len(keys), *keys, *args)


def _reason(exc: BaseException) -> str:
    if isinstance(exc, asyncio.TimeoutError) and not str(exc):
        return "Timeout reading from socket"
    text = str(exc).strip() or type(exc).__name__
    return text.split("\n")[0]
