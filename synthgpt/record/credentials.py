"""What the proxy sends upstream in place of the client's headers, and which values are secrets.

Forwarded: every header but hop-by-hop ones, `host` and `content-length` (the client makes them anew) and
`accept-encoding` (asked for as `identity`, so the answer can be read as it passes). With `--api-key-env`,
the client's credentials are dropped whatever they were and the key goes in the provider's own header:
`Authorization: Bearer` (OpenAI, Ollama, Cohere, Bedrock API keys), `api-key` (Azure OpenAI's `/openai/`
routes), `x-api-key` (Anthropic), `x-goog-api-key` (Gemini, instead of a `?key=` query parameter).
"""

from __future__ import annotations

from collections.abc import Mapping

from ..codec.anthropic.encode import MessagesCodec
from ..codec.gemini.embed import GeminiEmbedCodec
from ..codec.gemini.encode import GeminiCodec
from ..codec.headers import CREDENTIAL_HEADERS  # never recorded, and replaced by `--api-key-env`'s key

__all__ = ["CREDENTIAL_HEADERS", "forward_headers", "request_secrets"]

_HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-connection",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "host",
        "content-length",
        "accept-encoding",
    }
)


def _key_header(codec: object, path: str, key: str) -> tuple[str, str]:
    if isinstance(codec, MessagesCodec) or path.startswith("/v1/messages"):
        return "x-api-key", key
    if isinstance(codec, GeminiCodec | GeminiEmbedCodec) or path.startswith("/v1beta/"):
        return "x-goog-api-key", key
    if path.startswith("/openai/"):
        return "api-key", key
    return "authorization", f"Bearer {key}"


def forward_headers(
    headers: Mapping[str, str], codec: object, path: str, api_key: str | None
) -> list[tuple[str, str]]:
    kept = [(k, v) for k, v in headers.items() if k.lower() not in _HOP_BY_HOP]
    if api_key is not None:
        kept = [(k, v) for k, v in kept if k.lower() not in CREDENTIAL_HEADERS]
        kept.append(_key_header(codec, path, api_key))
    kept.append(("accept-encoding", "identity"))
    return kept


def request_secrets(headers: Mapping[str, str], query: Mapping[str, str], api_key: str | None) -> set[str]:
    """Every credential value the request carried (and the proxy's own key): what the writer blanks out."""
    found: set[str] = set()
    for name, value in headers.items():
        if name.lower() in CREDENTIAL_HEADERS and value:
            found.add(value)
            scheme, _, token = value.partition(" ")
            if token and scheme.lower() in ("bearer", "basic", "token"):
                found.add(token.strip())
    if query.get("key"):
        found.add(query["key"])
    if api_key:
        found.add(api_key)
    return found
