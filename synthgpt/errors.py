"""The SynthGPTError tree: every error synthgpt raises on purpose derives from SynthGPTError."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class SynthGPTError(Exception):
    """Base class of every error synthgpt raises on purpose."""


class RuleError(SynthGPTError, ValueError):
    """A rule, matcher or generator was built with arguments that can never work."""


class UnknownNameError(RuleError):
    """A name (generator, matcher, faker provider, …) is not known; the message suggests the closest one."""

    def __init__(self, kind: str, name: str, known: Iterable[str]) -> None:
        self.kind = kind
        self.name = name
        self.suggestion = suggest(name, known)
        hint = f" — did you mean {self.suggestion!r}?" if self.suggestion else ""
        super().__init__(f"unknown {kind} {name!r}{hint}")


class SchemaError(RuleError):
    """A JSON schema uses a keyword or shape that `from_schema` cannot honour."""

    def __init__(self, pointer: str, message: str) -> None:
        self.pointer = pointer or "/"
        super().__init__(f"schema at {self.pointer!r}: {message}")


class RequestError(SynthGPTError, ValueError):
    """The request itself is malformed; `param` names the offending field (dotted/indexed path)."""

    def __init__(self, message: str, param: str | None = None, *, code: str | None = None) -> None:
        self.message = message
        self.param = param
        self.code = code
        super().__init__(message if param is None else f"{message} (param: {param})")


class ContextWindowExceeded(RequestError):
    """The prompt plus the requested output do not fit the configured context window."""

    def __init__(self, prompt_tokens: int, max_output: int, window: int) -> None:
        super().__init__(
            f"This model's maximum context length is {window} tokens. However, your messages resulted in "
            f"{prompt_tokens} tokens and {max_output} tokens were reserved for the output. "
            "Please reduce the length of the messages or the output limit.",
            "messages",
            code="context_length_exceeded",
        )
        self.prompt_tokens = prompt_tokens
        self.window = window


class NoRuleMatched(SynthGPTError, LookupError):
    """No rule of the RuleSet matched; the message lists the request and every rule tried."""

    def __init__(self, summary: str, tried: list[str]) -> None:
        self.summary = summary
        self.tried = tried
        lines = "\n".join(f"  - {t}" for t in tried) or "  (the rule set is empty)"
        super().__init__(f"no rule matched {summary}\nrules tried, in order:\n{lines}")


class DrawError(SynthGPTError, RuntimeError):
    """A generator failed while drawing (e.g. a filter that never accepts, a template that raised).

    `rule` names the rule whose draw failed once the engine knows it; `code` is the stable error code a
    server answers with (`draw_failed`, `draw_over_budget`). The message is for logs and the rule's author:
    a server sends it to clients only when `public` (the engine's own fixed wording about the answer's
    shape), since a message from inside a draw may quote anything the draw touched."""

    code = "draw_failed"

    def __init__(
        self, message: str = "", *, rule: str | None = None, code: str | None = None, public: bool = False
    ) -> None:
        super().__init__(message)
        self.rule = rule
        if code is not None:
            self.code = code
        self.public = public


def suggest(name: str, known: Iterable[str]) -> str | None:
    """The closest known name, if one is close enough to be a plausible typo."""
    matches = difflib.get_close_matches(name, list(known), n=1, cutoff=0.6)
    return matches[0] if matches else None
