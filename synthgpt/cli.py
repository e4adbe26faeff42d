"""The `synthgpt` command: `serve`, `init`, `check` and `render`.

    synthgpt serve [RULE_FILES…] [--host 127.0.0.1] [--port 8000] [--seed N]
                   [--clock fixed[:<unix>]|step:<start>[:<step>]|system] [--workers N] [--max-body-bytes N]
                   [--watch] [--journal-size N] [--journal PATH.sqlite] [--memo-entries N]
                   [--context-window N] [--access-log] [--log-level LEVEL] [--log-format text|json]
                   [--no-request-log]
    synthgpt init [PATH]           write a starter rule file that keeps the built-in behaviour
    synthgpt check RULE_FILES…     validate rule files and lint them (synthgpt.rules.check)
    synthgpt render …              write the answers to a requests file as fixtures (synthgpt.render)
    synthgpt --version

Every flag of `serve` and `init` is also read from `SYNTHGPT_<FLAG>` (`synthgpt.cli_env`).
`check` and `render` hand their arguments over untouched to their modules' `main(argv)`.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Mapping, Sequence
from importlib.metadata import PackageNotFoundError, version

from .cli_env import apply_environment, unknown_variables
from .errors import SynthGPTError

__all__ = ["build_parser", "main"]

_DELEGATED = {"check": "synthgpt.rules.check", "render": "synthgpt.render"}


# The argument types raise ArgumentTypeError, whose message argparse prints as is; a ValueError would
# print as "invalid _positive value: 'x'", naming the function instead of what is wanted.
def _whole(value: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number, got {value!r}") from None


def _positive(value: str) -> int:
    n = _whole(value)
    if n < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {n}")
    return n


def _non_negative(value: str) -> int:
    n = _whole(value)
    if n < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {n}")
    return n


def _port(value: str) -> int:
    n = _whole(value)
    if not 0 <= n <= 65535:
        raise argparse.ArgumentTypeError(f"must be between 0 and 65535, got {n}")
    return n


def _clock(value: str) -> str:
    from .clock import parse_clock

    try:
        parse_clock(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return value


def _version() -> str:
    try:
        return version("synthgpt")
    except PackageNotFoundError:  # a source tree on sys.path, never installed
        return "unknown (not installed)"


def build_parser(environ: Mapping[str, str] | None = None) -> argparse.ArgumentParser:
    """The parser; `SYNTHGPT_*` variables in `environ` (default: none) become its flags' defaults."""
    parser = argparse.ArgumentParser(
        prog="synthgpt",
        description="Deterministic synthetic answers for LLM APIs (OpenAI, Azure, Anthropic).",
        epilog="Every flag of `serve` and `init` can also be set as SYNTHGPT_<FLAG> in the environment "
        "(--max-body-bytes: SYNTHGPT_MAX_BODY_BYTES; RULE_FILES: SYNTHGPT_RULE_FILES, comma-separated).",
    )
    parser.add_argument("--version", action="version", version=f"synthgpt {_version()}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="{serve,init,check,render}")
    serve = sub.add_parser("serve", help="serve the HTTP API", description="Serve the HTTP API.")
    serve.add_argument("rule_files", nargs="*", metavar="RULE_FILES",
                       help="YAML/JSON rule files (default: the built-in rule set)")  # fmt: skip
    serve.add_argument("--host", default="127.0.0.1", help="interface to listen on (default: 127.0.0.1)")
    serve.add_argument("--port", type=_port, default=8000, help="port (0 picks a free one; default: 8000)")
    serve.add_argument("--seed", type=_whole, default=None, help="engine seed (default: the files', else 0)")
    serve.add_argument("--clock", type=_clock, default=None,
                       help="fixed:<unix-seconds>, step:<start>[:<step>] (advances on every read) or system "
                            "(default: fixed at 2026-01-01)")  # fmt: skip
    serve.add_argument("--workers", type=_positive, default=1, help="worker processes (default: 1)")
    serve.add_argument("--max-body-bytes", type=_positive, default=10 * 1024 * 1024,
                       help="larger request bodies get 413 (default: 10 MiB)")  # fmt: skip
    serve.add_argument("--watch", action="store_true", help="reload the rule files when they change")
    serve.add_argument("--journal-size", type=_non_negative, default=1000,
                       help="calls kept for GET /_synthgpt/calls (default: 1000)")  # fmt: skip
    serve.add_argument("--journal", default=None, metavar="PATH.sqlite",
                       help="keep the journal in this SQLite file, shared by all workers")  # fmt: skip
    serve.add_argument("--memo-entries", type=_non_negative, default=None, metavar="N",
                       help="answers kept to replay byte-identical for repeated requests; 0 turns the memo "
                            "off (default: 256)")  # fmt: skip
    serve.add_argument("--context-window", type=_positive, default=None, metavar="N",
                       help="tokens every model's prompt and answer share (a rule file's model profiles "
                            "win); a longer max_tokens is refused (default: unlimited)")  # fmt: skip
    serve.add_argument("--access-log", action="store_true", help="log every request")
    levels = ["critical", "error", "warning", "info", "debug"]
    serve.add_argument("--log-level", default="warning", choices=levels, help="(default: warning)")
    serve.add_argument("--log-format", default="text", choices=["text", "json"],
                       help="the request log: key=value text or one JSON object per line (default: text)")
    serve.add_argument("--request-log", action=argparse.BooleanOptionalAction, default=True,
                       help="one line per answered API request on stderr (default: on)")  # fmt: skip
    init = sub.add_parser("init", help="write a starter rule file",
                          description="Write a starter rule file that keeps the built-in behaviour "
                                      "(`include: builtin`) beside an example rule of your own.")  # fmt: skip
    init.add_argument("path", nargs="?", default="rules.yaml", metavar="PATH",
                      help="where to write it (default: rules.yaml)")  # fmt: skip
    init.add_argument("--force", action="store_true", help="overwrite an existing file")
    for name, module in _DELEGATED.items():
        sub.add_parser(name, help=f"see `synthgpt {name} --help` ({module})", add_help=False)
    if environ is not None:
        for command in _commands(parser):
            apply_environment(command, environ)
    return parser


def _commands(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return list(sub.choices.values())


def _delegate(command: str, argv: list[str]) -> int:
    module = importlib.import_module(_DELEGATED[command])
    return int(module.main(argv))


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list and args_list[0] in _DELEGATED:
        return _delegate(args_list[0], args_list[1:])
    parser = build_parser(os.environ)
    args = parser.parse_args(args_list)
    if args.command == "serve":
        from .server.run import ENV_VAR

        for warning in unknown_variables(_commands(parser), os.environ, internal=(ENV_VAR,)):
            print(f"synthgpt serve: warning: {warning}", file=sys.stderr)
    if args.command == "init":
        from .rules.starter import write_starter

        return write_starter(args.path, force=args.force)
    from .server.run import ConfigError, ServeConfig, serve

    config = ServeConfig(
        rule_files=tuple(args.rule_files),
        host=args.host,
        port=args.port,
        seed=args.seed,
        clock=args.clock,
        workers=args.workers,
        max_body_bytes=args.max_body_bytes,
        watch=args.watch,
        journal_size=args.journal_size,
        journal=args.journal,
        context_window=args.context_window,
        access_log=args.access_log,
        log_level=args.log_level,
        log_format=args.log_format,
        request_log=args.request_log,
        **({} if args.memo_entries is None else {"memo_entries": args.memo_entries}),
    )
    try:
        serve(config)
    except (ConfigError, SynthGPTError, OSError) as exc:
        # A rule file with several mistakes reports them all at once, one `PATH:LINE:COL: message` each.
        for each in getattr(exc, "errors", None) or (exc,):
            print(f"synthgpt serve: error: {each}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        pass
    return 0
