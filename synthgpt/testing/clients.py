"""Official SDK clients wired to a MockGPT (or any ASGI app) through the in-process transports.

    client = openai_client(mock)                 # openai.OpenAI, no socket
    client = anthropic_client(mock, async_=True)  # anthropic.AsyncAnthropic
    client = gemini_client(mock)                  # google.genai.Client (`.aio` works too)
    client = ollama_client(mock)                  # ollama.Client
    client = cohere_client(mock)                  # cohere.ClientV2

Each SDK's own default http client class is used, with the in-process transport of the matching httpx
flavour (`httpx2` for openai>=3 / anthropic>=2, `httpx` before), so the SDK's timeouts and headers stay
as they are in production. Retries are off by default (`max_retries=0`): an error trigger should fail
the test at once, not after the SDK's back-off; pass `max_retries=` to test retry handling.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, overload

from .transport import AsyncInProcessTransport, InProcessTransport, as_asgi_app

if TYPE_CHECKING:
    import anthropic
    import cohere
    import ollama
    import openai
    from google import genai

__all__ = [
    "BASE_URL",
    "anthropic_client",
    "cohere_client",
    "gemini_client",
    "http_client_for",
    "ollama_client",
    "openai_client",
]

BASE_URL = "http://synthgpt.test"
"""The host in-process clients talk to; nothing resolves it, the transport answers."""

API_KEY = "sk-synthgpt-test"


def _is_httpx2(cls: type) -> bool:
    try:
        import httpx2
    except ImportError:
        return False
    return issubclass(cls, httpx2.Client | httpx2.AsyncClient)


def http_client_for(sdk: Any, target: Any, *, async_: bool = False) -> Any:
    """An instance of `sdk.DefaultHttpxClient` (or the async one) whose transport serves `target`."""
    cls = sdk.DefaultAsyncHttpxClient if async_ else sdk.DefaultHttpxClient
    app = as_asgi_app(target)
    if _is_httpx2(cls):
        from .transport import AsyncInProcessTransport2, InProcessTransport2

        return cls(transport=AsyncInProcessTransport2(app) if async_ else InProcessTransport2(app))
    return cls(transport=AsyncInProcessTransport(app) if async_ else InProcessTransport(app))


@overload
def openai_client(target: Any, *, async_: Literal[False] = False, **kwargs: Any) -> openai.OpenAI: ...
@overload
def openai_client(target: Any, *, async_: Literal[True], **kwargs: Any) -> openai.AsyncOpenAI: ...
def openai_client(target: Any, *, async_: bool = False, **kwargs: Any) -> openai.OpenAI | openai.AsyncOpenAI:
    """An `openai.OpenAI` (or `AsyncOpenAI` with `async_=True`) answered by `target`."""
    import openai

    kwargs.setdefault("api_key", API_KEY)
    kwargs.setdefault("base_url", BASE_URL + "/v1")
    kwargs.setdefault("max_retries", 0)
    http_client = http_client_for(openai, target, async_=async_)
    if async_:
        return openai.AsyncOpenAI(http_client=http_client, **kwargs)
    return openai.OpenAI(http_client=http_client, **kwargs)


@overload
def anthropic_client(
    target: Any, *, async_: Literal[False] = False, **kwargs: Any
) -> anthropic.Anthropic: ...
@overload
def anthropic_client(target: Any, *, async_: Literal[True], **kwargs: Any) -> anthropic.AsyncAnthropic: ...
def anthropic_client(
    target: Any, *, async_: bool = False, **kwargs: Any
) -> anthropic.Anthropic | anthropic.AsyncAnthropic:
    """An `anthropic.Anthropic` (or `AsyncAnthropic` with `async_=True`) answered by `target`."""
    import anthropic

    kwargs.setdefault("api_key", API_KEY)
    kwargs.setdefault("base_url", BASE_URL)
    kwargs.setdefault("max_retries", 0)
    http_client = http_client_for(anthropic, target, async_=async_)
    if async_:
        return anthropic.AsyncAnthropic(http_client=http_client, **kwargs)
    return anthropic.Anthropic(http_client=http_client, **kwargs)


def gemini_client(target: Any, **kwargs: Any) -> genai.Client:
    """A `google.genai.Client` answered by `target`, sync and `.aio` alike, with the SDK's retries off."""
    import httpx2
    from google import genai
    from google.genai import types

    from .transport import AsyncInProcessTransport2, InProcessTransport2

    app = as_asgi_app(target)
    options = types.HttpOptions(
        base_url=BASE_URL,
        httpx_client=httpx2.Client(transport=InProcessTransport2(app)),
        httpx_async_client=httpx2.AsyncClient(transport=AsyncInProcessTransport2(app)),
        retry_options=types.HttpRetryOptions(attempts=1),
    )
    kwargs.setdefault("api_key", API_KEY)
    return genai.Client(http_options=options, **kwargs)


def ollama_client(target: Any, **kwargs: Any) -> ollama.Client:
    """An `ollama.Client` answered by `target` (the Ollama client has no retries)."""
    import ollama

    kwargs.setdefault("host", BASE_URL)
    return ollama.Client(transport=InProcessTransport(as_asgi_app(target)), **kwargs)


def cohere_client(target: Any, **kwargs: Any) -> cohere.ClientV2:
    """A `cohere.ClientV2` answered by `target`. Cohere's client retries 429 and 5xx answers; pass
    `request_options={"max_retries": 0}` per call to see the first one."""
    import cohere
    import httpx

    kwargs.setdefault("api_key", API_KEY)
    kwargs.setdefault("base_url", BASE_URL)
    http = httpx.Client(transport=InProcessTransport(as_asgi_app(target)))
    return cohere.ClientV2(httpx_client=http, **kwargs)
