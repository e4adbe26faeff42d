"""`synthgpt record`: run the recording proxy (docs/record.md).

    synthgpt record --upstream URL [--out recorded.yaml] [--api-key-env VAR] [--host 127.0.0.1]
                    [--port 8000] [--timeout S] [--max-body-bytes N] [--no-timing] [--log-level LEVEL]
    synthgpt record --digest REQUEST.json [--route PATH]   a request's canonical form and digest

Every flag is also read from `SYNTHGPT_<FLAG>` (`synthgpt.cli_env`), as `serve`'s are.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Sequence
from urllib.parse import urlsplit

from ..cli import _port, _positive, _seconds  # the argument types `serve` checks its flags with
from ..cli_env import apply_environment
from ..errors import ConfigError
from .proxy import ProxyConfig, create_proxy_app
from .writer import RecordingFile

__all__ = ["build_parser", "main"]


def _upstream(value: str) -> str:
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise argparse.ArgumentTypeError(f"must be an http:// or https:// URL, got {value!r}")
    if parts.query or parts.fragment:
        raise argparse.ArgumentTypeError(f"must be a base URL without a query, got {value!r}")
    return value.rstrip("/")








def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="synthgpt record",
        description="Forward every request to a real API, answer with its answer unchanged, and append a "
        "rule that replays it to a rule file (docs/record.md).",
    )
    parser.add_argument(
        "--upstream",
        type=_upstream,
        default=None,
        metavar="URL",
        help="the real API's base URL, e.g. https://api.openai.com",
    )
    parser.add_argument(
        "--out",
        default="recorded.yaml",
        metavar="PATH",
        help="the rule file recordings are appended to (default: recorded.yaml)",
    )
    parser.add_argument(
        "--api-key-env",
        default=None,
        metavar="VAR",
        help="send the key in this environment variable upstream, in the provider's header, "
        "instead of the client's credentials",
    )
    parser.add_argument("--host", default="127.0.0.1", help="interface to listen on (default: 127.0.0.1)")
    parser.add_argument("--port", type=_port, default=8000, help="port (0 picks a free one; default: 8000)")
    parser.add_argument(
        "--timeout",
        type=_seconds,
        default=600.0,
        metavar="S",
        help="longest wait for the upstream between two bytes of an answer (default: 600)",
    )
    parser.add_argument(
        "--max-body-bytes",
        type=_positive,
        default=10 * 1024 * 1024,
        metavar="N",
        help="larger request bodies get 413 (default: 10 MiB)",
    )
    parser.add_argument(
        "--no-timing", action="store_true", help="record no first delay or interval in the streams' plans"
    )
    parser.add_argument(
        "--digest",
        default=None,
        metavar="REQUEST.json",
        help="print this request body's canonical form and digest (for `canonical:` matchers) instead of "
        "running the proxy",
    )
    parser.add_argument(
        "--route",
        default="/v1/chat/completions",
        metavar="PATH",
        help="with --digest: the route the body is posted to (default: /v1/chat/completions)",
    )
    parser.add_argument(
        "--log-level",
        default="warning",
        choices=["critical", "error", "warning", "info", "debug"],
        help="(default: warning)",
    )
    return parser




def config_from(args: argparse.Namespace) -> ProxyConfig:
    key: str | None = None
    if args.api_key_env is not None:
        key = os.environ.get(args.api_key_env) or None
        if key is None:
            raise ConfigError(f"--api-key-env: the environment variable {args.api_key_env} is not set")
    return ProxyConfig(
        upstream=args.upstream,
        recording=RecordingFile(args.out),
        api_key=key,
        timeout=args.timeout,
        max_body_bytes=args.max_body_bytes,
        timing=not args.no_timing,
    )


def main(argv: Sequence[str] | None = None) -> int:
    import uvicorn

    from ..server.run import _bind, url_for

    parser = build_parser()
    apply_environment(parser, os.environ)
    args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    if args.digest is not None:
        from .digest import print_description

        try:
            print_description(args.digest, args.route)
        except ConfigError as exc:
            print(f"synthgpt record: error: {exc}", file=sys.stderr)
            return 2
        return 0
    if args.upstream is None:
        parser.error("the following arguments are required: --upstream")
    try:
        config = config_from(args)
        sock = _bind(args.host, args.port)
    except ConfigError as exc:
        print(f"synthgpt record: error: {exc}", file=sys.stderr)
        return 2
    port = sock.getsockname()[1]
    print(
        f"synthgpt record: listening on {url_for(args.host, port)}, forwarding to {config.upstream}, "
        f"recording into {args.out}",
        flush=True,
    )
    server = uvicorn.Server(
        uvicorn.Config(
            create_proxy_app(config),
            log_level=args.log_level,
            server_header=False,
            date_header=False,
            lifespan="on",
        )
    )
    with contextlib.suppress(KeyboardInterrupt):
        server.run(sockets=[sock])
    print(f"synthgpt record: {len(config.recorded)} new recording(s) in {args.out}", file=sys.stderr)
    return 0
