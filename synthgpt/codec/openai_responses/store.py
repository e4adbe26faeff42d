"""Earlier Responses API answers, kept so `previous_response_id` can continue a conversation.

One store per codec instance (so per app): never a module global, so two apps in one process do not see
each other's conversations. Bounded, least recently used first out, safe across threads. Conversations are
kept packed as the journal keeps its older records (`journal.packing.pack_messages`): a thousand short
ones took 1.76 MB as live messages, 0.64 MB packed; each is read back equal, as new objects. One that
cannot be packed at all (a message built in code holding a lambda) is kept as it is, as the journal does.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Protocol

from ...journal.packing import pack_messages, unpack_messages
from ...model import Message

__all__ = ["ConversationStore", "ResponseStore"]


class ConversationStore(Protocol):
    """What the Responses codec asks of a store: this module's `ResponseStore` (in the process), or
    `synthgpt.state.redis.RedisResponseStore` (shared by replicas; raises `StateUnavailable` when away)."""

    def put(self, response_id: str, conversation: tuple[Message, ...]) -> None: ...

    def get(self, response_id: str) -> tuple[Message, ...] | None: ...


class ResponseStore:
    """response id -> the conversation up to and including that response (instructions excluded)."""

    def __init__(self, maxsize: int = 1000) -> None:
        if maxsize < 1:
            raise ValueError(f"ResponseStore maxsize must be >= 1, got {maxsize}")
        self.maxsize = maxsize
        self._items: OrderedDict[str, bytes | tuple[Message, ...]] = OrderedDict()
        self._lock = threading.Lock()

    def put(self, response_id: str, conversation: tuple[Message, ...]) -> None:
        kept: bytes | tuple[Message, ...]
        try:
            kept = pack_messages(conversation)
        except Exception:  # what pickle refuses too: kept live, rather than failing the answer
            kept = conversation
        with self._lock:
            self._items[response_id] = kept
            self._items.move_to_end(response_id)
            while len(self._items) > self.maxsize:
                self._items.popitem(last=False)

    def get(self, response_id: str) -> tuple[Message, ...] | None:
        with self._lock:
            kept = self._items.get(response_id)
            if kept is None:
                return None
            self._items.move_to_end(response_id)
        return kept if isinstance(kept, tuple) else unpack_messages(kept)

    def __contains__(self, response_id: object) -> bool:
        with self._lock:
            return response_id in self._items

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()

    def __repr__(self) -> str:
        return f"ResponseStore({len(self)}/{self.maxsize})"
