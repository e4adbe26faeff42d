"""Reasoning text on the Chat Completions wire, as OpenAI-compatible servers send it.

OpenAI's Chat API shows no reasoning, only its token count. vLLM, DeepSeek, OpenRouter and others return
the text as `message.reasoning_content` (streamed as `delta.reasoning_content`, before the content) when
the request asks for it — `chat_template_kwargs: {enable_thinking: true}` (vLLM, Qwen), `include_reasoning:
true` or a `reasoning` object (OpenRouter) — or when the model is a reasoning model (deepseek-reasoner,
DeepSeek R1, QwQ, Qwen3, …). OpenAI model names keep OpenAI's behaviour unless the request asks.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ...model import ModelRequest

__all__ = ["chat_reasoning", "shows_reasoning"]

_OPENAI_NAMES = re.compile(r"^(?:gpt-|o\d|chatgpt|codex|computer-use|text-|davinci|babbage)", re.IGNORECASE)
_REASONING_MODELS = re.compile(
    r"deepseek-(?:reasoner|r1)|(?:^|[/-])r1(?:$|[-:])|qwq|qwen3(?!.*instruct)|thinking|reasoner|magistral",
    re.IGNORECASE,
)


_ASKS = frozenset({"chat_template_kwargs", "include_reasoning", "reasoning"})
"""The fields `_thinking_flag` reads: without any of them it says None."""


def _thinking_flag(body: Mapping[str, Any]) -> bool | None:
    """What the request says about showing reasoning: True asked, False refused, None silent."""
    kwargs = body.get("chat_template_kwargs")
    if isinstance(kwargs, dict):
        for key in ("enable_thinking", "thinking"):
            if isinstance(kwargs.get(key), bool):
                return bool(kwargs[key])
    if isinstance(body.get("include_reasoning"), bool):
        return bool(body["include_reasoning"])
    reasoning = body.get("reasoning")
    if isinstance(reasoning, dict):
        return reasoning.get("enabled", True) is not False and reasoning.get("exclude") is not True
    return None


_REASONS: dict[str, bool] = {}
"""Model name -> whether it reasons by default; every request names its model, most name one of a few."""


def _reasons_by_default(model: str) -> bool:
    known = _REASONS.get(model)
    if known is None:
        known = _REASONING_MODELS.search(model) is not None and _OPENAI_NAMES.match(model) is None
        if len(_REASONS) >= 1024:  # a client inventing names cannot grow it
            _REASONS.clear()
        _REASONS[model] = known
    return known


def chat_reasoning(body: Mapping[str, Any], model: str, effort: str | None) -> dict[str, Any] | None:
    """The neutral reasoning request of a Chat body: `reasoning_effort`, an explicit ask, or a reasoning
    model's default; None when no reasoning happens."""
    flag = None if _ASKS.isdisjoint(body) else _thinking_flag(body)  # most bodies name none of them
    if effort not in (None, "none"):
        return {"effort": effort}
    reasoning_model = _reasons_by_default(model)
    if flag is True or (flag is None and effort is None and reasoning_model):
        return {}
    return None


def shows_reasoning(request: ModelRequest) -> bool:
    """Whether a Chat answer carries its reasoning text (`reasoning_content`), not only its token count."""
    if request.reasoning is None:
        return False
    flag = _thinking_flag(request.extra)
    if flag is not None:
        return flag
    return _OPENAI_NAMES.match(request.model) is None
