"""`synthgpt init [PATH]`: a starter rule file that keeps the built-in behaviour beside a rule of your own.

The text is `STARTER`; a test loads it, checks it clean (no errors, no warnings) and serves it.
"""

from __future__ import annotations

import sys
from pathlib import Path

__all__ = ["STARTER", "write_starter"]

STARTER = """\
# synthgpt rules: `synthgpt check rules.yaml`, then `synthgpt serve --watch rules.yaml`.
# Reference: docs/rule-files.md. For editor completion: `synthgpt check --schema > rulefile.schema.json`
# and a first line `# yaml-language-server: $schema=rulefile.schema.json`.
seed: 42

# Keep the built-in behaviour beside your rules: the !MOCK_…! triggers answer first, and requests no
# rule of yours matches get the built-in answers (schema-valid JSON, tool calls, readable text).
# `builtin:triggers` or `builtin:defaults` keeps only one of the two.
include: builtin

rules:
  # First match wins. Replace this example with your own.
  - name: refund_policy
    match: {last_user: {contains: refund}}
    output:
      text: Refunds are paid back to the original payment method within 5 working days.
"""


def write_starter(path: str, *, force: bool = False) -> int:
    """Write `STARTER` to `path` (not over an existing file unless `force`); the CLI's exit code."""
    target = Path(path)
    if target.exists() and not force:
        print(f"synthgpt init: error: {path} already exists (--force overwrites it)", file=sys.stderr)
        return 1
    try:
        target.write_text(STARTER, encoding="utf-8")
    except OSError as exc:
        print(f"synthgpt init: error: cannot write {path}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    print(f"wrote {path}: check it with `synthgpt check {path}`, serve it with `synthgpt serve {path}`")
    return 0
