"""The `synthgpt` command: `serve`, `init`, `check`, `render`, `explain` and `record`, one module each.

    synthgpt serve [RULE_FILES…] [--host 127.0.0.1] [--port 8000] [--seed N]
                   [--clock fixed[:<unix>]|step:<start>[:<step>]|system] [--workers N] [--max-body-bytes N]
                   [--watch] [--journal-size N] [--journal-bytes N] [--journal PATH.sqlite]
                   [--memo-entries N] [--context-window N]
                   [--admin-token TOKEN | --no-admin] [--allowed-hosts H,…]
                   [--limit-concurrency N] [--timeout-keep-alive S] [--header-timeout S]
                   [--state memory|redis://HOST:PORT/DB] [--state-ttl SECONDS] [--state-timeout SECONDS]
                   [--access-log] [--log-level LEVEL] [--log-format text|json] [--no-request-log]
                   [--strict]      (synthgpt.cli.serve)
    synthgpt init [PATH]           a starter rule file keeping the built-in behaviour (synthgpt.cli.init)
    synthgpt check RULE_FILES…     validate rule files and lint them (synthgpt.rules.check)
    synthgpt render …              write the answers to a requests file as fixtures (synthgpt.render)
    synthgpt explain RULE_FILES… --request FILE | --prompt TEXT
                                   which rule answers and why the others do not (synthgpt.cli.explain)
    synthgpt record --upstream URL [--out recorded.yaml] [--api-key-env VAR]
                                   a proxy recording real traffic into a rule file (synthgpt.record.cli)
    synthgpt --version

The parser and the table of commands: `synthgpt.cli.parser`; argument types: `synthgpt.cli.flags`.
Every flag of `serve` and `init` is also read from `SYNTHGPT_<FLAG>` (`synthgpt.cli.env`).
`check`, `render` and `explain` get their arguments untouched in their modules' `main(argv)`.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Sequence

from .env import unknown_variables
from .parser import DELEGATED, build_parser, commands, runner

__all__ = ["build_parser", "main"]


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list and args_list[0] in DELEGATED:
        module = importlib.import_module(DELEGATED[args_list[0]])
        return int(module.main(args_list[1:]))
    parser = build_parser(os.environ)
    args = parser.parse_args(args_list)
    if args.command == "serve":
        from ..native import PURE_ENV  # read on import, by no flag
        from ..server.run import ENV_VAR

        for warning in unknown_variables(commands(parser), os.environ, internal=(ENV_VAR, PURE_ENV)):
            print(f"synthgpt serve: warning: {warning}", file=sys.stderr)
    return runner(args.command)(args)
