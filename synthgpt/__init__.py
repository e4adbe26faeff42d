"""synthgpt: deterministic synthetic responses for LLM APIs.

    from synthgpt import MockGPT, Rule, generators as g, matchers as m

This module is the public API: everything in `__all__` is supported, and `tests/engine/
test_engine_public_api.py` keeps the list sorted and importable. Wire formats are in `synthgpt.codec`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# isort: off
from . import native  # noqa: F401  (first: on import it decides whether compiled modules or sources load)
# isort: on
from . import generators
from .clock import Clock, FixedClock, StepClock, SystemClock, parse_clock
from .engine import MockGPT
from .errors import (
    ContextWindowExceeded,
    DrawError,
    NoRuleMatched,
    RequestError,
    RuleError,
    SchemaError,
    SynthGPTError,
    UnknownNameError,
)
from .explain import Explanation
from .generators.embedding import Embeddings, embed_text
from .journal import CallRecord, Journal
from .limits import Limits
from .model import (
    Choice,
    ErrorSpec,
    Fault,
    Message,
    ModelOutput,
    ModelRequest,
    ReasoningPart,
    StreamPlan,
    TextOut,
    Tool,
    ToolCall,
    ToolCallPart,
    ToolChoice,
    Usage,
)
from .profiles import ModelProfile
from .rules import Rule, RuleSet, matchers
from .rules.trace import RuleVerdict

if TYPE_CHECKING:
    from .journal.sqlite import SQLiteJournal
    from .rules.loader import LoadedRules, RuleFileError, load_files, load_text

__version__ = "0.1.0"

__all__ = [
    "CallRecord",
    "Choice",
    "Clock",
    "ContextWindowExceeded",
    "DrawError",
    "Embeddings",
    "ErrorSpec",
    "Explanation",
    "Fault",
    "FixedClock",
    "Journal",
    "Limits",
    "LoadedRules",
    "Message",
    "MockGPT",
    "ModelOutput",
    "ModelProfile",
    "ModelRequest",
    "NoRuleMatched",
    "ReasoningPart",
    "RequestError",
    "Rule",
    "RuleError",
    "RuleFileError",
    "RuleSet",
    "RuleVerdict",
    "SQLiteJournal",
    "SchemaError",
    "StepClock",
    "StreamPlan",
    "SynthGPTError",
    "SystemClock",
    "TextOut",
    "Tool",
    "ToolCall",
    "ToolCallPart",
    "ToolChoice",
    "UnknownNameError",
    "Usage",
    "__version__",
    "embed_text",
    "generators",
    "load_files",
    "load_text",
    "matchers",
    "parse_clock",
]

# The rule-file loader (YAML, the file schema) is imported on first use: `import synthgpt` stays light,
# and `python -m synthgpt.rules.spec` does not find its own module half-imported.
# So is the SQLite journal (sqlite3, ~1.4 MB of a server's memory), with the first use of it.
_LAZY = {
    "LoadedRules": "synthgpt.rules.loader", "RuleFileError": "synthgpt.rules.loader",
    "load_files": "synthgpt.rules.loader", "load_text": "synthgpt.rules.loader",
    "SQLiteJournal": "synthgpt.journal.sqlite",
}  # fmt: skip


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'synthgpt' has no attribute {name!r}")
