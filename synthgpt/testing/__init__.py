"""Testing helpers: the pytest plugin's building blocks, usable without pytest too.

    from synthgpt.testing import InProcessTransport2, openai_client, SynthGPTFixture, LiveServer

The syrupy extensions live in `synthgpt.testing.snapshots` (syrupy is an optional dependency) and the
fixtures in `synthgpt.testing.plugin` (pytest loads it through the `pytest11` entry point).

Names are imported on first use: pytest imports the plugin in every session, and a session that uses
no synthgpt fixture should not pay for httpx, the server or the SDKs.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .assertions import CallAssertions, CallList, SynthGPTFixture
    from .clients import (
        BASE_URL,
        anthropic_client,
        cohere_client,
        gemini_client,
        http_client_for,
        ollama_client,
        openai_client,
    )
    from .live_server import LiveServer
    from .transport import (
        AsyncInProcessTransport,
        AsyncInProcessTransport2,
        InProcessTransport,
        InProcessTransport2,
        as_asgi_app,
    )

_HOME = {
    "AsyncInProcessTransport": "transport",
    "AsyncInProcessTransport2": "transport",
    "BASE_URL": "clients",
    "CallAssertions": "assertions",
    "CallList": "assertions",
    "InProcessTransport": "transport",
    "InProcessTransport2": "transport",
    "LiveServer": "live_server",
    "SynthGPTFixture": "assertions",
    "anthropic_client": "clients",
    "as_asgi_app": "transport",
    "cohere_client": "clients",
    "gemini_client": "clients",
    "http_client_for": "clients",
    "ollama_client": "clients",
    "openai_client": "clients",
}

__all__ = [
    "BASE_URL",
    "AsyncInProcessTransport",
    "AsyncInProcessTransport2",
    "CallAssertions",
    "CallList",
    "InProcessTransport",
    "InProcessTransport2",
    "LiveServer",
    "SynthGPTFixture",
    "anthropic_client",
    "as_asgi_app",
    "cohere_client",
    "gemini_client",
    "http_client_for",
    "ollama_client",
    "openai_client",
]


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module 'synthgpt.testing' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{home}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
