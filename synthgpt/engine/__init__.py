"""The engine: `MockGPT` and the steps of one answer, each in its own module.

- `mockgpt.py`: `MockGPT` itself (`resolve`, `generate`, `finish`, `replay`, the journal);
- `budget.py`: what a request leaves its answer (prompt tokens, output limit, profile);
- `drawing.py`: drawing the answer's choices from the rule's generator, and the `ModelOutput`;
- `shaping.py`: stop sequences, the token limit, stream deltas, usage;
- `calls.py`: journal records, replays, released claims;
- `arguments.py`: what the constructor accepts for rules and clock.

The rule search itself is the rules package's (`rules/dispatch.py`, `RuleSet.resolve`).
"""

from .budget import Budget
from .mockgpt import FinishError, MockGPT, OnFinish

__all__ = ["Budget", "FinishError", "MockGPT", "OnFinish"]
