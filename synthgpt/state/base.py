"""The seams of state shared between server replicas: rule call counters and the Responses store.

Everything else an answer depends on (seed, rules, request, clock reading) is the same on every replica
by construction; these two are the state that lives where the calls land. `MemoryState` keeps them in the
process (the default, and the library's only mode); `RedisState` (redis.py) keeps them in one Redis that
every replica shares, so the n-th call of a `sequence` gets step n on whichever replica it lands.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from ..codec.openai_responses.store import ConversationStore
    from ..journal import CallJournal
    from ..rules.rule import Rule

__all__ = ["CallCounter", "MemoryState", "StateStore"]


@runtime_checkable
class CallCounter(Protocol):
    """Counts the calls of rules, within a rule set (`scope`, its fingerprint): the n-th claim gets n."""

    def claim(self, scope: str, rule: Rule) -> int | None:
        """The 0-based index of this call, or None when a `times` rule has no calls left. Raises
        `StateUnavailable` when the count cannot be read: the caller must not guess it."""
        ...

    def release(self, scope: str, rule: Rule) -> None:
        """Give back a claimed call whose draw failed (best effort)."""
        ...

    def reset(self) -> None:
        """Every rule of every rule set starts counting from 0 again."""
        ...


class StateStore(Protocol):
    """Where a server keeps what its replicas share: see `synthgpt.state`."""

    kind: str
    """`memory` or `redis`: shown by `/readyz`."""

    @property
    def counter(self) -> CallCounter | None:
        """None: each rule counts its own calls in this process."""
        ...

    def journal(self, maxlen: int) -> CallJournal | None:
        """A journal every replica writes to, or None for the process's own."""
        ...

    def responses(self) -> ConversationStore | None:
        """The `previous_response_id` store every replica reads, or None for the codec's own."""
        ...

    def check(self) -> str | None:
        """None when the store answers, else why not."""
        ...

    async def acheck(self) -> str | None:
        """`check` without blocking the event loop (for `/readyz`)."""
        ...

    def close(self) -> None: ...


class MemoryState:
    """The default: nothing shared, every process counts and keeps its own (no round trips at all)."""

    kind = "memory"

    @property
    def counter(self) -> CallCounter | None:
        return None

    def journal(self, maxlen: int) -> CallJournal | None:
        return None

    def responses(self) -> ConversationStore | None:
        return None

    def check(self) -> str | None:
        return None

    async def acheck(self) -> str | None:
        return None

    def close(self) -> None:
        pass

    def __repr__(self) -> str:
        return "MemoryState()"
