"""What a request leaves its answer, decided before any rule is tried: its prompt's tokens, the output-token
limit (the request's `max_tokens`, the model's profile, the context window) and whether the model thinks
unasked."""

from __future__ import annotations

from typing import Final, NamedTuple

from ..model import ModelRequest, Tool
from ..profiles import ModelProfile, output_limit, profile_for
from ..request_checks import check_answerable
from ..seeding import canonical_json
from ..tokens import count_message_tokens, count_tokens

__all__ = ["Budget", "budget_for", "prompt_tokens"]


class Budget(NamedTuple):
    """What a request leaves an answer: its prompt's tokens, the output-token limit, and whether the
    model's profile thinks unasked."""

    prompt_tokens: int
    limit: int | None
    thinks: bool


def budget_for(req: ModelRequest, profiles: tuple[ModelProfile, ...], window: int | None) -> Budget:
    """`req`'s Budget; raises what refuses the call before any rule is tried (a request with nothing to
    answer, a context window or profile it does not fit)."""
    check_answerable(req)  # the same refusals as over HTTP
    tokens = prompt_tokens(req)
    profile = profile_for(profiles, req.model) if profiles else None
    limit = output_limit(req, tokens, profile, window)
    return Budget(tokens, limit, profile is not None and profile.reasoning)


def prompt_tokens(req: ModelRequest) -> int:
    """The prompt's tokens: each message (its text and tool calls) with the per-message overhead, or the
    embeddings inputs, plus each declared tool."""
    texts: list[str] = []
    for m in req.messages:
        texts.append(m.content)
        if m.tool_calls:  # (a generator made for every message cost more than counting a short one)
            texts.extend(tc.name + tc.arguments for tc in m.tool_calls)
    if req.inputs:
        texts.extend(req.inputs)
    if req.messages:
        # a conversation resends its earlier messages on every turn: their counts are remembered
        n = count_message_tokens(texts, _known_tokens if len(texts) >= _CONVERSATION else None)
    else:
        n = sum(count_tokens(t) for t in req.inputs)
    if req.tools:
        interned: bool = req.__pydantic_private__["_interned"]  # type: ignore[index]
        for t in req.tools:
            n += _kept_tool_tokens(t) if interned else _tool_tokens(t)
    return n


def _tool_tokens(tool: Tool) -> int:
    """A declared tool's tokens: its name, description and parameters' schema, and its overhead."""
    return 8 + _known_tokens(tool.name + " " + tool.description + " " + canonical_json(tool.parameters))


def _kept_tool_tokens(tool: Tool) -> int:
    """`_tool_tokens`, remembered for the tool object: the decoders hand every request that declares the
    same tool the same `Tool` (`codec.interned`, `ModelRequest._interned`), and writing its parameters'
    schema out to count it was most of the count (~3 µs a tool)."""
    kept = _TOOLS_COUNTED.get(id(tool))
    if kept is not None and kept[0] is tool:
        return kept[1]
    n = _tool_tokens(tool)
    if len(_TOOLS_COUNTED) >= _TOOLS_COUNTED_MAX:
        _TOOLS_COUNTED.clear()
    _TOOLS_COUNTED[id(tool)] = (tool, n)  # the entry holds the tool: its id stays its own while kept
    return n


_TOOLS_COUNTED: dict[int, tuple[Tool, int]] = {}
_TOOLS_COUNTED_MAX: Final = 1024


_CONVERSATION: Final = 8
"""From this many texts, a prompt's message counts are remembered (`_known_tokens`); a short prompt,
mostly new each time, is counted as it is."""
_KNOWN: dict[str, int] = {}
_KNOWN_TEXT_MAX: Final = 4096
_KNOWN_CHARS_MAX: Final = 512 * 1024
_kept_chars = 0


def _known_tokens(text: str) -> int:
    """`count_tokens(text)`, remembered for the texts a server sees again and again: the tools an agent
    declares and the messages it resends on every call of its loop (20 tools took ~45 µs to count per
    request, 30 turns' messages ~100 µs). At most 512 K characters of texts are kept (then the memory
    starts over); a text over 4 K is counted every time."""
    global _kept_chars
    if len(text) > _KNOWN_TEXT_MAX:
        return count_tokens(text)
    n = _KNOWN.get(text)
    if n is None:
        n = count_tokens(text)
        if _kept_chars + len(text) > _KNOWN_CHARS_MAX:
            _KNOWN.clear()
            _kept_chars = 0
        _KNOWN[text] = n
        _kept_chars += len(text)
    return n
