"""`synthgpt record --digest REQUEST.json [--route PATH]`: a request's canonical form and its digest.

For hand-written rules matched with `canonical: DIGEST`: the request body is decoded by the codec of the
route it would be posted to (default `/v1/chat/completions`), exactly as the server and the recording
proxy decode it, so the digest printed is the one a recording of that request would carry.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from starlette.routing import Match, Route

from ..codec.base import WireCodec
from ..codec.common import parse_json_body
from ..errors import ConfigError, RequestError
from ..rules.canonical import canonical_digest, canonical_form
from ..server.routes import route_codecs

__all__ = ["describe_request"]


def _codec_for(path: str) -> tuple[WireCodec, dict[str, str]]:
    route_path, _, query = path.partition("?")
    for api, codec in route_codecs():
        route = Route(api.path, lambda _: None, methods=list(api.methods))
        match, child = route.matches({"type": "http", "path": route_path, "method": "POST"})
        if match is Match.FULL:
            params = dict(p.split("=", 1) for p in query.split("&") if "=" in p)
            return codec, {**params, **{k: str(v) for k, v in child["path_params"].items()}}
    raise ConfigError(f"--route: {route_path!r} is none of the API routes (docs/apis.md)")


def describe_request(request_file: str, route: str) -> dict[str, Any]:
    """{"digest", "canonical"} of the request body in `request_file` posted to `route`."""
    try:
        raw = Path(request_file).read_bytes()
    except OSError as exc:
        raise ConfigError(f"cannot read {request_file}: {exc.strerror or exc}") from None
    codec, params = _codec_for(route)
    try:
        request = codec.decode(parse_json_body(raw), {}, params)
    except RequestError as exc:
        raise ConfigError(f"{request_file}: {exc.message}") from None
    return {"digest": canonical_digest(request), "canonical": canonical_form(request)}


def print_description(request_file: str, route: str) -> None:
    print(json.dumps(describe_request(request_file, route), indent=2, ensure_ascii=False, sort_keys=True))
