"""Model profiles: what a model can hold and say, and whether it thinks without being asked.

A rule file's `models:` entries may be profiles (`{name: gpt-4o, context_window: 128000,
max_output_tokens: 16384}`), and `serve --context-window N` (`MockGPT(context_window=N)`) gives every
model a window. `output_limit` applies them to one request, the way the APIs synthgpt stands in for do:

- a `max_tokens` above the model's maximum output is refused (OpenAI: "max_tokens is too large"), or with
  `overflow: clamp` cut to that maximum (vLLM);
- a prompt plus `max_tokens` beyond the window is refused (`context_length_exceeded`), or with `overflow:
  clamp` the output is cut to the room left; a prompt that leaves no room is refused either way;
- without `max_tokens`, the answer stops where the room ends.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .errors import ContextWindowExceeded, RequestError, RuleError
from .model import ModelRequest, request_error_from

__all__ = ["ModelProfile", "as_profiles", "output_limit", "profile_for"]


class ModelProfile(BaseModel):
    """One model's (or, with a glob name, a family's) limits and habits."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(min_length=1, description="The model name, or a glob (`gpt-4o*`).")
    context_window: int | None = Field(
        default=None, ge=1, description="Tokens the prompt and the answer share; none: unlimited."
    )
    max_output_tokens: int | None = Field(
        default=None, ge=1, description="The longest answer the model writes, in tokens; none: unlimited."
    )
    reasoning: bool = Field(
        default=False, description="Thinks by default: answers start with reasoning even when none is asked."
    )
    overflow: Literal["refuse", "clamp"] = Field(
        default="refuse",
        description="A max_tokens beyond the room: `refuse` it (OpenAI, Anthropic) or `clamp` it (vLLM).",
    )

    def matches(self, model: str) -> bool:
        return self.name == model or fnmatch.fnmatchcase(model, self.name)


def as_profiles(
    entries: Iterable[str | ModelProfile | Mapping[str, Any]],
) -> tuple[tuple[str, ...], tuple[ModelProfile, ...]]:
    """(model names, profiles) of a `models` list of names, profiles and profile dicts."""
    names: list[str] = []
    profiles: list[ModelProfile] = []
    for i, entry in enumerate(entries):
        if isinstance(entry, Mapping):
            try:
                entry = ModelProfile.model_validate(dict(entry))
            except ValidationError as exc:
                raise RuleError(f"models[{i}]: {request_error_from(exc).message}") from None
        if isinstance(entry, ModelProfile):
            profiles.append(entry)
            entry = entry.name
        if not isinstance(entry, str):
            raise RuleError(f"models[{i}] must be a model name or a profile, got {type(entry).__name__}")
        if entry not in names:
            names.append(entry)
    return tuple(names), tuple(profiles)


def profile_for(profiles: Sequence[ModelProfile], model: str) -> ModelProfile | None:
    """The profile of `model`: one with its exact name, else the first whose glob matches."""
    exact = next((p for p in profiles if p.name == model), None)
    return exact or next((p for p in profiles if p.matches(model)), None)


def output_limit(
    req: ModelRequest, prompt_tokens: int, profile: ModelProfile | None, window: int | None
) -> int | None:
    """The output-token limit `req` is answered within, or the refusal of its `max_tokens`."""
    limit = req.max_output_tokens
    clamp = profile is not None and profile.overflow == "clamp"
    if profile is not None and profile.context_window is not None:
        window = profile.context_window
    most = profile.max_output_tokens if profile is not None else None
    if most is not None and limit is not None and limit > most:
        if not clamp:
            raise _too_large(req, limit, most)
        limit = most
    if limit is None:
        limit = most  # the model's longest answer, when the request sets none
    if window is not None:
        room = window - prompt_tokens
        # a prompt that fills the window leaves no room for even one output token
        if room < 1 or (limit is not None and limit > room and not clamp):
            raise ContextWindowExceeded(prompt_tokens, limit or 0, window)
        limit = room if limit is None else min(limit, room)
    return limit


def _too_large(req: ModelRequest, limit: int, most: int) -> RequestError:
    """The refusal of a `max_tokens` above the model's maximum, in the words of the API asked."""
    if req.api == "messages":
        return RequestError(
            f"max_tokens: {limit} > {most}, which is the maximum allowed number of output tokens for "
            f"{req.model}",
            "max_tokens",
            code="invalid_value",
        )
    name = "max_output_tokens" if req.api in ("responses", "python") else "max_tokens"
    return RequestError(
        f"{name} is too large: {limit}. This model supports at most {most} completion tokens, whereas you "
        f"provided {limit}.",
        name,
        code="invalid_value",
    )
