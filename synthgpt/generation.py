"""`Generation`: what `MockGPT.resolve` returns for one request — the one result every caller reads."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .journal import CallRecord
    from .model import ModelOutput, ModelRequest
    from .rules.rule import Rule

__all__ = ["Generation"]


@dataclass(frozen=True, slots=True)
class Generation:
    """One answered call: the output, the rule that drew it, its journal record, and whether it may be
    replayed (sent again for the same request without drawing: see `MockGPT.resolve`)."""

    output: ModelOutput
    rule: Rule
    record: CallRecord
    replayable: bool

    @property
    def request(self) -> ModelRequest:
        """The neutral request as answered (the journal's copy)."""
        return self.record.request
