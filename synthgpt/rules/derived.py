"""Values derived from a request that many matchers read, computed once per request.

With thousands of rules, each `last_user(…)` rule used to find the last user message again and lower-case
it again; here each value is kept for the request (or text) it was last computed for. One slot per value,
keyed by object identity and holding that object, so a slot is never mistaken for a new object that took
a collected one's id. Replacing a slot is one assignment of a tuple: threads racing on it at worst
compute a value twice.
"""

from __future__ import annotations

from ..model import Message, ModelRequest

__all__ = ["last_user_message", "lowered", "tool_rounds"]

_NO_MESSAGES: tuple[Message, ...] = ()
_last_user: tuple[tuple[Message, ...], str | None] = (_NO_MESSAGES, None)
_lowered: tuple[str, str] = ("", "")
_rounds: tuple[tuple[Message, ...], int] = (_NO_MESSAGES, 0)


def last_user_message(request: ModelRequest) -> str | None:
    """The last user message's text, or None when there is no user message (`request.last_user` says
    "" then, which a test on the text could not tell from an empty message)."""
    global _last_user
    messages = request.messages
    slot = _last_user
    if slot[0] is messages:
        return slot[1]
    text = None
    for m in reversed(messages):
        if m.role == "user":
            text = m.content
            break
    _last_user = (messages, text)
    return text


def lowered(text: str) -> str:
    """`text.lower()`, kept for the last text asked about (every case-insensitive rule reads the same one)."""
    global _lowered
    slot = _lowered
    if slot[0] is text:
        return slot[1]
    low = text.lower()
    _lowered = (text, low)
    return low


def tool_rounds(request: ModelRequest) -> int:
    """How many times the assistant called tools in the current turn; parallel calls are one round.

    For `round(…)`, templates (`round`) and scripts; computed once per request's messages."""
    global _rounds
    messages = request.messages
    slot = _rounds
    if slot[0] is messages:
        return slot[1]
    rounds = 0
    in_round = False
    for m in request.current_turn:
        calls = m.role == "assistant" and bool(m.tool_calls)
        if calls and not in_round:
            rounds += 1
        in_round = calls or (in_round and m.role == "assistant")
    _rounds = (messages, rounds)
    return rounds
