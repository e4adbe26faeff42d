"""The README's "Security and limits" section and docs/security.md list every limit flag of `serve`, and the
README mentions every serve flag somewhere (issue 11, "Done when")."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from synthgpt.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]
NOT_LIMITS = {"--help", "--host", "--port", "--seed", "--clock", "--workers", "--watch", "--journal",
              "--access-log", "--log-level", "--context-window", "--state", "--state-memo-us",
              "--log-format", "--request-log", "--no-request-log", "--strict"}  # fmt: skip


def _serve_flags() -> set[str]:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    serve = sub.choices["serve"]
    return {o for action in serve._actions for o in action.option_strings if o.startswith("--")}


def _readme_section(title: str) -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## )", text, flags=re.S | re.M)
    assert match is not None, title
    return match.group(1)


def test_every_limit_flag_is_listed() -> None:
    limits = _serve_flags() - NOT_LIMITS
    assert {"--admin-token", "--no-admin", "--allowed-hosts", "--journal-bytes", "--header-timeout"} <= limits
    section = _readme_section("Security and limits")
    page = (ROOT / "docs" / "security.md").read_text(encoding="utf-8")
    for flag in sorted(limits):
        assert f"`{flag}" in section, f"README's Security and limits section does not list {flag}"
        assert f"`{flag}" in page, f"docs/security.md does not list {flag}"
    assert "SYNTHGPT_ADMIN_TOKEN" in section and "(docs/security.md)" in section


def test_every_serve_flag_is_in_the_readme() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for flag in sorted(_serve_flags() - {"--help"}):
        assert flag in readme, flag
