"""Testing helpers: the pytest plugin's building blocks, usable without pytest too.

    from synthgpt.testing import InProcessTransport2, openai_client, SSESnapshotExtension

The syrupy extensions live in `synthgpt.testing.snapshots` (they need syrupy, an optional dependency)
and the pytest fixtures in `synthgpt.testing.plugin` (loaded by pytest on its own).
"""

from __future__ import annotations

from .assertions import CallAssertions, CallList, SynthGPTFixture
from .clients import BASE_URL, anthropic_client, http_client_for, openai_client
from .live_server import LiveServer
from .transport import AsyncInProcessTransport, InProcessTransport, as_asgi_app

__all__ = [
    "BASE_URL",
    "AsyncInProcessTransport",
    "CallAssertions",
    "CallList",
    "InProcessTransport",
    "LiveServer",
    "SynthGPTFixture",
    "anthropic_client",
    "as_asgi_app",
    "http_client_for",
    "openai_client",
]

try:  # httpx2 (openai>=3, anthropic>=2) is optional: older SDKs use httpx only
    from .transport import AsyncInProcessTransport2, InProcessTransport2
except ImportError:  # pragma: no cover
    pass
else:
    __all__ += ["AsyncInProcessTransport2", "InProcessTransport2"]
