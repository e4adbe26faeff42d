"""`synthgpt record`: run the recording proxy (docs/record.md); a `synthgpt.cli` command.

    synthgpt record --upstream URL [--out recorded.yaml] [--api-key-env VAR] [--host 127.0.0.1]
                    [--port 8000] [--timeout S] [--max-body-bytes N] [--no-timing] [--log-level LEVEL]
    synthgpt record --digest REQUEST.json [--route PATH]   a request's canonical form and digest

Every flag is also read from `SYNTHGPT_<FLAG>` (`synthgpt.cli.env`), as `serve`'s are.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from ..cli.flags import port, positive, seconds
from ..errors import ConfigError

if TYPE_CHECKING:
    from .proxy import ProxyConfig

__all__ = ["DESCRIPTION", "HELP", "add_arguments", "config_from", "run"]

HELP = "record real traffic into a rule file (a proxy)"
DESCRIPTION = (
    "Forward every request to a real API, answer with its answer unchanged, and append a rule that replays "
    "it to a rule file (docs/record.md)."
)


def _upstream(value: str) -> str:
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise argparse.ArgumentTypeError(f"must be an http:// or https:// URL, got {value!r}")
    if parts.query or parts.fragment:
        raise argparse.ArgumentTypeError(f"must be a base URL without a query, got {value!r}")
    return value.rstrip("/")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--upstream", type=_upstream, default=None, metavar="URL",
                        help="the real API's base URL, e.g. https://api.openai.com")  # fmt: skip
    parser.add_argument("--out", default="recorded.yaml", metavar="PATH",
                        help="the rule file recordings are appended to (default: recorded.yaml)")  # fmt: skip
    parser.add_argument("--api-key-env", default=None, metavar="VAR",
                        help="send the key in this environment variable upstream, in the provider's header, "
                             "instead of the client's credentials")  # fmt: skip
    parser.add_argument("--host", default="127.0.0.1", help="interface to listen on (default: 127.0.0.1)")
    parser.add_argument("--port", type=port, default=8000, help="port (0 picks a free one; default: 8000)")
    parser.add_argument("--timeout", type=seconds, default=600.0, metavar="S",
                        help="longest wait for the upstream between two bytes of an answer (default: 600)")
    parser.add_argument("--max-body-bytes", type=positive, default=10 * 1024 * 1024, metavar="N",
                        help="larger request bodies get 413 (default: 10 MiB)")  # fmt: skip
    parser.add_argument("--no-timing", action="store_true",
                        help="record no first delay or interval in the streams' plans")  # fmt: skip
    parser.add_argument("--digest", default=None, metavar="REQUEST.json",
                        help="print this request body's canonical form and digest (for `canonical:` "
                             "matchers) instead of running the proxy")  # fmt: skip
    parser.add_argument("--route", default="/v1/chat/completions", metavar="PATH",
                        help="with --digest: the route the body is posted to (default: /v1/chat/completions)")
    parser.add_argument("--log-level", default="warning",
                        choices=["critical", "error", "warning", "info", "debug"], help="(default: warning)")


def config_from(args: argparse.Namespace) -> ProxyConfig:
    from .proxy import ProxyConfig
    from .writer import RecordingFile

    key: str | None = None
    if args.api_key_env is not None:
        key = os.environ.get(args.api_key_env) or None
        if key is None:
            raise ConfigError(f"--api-key-env: the environment variable {args.api_key_env} is not set")
    return ProxyConfig(upstream=args.upstream, recording=RecordingFile(args.out), api_key=key,
                       timeout=args.timeout, max_body_bytes=args.max_body_bytes,
                       timing=not args.no_timing)  # fmt: skip


def run(args: argparse.Namespace) -> int:
    import uvicorn

    from ..server.run import _bind, url_for
    from .digest import print_description
    from .proxy import create_proxy_app

    try:
        if args.digest is not None:
            print_description(args.digest, args.route)
            return 0
        if args.upstream is None:
            raise ConfigError("--upstream URL is required (or --digest REQUEST.json)")
        config = config_from(args)
        sock = _bind(args.host, args.port)
    except ConfigError as exc:
        print(f"synthgpt record: error: {exc}", file=sys.stderr)
        return 2
    port_ = sock.getsockname()[1]
    print(f"synthgpt record: listening on {url_for(args.host, port_)}, forwarding to {config.upstream}, "
          f"recording into {args.out}", flush=True)  # fmt: skip
    app = create_proxy_app(config)
    settings = uvicorn.Config(app, log_level=args.log_level, server_header=False, date_header=False)
    with contextlib.suppress(KeyboardInterrupt):
        uvicorn.Server(settings).run(sockets=[sock])
    print(f"synthgpt record: {len(config.recorded)} new recording(s) in {args.out}", file=sys.stderr)
    return 0
