"""State in one Redis shared by every replica: rule call counters and the Responses store.

    KEYS (prefix `synthgpt`)
    synthgpt:counts:<rule-set fingerprint>   hash: rule name -> calls claimed
    synthgpt:response:<response id>          a stored conversation (JSON), expiring after `--state-ttl`
    synthgpt:journal, synthgpt:journal:total the journal (synthgpt.journal.redis)

A claim is one atomic script (read, compare with `times`, increment), so concurrent replicas never hand out
one index twice and a `times` rule never answers more than `times` calls. The fingerprint keys counts by
the rules themselves: replicas serving the same rule files share counts, an edited rule set starts afresh.

Only rules whose answer can depend on the count are counted in Redis (`counted`: a `times` limit, a
`sequence`, a template reading `call_index`); every other rule counts its calls in the process, so a
stateless answer needs no round trip at all and keeps answering while Redis is slow or away.

The server claims before it draws, through the asyncio client (`RedisCounter.aclaim`, called by
`synthgpt.state.aio`), and hands the claimed index to the synchronous draw through a context variable
(`preclaimed`); a draw with no claim made for it (the library used synchronously, a heavy answer drawn
in the worker thread) claims with the synchronous client.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError, StateUnavailable
from ..model import Message
from .link import DEFAULT_TIMEOUT, RedisLink, run_script

if TYPE_CHECKING:
    from ..journal.redis import RedisJournal
    from ..rules.rule import Rule

__all__ = ["DEFAULT_TTL", "RedisCounter", "RedisResponseStore", "RedisState", "counted", "fetched",
           "preclaimed", "stored"]  # fmt: skip

DEFAULT_TTL = 3600

Claim = int | None | StateUnavailable
preclaimed: ContextVar[dict[str, Claim] | None] = ContextVar("synthgpt_preclaimed", default=None)
"""rule name -> the claim the server made for this request before drawing (an index, None: used up, or
why Redis could not say); set per request by `synthgpt.state.aio`."""
fetched: ContextVar[dict[str, tuple[Message, ...] | StateUnavailable | None] | None] = ContextVar(
    "synthgpt_fetched", default=None)  # fmt: skip
"""response id -> the conversation the server read for this request before decoding it."""
stored: ContextVar[list[asyncio.Task[None]] | None] = ContextVar("synthgpt_stored", default=None)
"""The Responses store writes this request started, awaited before its answer is sent."""


def counted(rule: Rule) -> bool:
    """Whether `rule`'s answers can depend on its shared call count: a `times` limit, a `sequence`, a
    template reading `call_index`, or Python code of the user's (a generator or function whose repr is an
    address: what it reads cannot be told). Judged from the rule as written, so it errs towards counting."""
    if rule.times is not None:
        return True
    text = repr(rule.generator)
    return "sequence(" in text or "call_index" in text or " at 0x" in text

# KEYS[1] the counts hash; ARGV[1] the rule; ARGV[2] its `times` ('' for none). Returns the call's index,
# or -1 when the rule has no calls left.
_CLAIM = """
local n = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0')
if ARGV[2] ~= '' and n >= tonumber(ARGV[2]) then return -1 end
redis.call('HINCRBY', KEYS[1], ARGV[1], 1)
return n
"""
_RELEASE = """
if redis.call('HINCRBY', KEYS[1], ARGV[1], -1) < 0 then redis.call('HSET', KEYS[1], ARGV[1], 0) end
return 0
"""


class RedisCounter:
    def __init__(self, link: RedisLink) -> None:
        self._link = link
        self._claim = link.client.register_script(_CLAIM)  # EVALSHA; reloaded by redis-py after a restart
        self._release = link.client.register_script(_RELEASE)

    def claim(self, scope: str, rule: Rule) -> int | None:
        if not counted(rule):
            return rule._claim()
        made = preclaimed.get()
        if made is not None and rule.name in made:
            n: Claim = made.pop(rule.name)
            if isinstance(n, StateUnavailable):
                raise n
        else:
            key = self._link.key("counts", scope)
            n = int(self._link.call(lambda c: self._claim(keys=[key], args=self._args(rule), client=c)))
        if n is None or n < 0:
            return None
        rule._note()
        return n

    async def aclaim(self, scope: str, rule: Rule) -> int | None:
        """The shared index of this call of a `counted` rule (the Redis side of `claim`, not yet noted)."""
        key = self._link.key("counts", scope)
        n = int(await self._link.acall(lambda c: run_script(c, self._claim, [key], self._args(rule))))
        return None if n < 0 else n

    @staticmethod
    def _args(rule: Rule) -> list[str]:
        return [rule.name, "" if rule.times is None else str(rule.times)]

    def release(self, scope: str, rule: Rule) -> None:
        rule._release()
        if counted(rule):
            self.give_back(scope, rule.name)

    def give_back(self, scope: str, name: str) -> None:
        """Return one call of rule `name` to the shared count (this process's own count is untouched)."""
        key = self._link.key("counts", scope)
        # the draw failed anyway; a lost give-back leaves a gap in the indices, never a repeat
        with contextlib.suppress(StateUnavailable):
            self._link.call(lambda c: self._release(keys=[key], args=[name], client=c))

    def reset(self) -> None:
        pattern = self._link.key("counts", "*")

        def drop(c: Any) -> None:
            keys = list(c.scan_iter(match=pattern, count=500))
            if keys:
                c.delete(*keys)

        self._link.call(drop)


class RedisResponseStore:
    """`previous_response_id` conversations in Redis, each expiring `ttl` seconds after it was stored."""

    def __init__(self, link: RedisLink, ttl: int = DEFAULT_TTL) -> None:
        if ttl < 1:
            raise ConfigError(f"--state-ttl must be >= 1 second, got {ttl}")
        self._link = link
        self.ttl = ttl

    def put(self, response_id: str, conversation: tuple[Message, ...]) -> None:
        """Keep `conversation`: written through the asyncio client when the server asks for it (the write
        joins `stored`, awaited before the answer goes out), else at once."""
        data = json.dumps([m.model_dump(mode="json") for m in conversation], separators=(",", ":"))
        key = self._link.key("response", response_id)
        pending = stored.get()
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # a worker thread: no loop to write from
            pending = None
        if pending is None:
            self._link.call(lambda c: c.set(key, data, ex=self.ttl))
            return

        async def write() -> None:
            await self._link.acall(lambda c: c.set(key, data, ex=self.ttl))

        pending.append(loop.create_task(write()))

    def get(self, response_id: str) -> tuple[Message, ...] | None:
        found = fetched.get()
        if found is not None and response_id in found:
            conversation = found[response_id]
            if isinstance(conversation, StateUnavailable):
                raise conversation
            return conversation
        key = self._link.key("response", response_id)
        return _conversation(self._link.call(lambda c: c.get(key)))

    async def aget(self, response_id: str) -> tuple[Message, ...] | None:
        key = self._link.key("response", response_id)
        return _conversation(await self._link.acall(lambda c: c.get(key)))

    def __contains__(self, response_id: object) -> bool:
        key = self._link.key("response", str(response_id))
        return bool(self._link.call(lambda c: c.exists(key)))

    def __len__(self) -> int:
        pattern = self._link.key("response", "*")
        return self._link.call(lambda c: sum(1 for _ in c.scan_iter(match=pattern, count=500)))

    def clear(self) -> None:
        pattern = self._link.key("response", "*")

        def drop(c: Any) -> None:
            keys = list(c.scan_iter(match=pattern, count=500))
            if keys:
                c.delete(*keys)

        self._link.call(drop)

    def __repr__(self) -> str:
        return f"RedisResponseStore({self._link.where}, ttl={self.ttl})"


def _conversation(data: bytes | None) -> tuple[Message, ...] | None:
    return None if data is None else tuple(Message.model_validate(m) for m in json.loads(data))


class RedisState:
    """`--state redis://HOST:PORT/DB`: counters, journal and Responses store in one shared Redis."""

    kind = "redis"

    def __init__(
        self, url: str, *, ttl: int = DEFAULT_TTL, timeout: float = DEFAULT_TIMEOUT, memo_us: int = 0
    ) -> None:
        from .memo import SharedMemo

        self.link = RedisLink(url, timeout=timeout)
        self._counter = RedisCounter(self.link)
        self._responses = RedisResponseStore(self.link, ttl)
        self.memo = SharedMemo(self.link, memo_us, ttl) if memo_us > 0 else None
        """Answers that took at least `memo_us` µs to draw, shared by every replica (`state.memo`)."""

    @property
    def counter(self) -> RedisCounter:
        return self._counter

    def journal(self, maxlen: int) -> RedisJournal:
        from ..journal.redis import RedisJournal

        return RedisJournal(self.link, maxlen)

    def responses(self) -> RedisResponseStore:
        return self._responses

    def check(self) -> str | None:
        return self.link.check()

    async def acheck(self) -> str | None:
        return await self.link.acheck()

    def close(self) -> None:
        self.link.close()

    def __repr__(self) -> str:
        return f"RedisState({self.link.where})"
