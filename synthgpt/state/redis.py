"""State in one Redis shared by every replica: rule call counters and the Responses store.

    KEYS (prefix `synthgpt`)
    synthgpt:counts:<rule-set fingerprint>   hash: rule name -> calls claimed
    synthgpt:response:<response id>          a stored conversation (JSON), expiring after `--state-ttl`
    synthgpt:journal, synthgpt:journal:total the journal (synthgpt.journal.redis)

A claim is one atomic script (read, compare with `times`, increment), so concurrent replicas never hand out
one index twice and a `times` rule never answers more than `times` calls. The fingerprint keys counts by
the rules themselves: replicas serving the same rule files share counts, an edited rule set starts afresh.
"""

from __future__ import annotations

import contextlib
import json
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError, StateUnavailable
from ..model import Message
from .link import DEFAULT_TIMEOUT, RedisLink

if TYPE_CHECKING:
    from ..journal.redis import RedisJournal
    from ..rules.rule import Rule

__all__ = ["DEFAULT_TTL", "RedisCounter", "RedisResponseStore", "RedisState"]

DEFAULT_TTL = 3600

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
        key = self._link.key("counts", scope)
        times = "" if rule.times is None else str(rule.times)
        n = int(self._link.call(lambda c: self._claim(keys=[key], args=[rule.name, times], client=c)))
        if n < 0:
            return None
        rule._note()
        return n

    def release(self, scope: str, rule: Rule) -> None:
        rule._release()
        key = self._link.key("counts", scope)
        # the draw failed anyway; a lost give-back leaves a gap in the indices, never a repeat
        with contextlib.suppress(StateUnavailable):
            self._link.call(lambda c: self._release(keys=[key], args=[rule.name], client=c))

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
        data = json.dumps([m.model_dump(mode="json") for m in conversation], separators=(",", ":"))
        key = self._link.key("response", response_id)
        self._link.call(lambda c: c.set(key, data, ex=self.ttl))

    def get(self, response_id: str) -> tuple[Message, ...] | None:
        key = self._link.key("response", response_id)
        data = self._link.call(lambda c: c.get(key))
        if data is None:
            return None
        return tuple(Message.model_validate(m) for m in json.loads(data))

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


class RedisState:
    """`--state redis://HOST:PORT/DB`: counters, journal and Responses store in one shared Redis."""

    kind = "redis"

    def __init__(self, url: str, *, ttl: int = DEFAULT_TTL, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.link = RedisLink(url, timeout=timeout)
        self._counter = RedisCounter(self.link)
        self._responses = RedisResponseStore(self.link, ttl)

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

    def close(self) -> None:
        self.link.close()

    def __repr__(self) -> str:
        return f"RedisState({self.link.where})"
