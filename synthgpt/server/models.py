"""`GET /v1/models` and friends, and the provider shape of answers that belong to no API route.

OpenAI, Anthropic and Gemini clients share `/v1/models`, so the shape of a models list, of a 404 for an
unknown path and of a 405 is picked from the request headers by the first matching `Dialect` in `DIALECTS`
(OpenAI is last and matches everything). Another provider is one more Dialect in front of it.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from ..codec.anthropic.encode import MessagesCodec, anthropic_model_info, anthropic_models_page
from ..codec.base import WireCodec
from ..codec.gemini.encode import GeminiCodec, gemini_model_info, gemini_models_page
from ..codec.openai_chat.encode import ChatCodec
from ..engine import MockGPT
from ..errors import RequestError
from ..profiles import profile_for
from ..rules.matchers import All, Any_, Matcher, Model
from .responses import error_response, json_response, request_id
from .routes import model_not_found

__all__ = [
    "ANTHROPIC",
    "DIALECTS",
    "GEMINI",
    "MODEL_CREATED",
    "OPENAI",
    "Dialect",
    "dialect_for",
    "get_model",
    "list_models",
    "rule_named_models",
    "served_models",
]

MODEL_CREATED = 1_704_067_200
"""`created` of every listed model (2024-01-01): fixed, like every other value in an answer."""

OPENAI_DEFAULT_MODELS = (
    "gpt-4o",
    "gpt-4o-mini",
    "gpt-4.1",
    "gpt-4.1-mini",
    "gpt-5",
    "gpt-5-mini",
    "o3",
    "o4-mini",
    "text-embedding-3-small",
    "text-embedding-3-large",
)


@dataclass(frozen=True, slots=True)
class Dialect:
    """How to answer a client outside the API routes."""

    name: str
    detect: Callable[[Mapping[str, str]], bool]
    """Does a request with these (lower-cased) headers come from this provider's clients?"""
    codec: WireCodec
    """Error bodies and per-answer headers."""
    default_models: tuple[str, ...]
    """Listed when the rules do not restrict the models."""
    model_list: Callable[[Sequence[str], Mapping[str, str]], dict[str, Any]]
    """The list body for these ids, given the query parameters (Anthropic pages with them)."""
    model_item: Callable[[str], dict[str, Any]]


def _openai_model(model_id: str) -> dict[str, Any]:
    return {"id": model_id, "object": "model", "created": MODEL_CREATED, "owned_by": "synthgpt"}


def _openai_model_list(ids: Sequence[str], params: Mapping[str, str]) -> dict[str, Any]:
    # not paginated (WIRE.md §6): the SDK reads `data` once
    return {"object": "list", "data": [_openai_model(i) for i in ids]}


OPENAI = Dialect("openai", lambda headers: True, ChatCodec(), OPENAI_DEFAULT_MODELS, _openai_model_list,
                 _openai_model)  # fmt: skip

ANTHROPIC_DEFAULT_MODELS = ("claude-opus-4-5", "claude-sonnet-4-5", "claude-haiku-4-5")

# Anthropic clients always send `anthropic-version`; OpenAI clients never do.
ANTHROPIC = Dialect("anthropic", lambda headers: "anthropic-version" in headers, MessagesCodec(),
                    ANTHROPIC_DEFAULT_MODELS, anthropic_models_page,
                    anthropic_model_info)  # fmt: skip

GEMINI_DEFAULT_MODELS = (
    "gemini-2.5-pro", "gemini-2.5-flash", "gemini-2.5-flash-lite", "gemini-embedding-001"
)  # fmt: skip

# google-genai sends its key as `x-goog-api-key` and always names itself in `x-goog-api-client`
GEMINI = Dialect("gemini", lambda headers: "x-goog-api-key" in headers or "x-goog-api-client" in headers,
                 GeminiCodec(), GEMINI_DEFAULT_MODELS, gemini_models_page, gemini_model_info)  # fmt: skip

DIALECTS: tuple[Dialect, ...] = (ANTHROPIC, GEMINI, OPENAI)


def dialect_for(headers: Mapping[str, str]) -> Dialect:
    return next(d for d in DIALECTS if d.detect(headers))


def _is_glob(name: str) -> bool:
    return any(c in name for c in "*?[")


def rule_named_models(mock: MockGPT) -> list[str]:
    """Exact model names the rules ask for in their matchers (`model: gpt-x`), in rule order.

    Negated matchers (`~model(...)`) and globs name no model; callables are opaque and name none.
    """
    found: list[str] = []

    def walk(matcher: Matcher) -> None:
        if isinstance(matcher, All | Any_):
            for part in matcher.parts:
                walk(part)
            return
        if isinstance(matcher, Model) and not matcher.glob and matcher.pattern not in found:
            found.append(matcher.pattern)

    for rule in mock.rules:
        walk(rule.matcher)
    return found


def served_models(mock: MockGPT, dialect: Dialect) -> list[str]:
    """What `GET /v1/models` lists: the models the rules name, plus the dialect's default list.

    When the rule files restrict the models (`models:`), only what they serve is listed: their exact names,
    then the rule-named and default models their globs accept. Listing a model that would then answer 404
    would be a lie, and a glob itself is not a model id.
    """
    candidates = list(dict.fromkeys([*rule_named_models(mock), *dialect.default_models]))
    restricted = mock.rules.models
    if not restricted:
        return candidates
    exact = [m for m in restricted if not _is_glob(m)]
    globs = [m for m in restricted if _is_glob(m)]
    globbed = [m for m in candidates if any(fnmatch.fnmatchcase(m, g) for g in globs)]
    return list(dict.fromkeys([*exact, *globbed]))


async def list_models(request: Request) -> Response:
    mock: MockGPT = request.app.state.mock
    dialect = dialect_for(request.headers)
    params = dict(request.query_params)
    try:
        body = dialect.model_list(served_models(mock, dialect), params)
    except RequestError as exc:  # e.g. Anthropic's `limit` not an integer
        rid = request_id(mock.seed, "models", sorted(params.items()))
        return error_response(dialect.codec, exc, 400, rid)
    for item in body.get("data", ()):
        _add_profile(mock, item)
    return json_response(body)


async def get_model(request: Request) -> Response:
    mock: MockGPT = request.app.state.mock
    dialect = dialect_for(request.headers)
    model_id = str(request.path_params["model_id"]).removeprefix("models/")
    if model_id not in served_models(mock, dialect) and not _matches_rules(mock, model_id):
        rid = request_id(mock.seed, "model", model_id)
        return error_response(dialect.codec, model_not_found(model_id), 404, rid)
    return json_response(_add_profile(mock, dialect.model_item(model_id)))


def _add_profile(mock: MockGPT, item: dict[str, Any]) -> dict[str, Any]:
    """A listed model with what its profile says (`context_window`, `max_output_tokens`, `reasoning`), as
    vLLM lists `max_model_len`: clients size prompts from it. Models without a profile are listed as is."""
    profile = profile_for(mock.rules.profiles, str(item.get("id", "")))
    window = profile.context_window if profile is not None and profile.context_window else mock.context_window
    if window is not None:
        item["context_window"] = window
    if profile is not None:
        if profile.max_output_tokens is not None:
            item["max_output_tokens"] = profile.max_output_tokens
        item["reasoning"] = profile.reasoning
    return item


def _matches_rules(mock: MockGPT, model_id: str) -> bool:
    return any(fnmatch.fnmatchcase(model_id, p) for p in mock.rules.models)
