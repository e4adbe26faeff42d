"""The HTTP server: a Starlette app answering every built-in API from one MockGPT."""

from __future__ import annotations

from .app import DEFAULT_MAX_BODY_BYTES, create_app
from .models import DIALECTS, Dialect
from .routes import API_ROUTES, ApiRoute
from .run import ServeConfig, build_mock, create_app_from_config, create_app_from_env, serve

__all__ = [
    "API_ROUTES",
    "DEFAULT_MAX_BODY_BYTES",
    "DIALECTS",
    "ApiRoute",
    "Dialect",
    "ServeConfig",
    "build_mock",
    "create_app",
    "create_app_from_config",
    "create_app_from_env",
    "serve",
]
