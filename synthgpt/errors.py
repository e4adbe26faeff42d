"""Every exception class synthgpt defines, in one module.

    SynthGPTError                   anything synthgpt raises on purpose about rules or requests
    ├── RuleError (ValueError)      a rule, matcher, generator or engine argument that can never work
    │   ├── UnknownNameError        a name not known (generator, matcher, …); suggests the closest
    │   │   └── UnknownRuleError (KeyError)   `rules["name"]` names no rule
    │   └── SchemaError             a JSON schema `from_schema` cannot honour
    ├── RuleFileError               a rule file is wrong: `PATH:LINE:COL: message`, `.errors` lists all
    ├── RequestError (ValueError)   the request is malformed; `.param` names the field      -> 400
    │   ├── ContextWindowExceeded   prompt + output do not fit `context_window`            -> 400
    │   └── ResponseNotFound        `previous_response_id` names no stored response        -> 404
    ├── NoRuleMatched (LookupError) no rule matched; the message lists every rule tried     -> 400
    ├── DrawError (RuntimeError)    a generator failed while drawing, naming the rule       -> 500
    ├── MissingEmbeddings (RuntimeError)  an embeddings request answered without vectors   -> 500
    ├── BodyTooLarge                a body over `--max-body-bytes`                          -> 413
    └── StateUnavailable            the shared state store (`--state redis://…`) cannot be reached
                                    for an answer that needs it (a call count, a stored response) -> 503

    Outside the tree, because they are not about rules or requests:
    ConfigError                     `synthgpt serve` options that cannot work (bad clock, journal path)
    QueryError (ValueError)         a bad `/_synthgpt/calls` query parameter                -> 400
    PatternError (ValueError)       a regex `pattern` cannot be drawn from (wrapped in a RuleError or
                                    a DrawError naming the rule by its callers)
    StreamAborted                   control flow, not a failure: raised after the last write of a
                                    stream with a `disconnect` fault so the server drops the connection
    BodyCut, ReadTimedOut           the in-process transports' signals, turned into the httpx
                                    flavour's `RemoteProtocolError` / `ReadTimeout`

The statuses on the right are `synthgpt.pipeline.REFUSALS`, the one table the server and `render` use.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence


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


class UnknownRuleError(UnknownNameError, KeyError):
    """`rules["name"]` names no rule: the message suggests the closest name. Still a KeyError, as a
    mapping's missing key is."""

    __str__ = BaseException.__str__  # KeyError's own would print the message quoted, as a repr

    def __init__(self, name: str, known: list[str]) -> None:
        super().__init__("rule", name, known)


class SchemaError(RuleError):
    """A JSON schema uses a keyword or shape that `from_schema` cannot honour."""

    def __init__(self, pointer: str, message: str) -> None:
        self.pointer = pointer or "/"
        super().__init__(f"schema at {self.pointer!r}: {message}")


class RuleFileError(SynthGPTError):
    """A rule file is wrong. `str()` is `PATH:LINE:COL: message`; `errors` lists every error found."""

    def __init__(self, path: str, line: int, col: int, message: str) -> None:
        self.path = path
        self.line = line
        self.col = col
        self.message = message
        self.errors: tuple[RuleFileError, ...] = (self,)
        super().__init__(f"{path}:{line}:{col}: {message}")

    @classmethod
    def collect(cls, errors: Sequence[RuleFileError]) -> RuleFileError:
        """The first error, carrying all of them in `.errors`."""
        first = errors[0]
        first.errors = tuple(errors)
        return first


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


class ResponseNotFound(RequestError):
    """`previous_response_id` names no stored response: a 404, as the real API answers."""

    status = 404

    def __init__(self, response_id: str) -> None:
        super().__init__(
            f"Previous response with id '{response_id}' not found.",
            "previous_response_id",
            code="previous_response_not_found",
        )


class NoRuleMatched(SynthGPTError, LookupError):
    """No rule of the RuleSet matched; the message lists the request and every rule tried."""

    def __init__(self, summary: str, tried: list[str]) -> None:
        self.summary = summary
        self.tried = tried
        lines = "\n".join(f"  - {t}" for t in tried) or "  (the rule set is empty)"
        super().__init__(f"no rule matched {summary}\nrules tried, in order:\n{lines}")


class BodyTooLarge(SynthGPTError):
    """A request body over the server's `--max-body-bytes`: refused (413) before it is read to the end."""

    def __init__(self, size: int, limit: int) -> None:
        self.size = size
        self.limit = limit
        super().__init__(f"Request body too large: {size} bytes exceeds the limit of {limit} bytes.")


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


class MissingEmbeddings(SynthGPTError, RuntimeError):
    """The rule that answered an embeddings request drew no vectors (it is not an embeddings rule)."""


class StateUnavailable(SynthGPTError):
    """The shared state store cannot answer, and the request needs it: a `times` or `sequence` rule's call
    count, a stored Responses conversation. Answered 503, never with a guessed (so possibly wrong) step."""

    def __init__(self, cause: str) -> None:
        self.cause = cause
        super().__init__(f"The shared state store is unavailable ({cause}); retry once it is back.")


class ConfigError(Exception):
    """The serve configuration cannot work (bad clock, unreadable rule files, …); the message says why."""


class QueryError(ValueError):
    """A `/_synthgpt/calls` query parameter that cannot be read; `param` names it."""

    def __init__(self, message: str, param: str) -> None:
        super().__init__(message)
        self.message = message
        self.param = param


class PatternError(ValueError):
    """The message completes "pattern '…' …": why the pattern can't be generated, and where."""


class StreamAborted(Exception):
    """Raised after the last write of a stream with a `disconnect` fault, so the server drops the connection.

    Servers built by `synthgpt.server` do not log it as an error.
    """

    def __init__(self, frames_sent: int) -> None:
        self.frames_sent = frames_sent
        super().__init__(f"stream aborted on purpose after {frames_sent} frames (disconnect fault)")


class BodyCut(Exception):
    """The app stopped before finishing the body; the flavours turn it into `RemoteProtocolError`."""


class ReadTimedOut(Exception):
    """Nothing arrived within the request's read timeout; the flavours turn it into `ReadTimeout`."""


def suggest(name: str, known: Iterable[str]) -> str | None:
    """The closest known name, if one is close enough to be a plausible typo."""
    import difflib  # with the first misspelt name: ~0.2 MB a server that never sees one does not keep

    matches = difflib.get_close_matches(name, list(known), n=1, cutoff=0.6)
    return matches[0] if matches else None
