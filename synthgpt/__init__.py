"""synthgpt: deterministic synthetic responses for LLM APIs.

    from synthgpt import MockGPT, Rule, generators as g, matchers as m
"""

from __future__ import annotations

from . import generators
from .clock import Clock, FixedClock, StepClock, SystemClock
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
from .journal import CallRecord, Journal
from .mock import MockGPT
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
from .rules import Rule, RuleSet, matchers

__version__ = "0.1.0"

__all__ = [
    "CallRecord",
    "Choice",
    "Clock",
    "ContextWindowExceeded",
    "DrawError",
    "ErrorSpec",
    "Fault",
    "FixedClock",
    "Journal",
    "Message",
    "MockGPT",
    "ModelOutput",
    "ModelRequest",
    "NoRuleMatched",
    "ReasoningPart",
    "RequestError",
    "Rule",
    "RuleError",
    "RuleSet",
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
    "generators",
    "matchers",
]
