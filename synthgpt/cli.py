"""The `synthgpt` command: `serve`, `init`, `check`, `render` and `explain`.

    synthgpt serve [RULE_FILES…] [--host 127.0.0.1] [--port 8000] [--seed N]
                   [--clock fixed[:<unix>]|step:<start>[:<step>]|system] [--workers N] [--max-body-bytes N]
                   [--watch] [--journal-size N] [--journal-bytes N] [--journal PATH.sqlite]
                   [--memo-entries N] [--context-window N]
                   [--admin-token TOKEN | --no-admin] [--allowed-hosts H,…]
                   [--limit-concurrency N] [--timeout-keep-alive S] [--header-timeout S]
                   [--state memory|redis://HOST:PORT/DB] [--state-ttl SECONDS] [--state-timeout SECONDS]
                   [--access-log] [--log-level LEVEL] [--log-format text|json] [--no-request-log]
    synthgpt init [PATH]           write a starter rule file that keeps the built-in behaviour
    synthgpt check RULE_FILES…     validate rule files and lint them (synthgpt.rules.check)
    synthgpt render …              write the answers to a requests file as fixtures (synthgpt.render)
    synthgpt explain RULE_FILES… --request FILE | --prompt TEXT
                                   which rule answers and why the others do not (synthgpt.explain_cli)
    synthgpt record --upstream URL [--out recorded.yaml] [--api-key-env VAR]
                                   a proxy recording real traffic into a rule file (synthgpt.record.cli)
    synthgpt --version

Every flag of `serve` and `init` is also read from `SYNTHGPT_<FLAG>` (`synthgpt.cli_env`).
`check`, `render` and `explain` hand their arguments over untouched to their modules' `main(argv)`.
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
from .limits import DEFAULT_LIMITS

__all__ = ["build_parser", "main"]

_DELEGATED = {"check": "synthgpt.rules.check", "render": "synthgpt.render", "explain": "synthgpt.explain_cli",
              "record": "synthgpt.record.cli"}  # fmt: skip


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


def _seconds(value: str) -> float:
    try:
        n = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number of seconds, got {value!r}") from None
    if not 0 < n < 86400:  # also refuses nan and inf
        raise argparse.ArgumentTypeError(f"must be between 0 and 86400 seconds, got {value}")
    return n


def _hosts(value: str) -> tuple[str, ...]:
    from .server.hosts import check_host_pattern

    try:
        return tuple(check_host_pattern(h.strip()) for h in value.split(","))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


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
    from .server.limits import DEFAULT_HEADER_TIMEOUT, DEFAULT_LIMIT_CONCURRENCY, DEFAULT_TIMEOUT_KEEP_ALIVE

    parser = argparse.ArgumentParser(
        prog="synthgpt",
        description="Deterministic synthetic answers for LLM APIs (OpenAI, Azure, Anthropic).",
        epilog="Every flag of `serve` and `init` can also be set as SYNTHGPT_<FLAG> in the environment "
        "(--max-body-bytes: SYNTHGPT_MAX_BODY_BYTES; RULE_FILES: SYNTHGPT_RULE_FILES, comma-separated).",
    )
    parser.add_argument("--version", action="version", version=f"synthgpt {_version()}")
    commands = "{serve,init,check,render,explain,record}"
    sub = parser.add_subparsers(dest="command", required=True, metavar=commands)
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
    serve.add_argument("--strict", action="store_true",
                       help="a request no rule of the files answers gets a 404 instead of a built-in answer "
                            "(for replaying recordings: docs/record.md)")  # fmt: skip
    serve.add_argument("--journal-size", type=_non_negative, default=1000,
                       help="calls kept for GET /_synthgpt/calls (default: 1000)")  # fmt: skip
    serve.add_argument("--journal-bytes", type=_positive, default=64 * 1024 * 1024, metavar="N",
                       help="bytes of memory the journal may hold, the oldest calls going first "
                            "(default: 64 MiB)")  # fmt: skip
    serve.add_argument("--journal", default=None, metavar="PATH.sqlite",
                       help="keep the journal in this SQLite file, shared by all workers")  # fmt: skip
    serve.add_argument("--memo-entries", type=_non_negative, default=None, metavar="N",
                       help="answers kept to replay byte-identical for repeated requests; 0 turns the memo "
                            "off (default: 256)")  # fmt: skip
    budgets = serve.add_argument_group("per-request budgets (see docs/security.md)")
    budgets.add_argument("--max-answer-bytes", type=_positive, default=DEFAULT_LIMITS.max_answer_bytes,
                         metavar="N", help="bytes of one encoded answer; also bounds estimated answers, "
                         "schema strings and template values (default: 8 MiB)")  # fmt: skip
    budgets.add_argument("--max-schema-values", type=_positive, default=DEFAULT_LIMITS.max_schema_values,
                         metavar="N", help="values in one document drawn for a JSON schema "
                         "(default: 10000)")  # fmt: skip
    budgets.add_argument("--template-max-ops", type=_positive, default=DEFAULT_LIMITS.template_ops,
                         metavar="N", help="loop iterations and range items of one template render "
                         "(default: 100000)")  # fmt: skip
    serve.add_argument("--context-window", type=_positive, default=None, metavar="N",
                       help="tokens every model's prompt and answer share (a rule file's model profiles "
                            "win); a longer max_tokens is refused (default: unlimited)")  # fmt: skip
    serve.add_argument("--state", default=os.environ.get("SYNTHGPT_STATE") or None,
                       metavar="memory|redis://HOST:PORT/DB",
                       help="where replicas share call counts (times, sequence), the journal and the "
                            "Responses store (default: $SYNTHGPT_STATE, else memory: each process its own)")
    serve.add_argument("--state-ttl", type=_positive, default=3600, metavar="SECONDS",
                       help="how long the shared state keeps a stored Responses answer (default: 3600)")
    serve.add_argument("--state-timeout", type=_seconds, default=0.5, metavar="SECONDS",
                       help="longest wait for the shared state store before answering 503 (default: 0.5)")
    admin = serve.add_mutually_exclusive_group()
    admin.add_argument("--admin-token", default=None, metavar="TOKEN",
                       help="the /_synthgpt/ routes require `Authorization: Bearer TOKEN` (default: the "
                            "SYNTHGPT_ADMIN_TOKEN environment variable, else open)")  # fmt: skip
    admin.add_argument("--no-admin", action="store_true", help="serve no /_synthgpt/ routes at all")
    serve.add_argument("--allowed-hosts", type=_hosts, default=None, metavar="H,…",
                       help="Host headers accepted (`*.example.com`, `*`: any); others get 400 (default: "
                            "loopback names when --host is loopback, else any)")  # fmt: skip
    serve.add_argument("--limit-concurrency", type=_positive, default=DEFAULT_LIMIT_CONCURRENCY, metavar="N",
                       help="open connections per worker beyond which requests get 503 (default: "
                            f"{DEFAULT_LIMIT_CONCURRENCY})")  # fmt: skip
    serve.add_argument("--timeout-keep-alive", type=_positive, default=DEFAULT_TIMEOUT_KEEP_ALIVE,
                       metavar="S",
                       help=f"idle keep-alive connections close after S seconds (default: "
                            f"{DEFAULT_TIMEOUT_KEEP_ALIVE})")  # fmt: skip
    serve.add_argument("--header-timeout", type=_seconds, default=DEFAULT_HEADER_TIMEOUT, metavar="S",
                       help="a connection that has not sent a request's complete headers S seconds after it "
                            "opened (or after its last answer) gets 408 "
                            f"(default: {DEFAULT_HEADER_TIMEOUT:g})")  # fmt: skip
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
        from .record.cli import build_parser as record_parser  # its SYNTHGPT_* settings are known ones
        from .server.run import ENV_VAR

        known = [*_commands(parser), record_parser()]
        for warning in unknown_variables(known, os.environ, internal=(ENV_VAR,)):
            print(f"synthgpt serve: warning: {warning}", file=sys.stderr)
    if args.command == "init":
        from .rules.starter import write_starter

        return write_starter(args.path, force=args.force)
    from .server.admin import ADMIN_TOKEN_ENV
    from .server.run import ConfigError, ServeConfig, serve

    token = args.admin_token if args.admin_token is not None else os.environ.get(ADMIN_TOKEN_ENV) or None

    config = ServeConfig(
        rule_files=tuple(args.rule_files),
        host=args.host,
        port=args.port,
        seed=args.seed,
        clock=args.clock,
        workers=args.workers,
        max_body_bytes=args.max_body_bytes,
        watch=args.watch,
        strict=args.strict,
        journal_size=args.journal_size,
        journal_bytes=args.journal_bytes,
        journal=args.journal,
        context_window=args.context_window,
        state=args.state,
        state_ttl=args.state_ttl,
        state_timeout=args.state_timeout,
        access_log=args.access_log,
        log_level=args.log_level,
        log_format=args.log_format,
        request_log=args.request_log,
        admin=not args.no_admin,
        admin_token=None if args.no_admin else token,
        allowed_hosts=args.allowed_hosts,
        limit_concurrency=args.limit_concurrency,
        timeout_keep_alive=args.timeout_keep_alive,
        header_timeout=args.header_timeout,
        max_answer_bytes=args.max_answer_bytes,
        max_schema_values=args.max_schema_values,
        template_ops=args.template_max_ops,
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
