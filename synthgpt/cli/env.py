"""Every command-line flag of `synthgpt` is also read from a `SYNTHGPT_*` environment variable.

The name comes from the flag's, in one place (`env_name`): `--max-body-bytes` -> `SYNTHGPT_MAX_BODY_BYTES`,
and a positional list such as `RULE_FILES` -> `SYNTHGPT_RULE_FILES` (comma-separated). A flag given on
the command line wins over its variable, which wins over the default. Values are checked as the flag's
are, and a bad one is an error naming the variable. Flags added to the parser later are covered by
the same walk over its actions, with no list to keep up to date.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import Any

__all__ = ["ENV_PREFIX", "apply_environment", "env_name", "env_names", "unknown_variables"]

ENV_PREFIX = "SYNTHGPT_"
_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off", "")
_SKIPPED = (argparse._HelpAction, argparse._VersionAction, argparse._SubParsersAction)


def env_name(action: argparse.Action) -> str | None:
    """`SYNTHGPT_<FLAG>` for an option (its first long spelling) or a positional; None for --help."""
    if isinstance(action, _SKIPPED):
        return None
    longs = [s for s in action.option_strings if s.startswith("--")]
    if action.option_strings and not longs:
        return None
    base = longs[0][2:] if longs else action.dest
    return ENV_PREFIX + base.upper().replace("-", "_")


def env_names(parser: argparse.ArgumentParser) -> dict[str, str]:
    """Variable name -> the option it sets, for every action of `parser` (documentation, tests)."""
    names: dict[str, str] = {}
    for action in parser._actions:
        name = env_name(action)
        if name is not None:
            names[name] = action.option_strings[0] if action.option_strings else action.dest
    return names


def _convert(parser: argparse.ArgumentParser, action: argparse.Action, var: str, raw: str) -> Any:
    def fail(why: str) -> None:
        parser.error(f"environment variable {var}={raw!r}: {why}")

    switches = (argparse._StoreTrueAction, argparse._StoreFalseAction, argparse.BooleanOptionalAction)
    if isinstance(action, switches):
        word = raw.strip().lower()
        if word not in _TRUE + _FALSE:
            fail(f"use one of {', '.join(_TRUE)} or {', '.join(w for w in _FALSE if w)}")
        on = word in _TRUE
        return (not on) if isinstance(action, argparse._StoreFalseAction) else on
    many = action.nargs in ("*", "+") or isinstance(action, argparse._AppendAction)
    texts = [t.strip() for t in raw.split(",") if t.strip()] if many else [raw]
    values: list[Any] = []
    for text in texts:
        value: Any = text
        if action.type is not None and callable(action.type):
            try:
                value = action.type(text)
            except (argparse.ArgumentTypeError, TypeError, ValueError) as exc:
                fail(str(exc) or "invalid value")
        if action.choices is not None and value not in action.choices:
            fail(f"choose from {', '.join(map(str, action.choices))}")
        values.append(value)
    return values if many else values[0]


def apply_environment(parser: argparse.ArgumentParser, environ: Mapping[str, str]) -> None:
    """Make each `SYNTHGPT_*` variable set in `environ` the default of its flag in `parser`."""
    for action in parser._actions:
        name = env_name(action)
        if name is None or name not in environ:
            continue
        action.default = _convert(parser, action, name, environ[name])
        if action.option_strings:
            action.required = False  # the variable gives it


def unknown_variables(
    parsers: list[argparse.ArgumentParser], environ: Mapping[str, str], internal: tuple[str, ...] = ()
) -> list[str]:
    """A warning for each `SYNTHGPT_*` variable no flag of `parsers` reads (a typo is otherwise silent)."""
    from ..errors import suggest

    known = {name for p in parsers for name in env_names(p)}
    out = []
    for var in sorted(environ):
        if not var.startswith(ENV_PREFIX) or var in known or var in internal:
            continue
        hint = suggest(var, sorted(known))
        out.append(f"{var} is not a synthgpt setting" + (f" — did you mean {hint}?" if hint else "; ignored"))
    return out
