"""The recording file: a normal rule file that only ever grows.

The first recording creates it (`include: builtin`, then `rules:`); every later one is appended at its end,
never rewriting what is there, so a proxy restarted on the same file keeps the earlier recordings. The
digests already in the file are read when it is opened: a request recorded before is not recorded again,
and the first recording of a request is the one that stays (it is also the one a rule set would answer
with). Secrets seen in the request (`secrets`) are blanked out of every line before it is written.
"""

from __future__ import annotations

import os
import re
import threading
from pathlib import Path
from typing import Any

import yaml

from ..errors import ConfigError

__all__ = ["HEADER", "RecordingFile", "scrub"]

HEADER = """\
# Recorded by `synthgpt record` (docs/record.md): one rule per request, matched by the digest of its
# canonical form. New recordings are appended; the first recording of a request wins.
# Replay: `synthgpt serve THIS_FILE` (unrecorded requests get the built-in answers, or 404 with --strict).
include: builtin
rules:
"""
_MASK = "***"
_MIN_SECRET = 6  # shorter values (`any`, `x`) are placeholders a test uses, and too common to blank out


def scrub(text: str, secrets: set[str]) -> str:
    """`text` with every secret (of at least 6 characters) replaced by `***`, longest first."""
    for secret in sorted((s for s in secrets if len(s) >= _MIN_SECRET), key=len, reverse=True):
        text = text.replace(secret, _MASK)
    return text


class RecordingFile:
    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self.known: set[str] = set()
        self._indent = "  "
        if self.path.exists():
            self._read_existing()

    def _read_existing(self) -> None:
        try:
            text = self.path.read_text(encoding="utf-8")
            data = yaml.safe_load(text)
        except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
            raise ConfigError(f"cannot read the recording {self.path}: {exc}") from None
        if data is None:
            return
        rules: Any
        if isinstance(data, list):
            rules, self._indent = data, ""
        elif isinstance(data, dict) and list(data)[-1:] == ["rules"] and isinstance(data["rules"], list):
            rules = data["rules"]
            found = re.search(r"^rules:[ \t]*(?:#.*)?\n(?:[ \t]*(?:#.*)?\n)*([ \t]*)- ", text, re.MULTILINE)
            if found is None:
                raise ConfigError(
                    f"{self.path}: `rules:` must be a block list (`- name: …` lines) to append to"
                )
            self._indent = found.group(1)
        else:
            raise ConfigError(
                f"{self.path} is not a recording this command can append to: its last top-level key must be "
                "`rules:` (a block list); record into a new file"
            )
        for rule in rules:
            match = rule.get("match") if isinstance(rule, dict) else None
            if isinstance(match, dict) and isinstance(match.get("canonical"), str):
                self.known.add(match["canonical"])

    def __contains__(self, digest: str) -> bool:
        return digest in self.known

    def append(self, digest: str, rule: dict[str, Any], secrets: set[str]) -> bool:
        """Append `rule` (matched by `digest`); False when the file has the digest already."""
        dumped = yaml.safe_dump([rule], sort_keys=False, allow_unicode=True, width=1 << 20)
        lines = scrub(dumped, secrets).splitlines(keepends=True)
        with self._lock:
            if digest in self.known:
                return False
            fresh = not self.path.exists() or self.path.stat().st_size == 0
            with self.path.open("a", encoding="utf-8") as out:
                if fresh:
                    out.write(HEADER)
                elif not self._ends_with_newline():
                    out.write("\n")
                out.write("".join(self._indent + line for line in lines))
                out.flush()
                os.fsync(out.fileno())  # a proxy killed right after keeps what it said it recorded
            self.known.add(digest)
        return True

    def _ends_with_newline(self) -> bool:
        with self.path.open("rb") as f:
            f.seek(-1, os.SEEK_END)
            return f.read(1) == b"\n"
