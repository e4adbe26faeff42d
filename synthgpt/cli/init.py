"""`synthgpt init [PATH] [--force]`: write a starter rule file that keeps the built-in behaviour."""

from __future__ import annotations

import argparse

__all__ = ["add_arguments", "run"]


def add_arguments(init: argparse.ArgumentParser) -> None:
    init.add_argument("path", nargs="?", default="rules.yaml", metavar="PATH",
                      help="where to write it (default: rules.yaml)")  # fmt: skip
    init.add_argument("--force", action="store_true", help="overwrite an existing file")


def run(args: argparse.Namespace) -> int:
    from ..rules.starter import write_starter

    return write_starter(args.path, force=args.force)
