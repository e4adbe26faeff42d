"""The `synthgpt` parser: one subcommand per module of `synthgpt.cli`, and the commands that parse alone.

`PARSED` commands add their flags to this parser (so every flag is also a `SYNTHGPT_<FLAG>` variable,
`synthgpt.cli.env`) and run from the parsed arguments; `DELEGATED` commands get their arguments untouched
and parse them in their module's `main(argv)`. A new command is one module with `add_arguments(parser)`
and `run(args) -> int`, and one line in `PARSED`.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping
from importlib.metadata import PackageNotFoundError, version
from types import ModuleType

from ..record import cli as record
from . import init, serve
from .env import apply_environment

__all__ = ["DELEGATED", "PARSED", "build_parser", "commands"]

# name -> (module with add_arguments/run, one-line help, description)
PARSED: dict[str, tuple[ModuleType, str, str]] = {
    "serve": (serve, "serve the HTTP API", "Serve the HTTP API."),
    "init": (init, "write a starter rule file", "Write a starter rule file that keeps the built-in behaviour "
             "(`include: builtin`) beside an example rule of your own."),
    "record": (record, record.HELP, record.DESCRIPTION),  # synthgpt/record/cli.py
}
# name -> module whose main(argv) parses the rest of the command line itself
DELEGATED = {
    "check": "synthgpt.rules.check", "render": "synthgpt.render", "explain": "synthgpt.cli.explain",
    "compile": "synthgpt.native",
}

Runner = Callable[[argparse.Namespace], int]


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
    names = ",".join([*PARSED, *DELEGATED])
    sub = parser.add_subparsers(dest="command", required=True, metavar=f"{{{names}}}")
    for name, (module, help_, description) in PARSED.items():
        module.add_arguments(sub.add_parser(name, help=help_, description=description))
    for name, module_name in DELEGATED.items():
        sub.add_parser(name, help=f"see `synthgpt {name} --help` ({module_name})", add_help=False)
    if environ is not None:
        for command in commands(parser):
            apply_environment(command, environ)
    return parser


def commands(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    """The subcommands' parsers of `parser`."""
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return list(sub.choices.values())


def runner(name: str) -> Runner:
    """The `run(args)` of a parsed command."""
    run: Runner = PARSED[name][0].run
    return run
