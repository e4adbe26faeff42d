"""The documented scope of templates, and the build-time check that a template stays inside it.

The sandbox (`generators.sandbox`) is what keeps a render safe; this check is what makes a rule file with
`{{ request.parse_raw(…) }}` or `{{ last_user.upper() }}` fail `synthgpt check` (and loading) with a
message naming the attribute, instead of failing at draw time. It reads the template's syntax tree:
- no `_`-prefixed attribute anywhere;
- no method call (`x.f(…)`), except `loop.cycle(…)` and `loop.changed(…)`;
- `request`, `messages[i]`, `tools[i]` and `tool_results[i]` have known fields: reading any other is an
  error naming the fields there are. Values whose shape the rule decides (captures, `tool_result()`,
  generator results) are free-form.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from jinja2 import nodes

from ..errors import RuleError

__all__ = ["SCOPE", "check_scope"]

_ANY: dict[str, Any] = {}  # free-form below this point

_TOOL_CALL = {"id": None, "name": None, "arguments": None}
_MESSAGE: dict[str, Any] = {
    "role": None, "content": None, "parts": [_ANY], "tool_calls": [_TOOL_CALL], "tool_call_id": None,
    "name": None, "is_error": None,
}  # fmt: skip
_TOOL: dict[str, Any] = {"name": None, "description": None, "parameters": _ANY, "strict": None}
_REQUEST: dict[str, Any] = {
    "api": None, "model": None, "messages": [_MESSAGE], "tools": [_TOOL],
    "tool_choice": {"mode": None, "name": None}, "response_schema": _ANY, "max_output_tokens": None,
    "n": None, "stream": None, "stream_options": _ANY, "parallel_tool_calls": None, "reasoning": _ANY,
    "headers": _ANY, "inputs": [None], "dimensions": None, "extra": _ANY,
    "last_user": None, "system": None, "turn": None, "tool_results": [_MESSAGE], "stop_sequences": [None],
}  # fmt: skip

SCOPE: dict[str, Any] = {
    "request": _REQUEST,
    "messages": [_MESSAGE],
    "tools": [_TOOL],
    "tool_results": [_MESSAGE],
}
"""The shape of the built-in data names: a dict's keys are its fields, a one-item list its items'
shape, `None` a scalar, an empty dict anything."""

_LOOP_METHODS = frozenset({"cycle", "changed"})


def _chain(node: nodes.Node) -> tuple[str, list[str | None]] | None:
    """`request.messages[0].content` -> ("request", ["messages", None, "content"]): a root name and the
    fields read from it (None for an index); None when the chain does not start at a name."""
    path: list[str | None] = []
    while True:
        if isinstance(node, nodes.Getattr):
            path.append(node.attr)
            node = node.node
        elif isinstance(node, nodes.Getitem):
            arg = node.arg
            path.append(arg.value if isinstance(arg, nodes.Const) and isinstance(arg.value, str) else None)
            node = node.node
        elif isinstance(node, nodes.Name):
            return node.name, path[::-1]
        else:
            return None


def _shown(root: str, path: list[str | None]) -> str:
    return root + "".join(f".{p}" if p is not None else "[…]" for p in path)


def _walk_scope(root: str, path: list[str | None]) -> None:
    shape: Any = SCOPE[root]
    for i, field in enumerate(path):
        if shape is _ANY or shape is None:
            return
        if isinstance(shape, list):
            if field is not None:
                raise RuleError(
                    f"template reads `{_shown(root, path[: i + 1])}`: `{_shown(root, path[:i])}` is a list; "
                    "index it (`[0]`) or loop over it"
                )
            shape = shape[0]
        elif field is None:
            continue  # a computed key: nothing to check statically
        elif field not in shape:
            raise RuleError(
                f"template reads `{_shown(root, path[: i + 1])}`, which is outside the documented scope "
                f"of templates; `{_shown(root, path[:i])}` has: {', '.join(shape)}"
            )
        else:
            shape = shape[field]


def check_scope(ast: nodes.Template, shadowed: Iterable[str] = ()) -> None:
    """A RuleError for the first attribute or method outside the documented scope (see the module doc).
    `shadowed`: names the rule defines itself (captures), which are not the built-ins of that name."""
    own = set(shadowed) | {n.name for n in ast.find_all(nodes.Name) if n.ctx in ("store", "param")}
    for node in ast.find_all(nodes.Getattr):
        if node.attr.startswith("_"):
            raise RuleError(f"template reads `{node.attr}`: names starting with `_` are never reachable")
    for call in ast.find_all(nodes.Call):
        fn = call.node
        if isinstance(fn, nodes.Getattr):
            chain = _chain(fn)
            if chain is not None and chain[0] == "loop" and fn.attr in _LOOP_METHODS:
                continue
            raise RuleError(
                f"template calls the method `{fn.attr}`: templates call only generators and the documented "
                "helpers, never methods of data; use a filter instead (`|upper`, `|default(…)`, …)"
            )
    for read in ast.find_all((nodes.Getattr, nodes.Getitem)):
        chain = _chain(read)
        if chain is not None and chain[0] in SCOPE and chain[0] not in own:
            _walk_scope(*chain)
