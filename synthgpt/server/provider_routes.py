"""Provider endpoints that answer without generating: token counts and model catalogues.

They belong to an API (their errors are in its shape) but draw nothing, so they are plain Starlette routes
beside the generic `API_ROUTES` handler rather than codecs: Gemini's `countTokens` counts a request's
prompt exactly as the answer's usage would (`MockGPT.prompt_tokens`); Ollama's `GET /api/tags` and
`POST /api/show` describe the models the rules serve (as `GET /v1/models` does for OpenAI's clients).
"""

from __future__ import annotations

import fnmatch
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from ..codec.common import parse_json_body
from ..codec.gemini.encode import GeminiCodec
from ..codec.gemini.request import decode_gemini_request, field, invalid
from ..codec.ollama.encode import OllamaCodec, created_at
from ..engine import MockGPT
from ..errors import RequestError
from ..model import ModelRequest
from ..seeding import HEX, derive_seed, token_from_seed
from .models import MODEL_CREATED, Dialect, served_models
from .responses import codec_headers, error_response, json_response, processing_ms, request_id
from .routes import read_body

__all__ = ["PROVIDER_ROUTES"]

_GEMINI = GeminiCodec()


def _gemini_count_body(body: Any, model: str) -> dict[str, Any]:
    if isinstance(body, dict) and field(body, "generateContentRequest") is not None:
        inner = field(body, "generateContentRequest")
        if isinstance(inner, dict):
            return decode_gemini_request({k: v for k, v in inner.items() if k != "model"}, model)
    if not isinstance(body, dict) or body.get("contents") is None:
        raise invalid("* CountTokensRequest.contents: contents is not specified", "contents")
    return decode_gemini_request({"contents": body["contents"]}, model)


async def gemini_count_tokens(request: Request) -> Response:
    mock: MockGPT = request.app.state.mock
    model = str(request.path_params["model"])
    rid = request_id(mock.seed, "countTokens", request.url.path)
    try:
        raw = await read_body(request, request.app.state.max_body_bytes)
        neutral = _gemini_count_body(parse_json_body(raw), model)
        tokens = mock.prompt_tokens(ModelRequest.from_dict(neutral))
    except RequestError as exc:
        return error_response(_GEMINI, exc, 400, rid)
    except Exception:  # BodyTooLarge, or a request the model refuses: Google's shape, never a traceback
        return error_response(_GEMINI, invalid("Request contains an invalid argument."), 400, rid)
    headers = codec_headers(_GEMINI, rid, processing_ms(rid))
    body = {"totalTokens": tokens, "promptTokensDetails": [{"modality": "TEXT", "tokenCount": tokens}]}
    return json_response(body, 200, headers)


# ------------------------------------------------------------------------------------------------ Ollama

OLLAMA_DEFAULT_MODELS = ("llama3.2", "qwen3", "gemma3", "nomic-embed-text")
_OLLAMA = OllamaCodec()


def _ollama_name(model: str) -> str:
    return model if ":" in model else model + ":latest"


def _ollama_details(model: str) -> dict[str, Any]:
    family = model.split(":")[0].rstrip("0123456789.") or model
    return {"parent_model": "", "format": "gguf", "family": family, "families": [family],
            "parameter_size": "8.0B", "quantization_level": "Q4_K_M"}  # fmt: skip


def _ollama_served(mock: MockGPT) -> list[str]:
    return served_models(mock, Dialect("ollama", lambda h: True, _OLLAMA, OLLAMA_DEFAULT_MODELS,
                                       lambda ids, p: {}, lambda m: {}))  # fmt: skip


async def ollama_tags(request: Request) -> Response:
    """`GET /api/tags`: the models the rules serve, in Ollama's list shape (fixed sizes and dates)."""
    mock: MockGPT = request.app.state.mock
    models = []
    for model in _ollama_served(mock):
        name = _ollama_name(model)
        digest = token_from_seed(derive_seed("digest", name), 64, HEX)
        details = _ollama_details(name)
        models.append({"name": name, "model": name, "modified_at": created_at(MODEL_CREATED),
                       "size": 4_920_753_328, "digest": digest, "details": details})  # fmt: skip
    return json_response({"models": models})


async def ollama_show(request: Request) -> Response:
    """`POST /api/show`: one model's details; 404 `{"error": …}` for a model the rules do not serve."""
    mock: MockGPT = request.app.state.mock
    rid = request_id(mock.seed, "show", request.url.path)
    try:
        body = parse_json_body(await read_body(request, request.app.state.max_body_bytes))
    except Exception:
        return error_response(_OLLAMA, RequestError("invalid request body"), 400, rid)
    model = body.get("model") or body.get("name") if isinstance(body, dict) else None
    if not isinstance(model, str) or not model:
        return error_response(_OLLAMA, RequestError("model is required", "model"), 400, rid)
    served = [_ollama_name(m) for m in _ollama_served(mock)]
    restricted = mock.rules.models
    if _ollama_name(model) not in served and (restricted and not any(
            fnmatch.fnmatchcase(model, p) for p in restricted)):  # fmt: skip
        return error_response(_OLLAMA, RequestError(f"model '{model}' not found"), 404, rid)
    name = _ollama_name(model)
    embeds = "embed" in name
    return json_response({
        "modelfile": f"FROM {name}\n",
        "parameters": "stop \"<|eot_id|>\"",
        "template": "{{ .Prompt }}",
        "details": _ollama_details(name),
        "model_info": {"general.architecture": _ollama_details(name)["family"],
                       "general.parameter_count": 8_030_261_248, "llama.context_length": 131072},
        "capabilities": ["embedding"] if embeds else ["completion", "tools", "thinking"],
        "modified_at": created_at(MODEL_CREATED),
    })  # fmt: skip


PROVIDER_ROUTES: tuple[BaseRoute, ...] = (
    *(Route(f"/{version}/models/{{model}}:countTokens", gemini_count_tokens, methods=["POST"])
      for version in ("v1beta", "v1")),
    Route("/api/tags", ollama_tags, methods=["GET"]),
    Route("/api/show", ollama_show, methods=["POST"]),
)  # fmt: skip
