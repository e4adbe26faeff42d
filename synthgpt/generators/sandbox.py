"""Where templates render: plain read-only data, no method calls, and a budget of operations and size.

Rule templates may be written by someone other than the server's operator, and requests by anyone. Jinja2's
sandbox alone only hides `_`-prefixed attributes, so the public methods of live objects stayed reachable
(pydantic's deprecated `parse_raw(…, allow_pickle=True)` ran `pickle.loads`). Here, in layers:
- templates see plain data only (`template_data`: dicts, lists, strings, numbers), never model objects;
- no method of any value can be called (`_Sandbox.call`): only `Helper`s (the registered generators and
  the documented helpers), macros, `namespace()`, `dict()` and `loop.cycle`/`loop.changed`;
- a dict's attributes are its keys, never its methods (`{{ d.items }}` reads the key "items");
- the work a render may do is budgeted (`Budget`, from the request's `Limits`): loop iterations and
  `range` items count against `template_ops`; any string or list built by `*`, `+`, `~`, `%`, a sizing
  filter or the output itself against `max_answer_bytes`; big integer arithmetic is refused. Going over is
  a DrawError (code `draw_over_budget`), raised before the big value is built.
"""

from __future__ import annotations

import contextvars
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

import jinja2
from jinja2 import nodes
from jinja2.exceptions import SecurityError
from jinja2.runtime import LoopContext, Macro
from jinja2.sandbox import ImmutableSandboxedEnvironment
from jinja2.utils import Namespace
from jinja2.visitor import NodeTransformer

from ..errors import DrawError
from ..limits import DEFAULT_LIMITS, Limits
from ..model import Message, ModelRequest, Tool

__all__ = [
    "Budget", "Helper", "OverBudget", "compile_template", "render", "render_budget", "render_with", "sandbox",
    "template_data",
]  # fmt: skip

_MAX_INT_BITS = 1 << 16  # ~20,000 digits: far past any number a template prints, cheap to compute
_PRIVATE_HEADERS = frozenset({"authorization", "api-key", "x-api-key", "cookie", "proxy-authorization"})


class OverBudget(DrawError):
    """A template went over its operation or size budget."""

    code = "draw_over_budget"


class Helper:
    """A function templates may call: a generator's drawer or a documented helper. Nothing else is."""

    __slots__ = ("fn",)

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn = fn

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.fn(*args, **kwargs)

    def __str__(self) -> str:
        # `{{ fake }}` would write the object's address: different in every process, and never what was meant
        raise DrawError(
            "template: a function of templates written without calling it (`{{ fake }}`): call it, e.g. "
            "`{{ fake('name') }}`, `{{ integer(1, 9) }}`, `{{ tool_result('weather') }}`"
        )

    def __repr__(self) -> str:
        return "<template function>"  # the same in every process, inside a list or a dict written out


class Budget:
    """What one render may still do: `template_ops` operations, no value over `max_answer_bytes` long."""

    __slots__ = ("max_ops", "max_size", "ops")

    def __init__(self, limits: Limits) -> None:
        self.ops = 0
        self.max_ops = limits.template_ops
        self.max_size = limits.max_answer_bytes

    def charge(self, n: int = 1) -> None:
        self.ops += n
        if self.ops > self.max_ops:
            raise OverBudget(
                f"template: over its budget of {self.max_ops} operations (template_ops: loop iterations "
                "and range items)"
            )

    def size(self, n: int, what: str) -> None:
        if n > self.max_size:
            raise OverBudget(
                f"template: {what} of {n} characters is over the size budget of {self.max_size} "
                "(max_answer_bytes)"
            )


_BUDGET: contextvars.ContextVar[Budget | None] = contextvars.ContextVar("synthgpt_budget", default=None)


def _budget() -> Budget:
    # outside a render (a filter called by a test, say): the default limits
    return _BUDGET.get() or Budget(DEFAULT_LIMITS)


def _sized(v: Any) -> int | None:
    return len(v) if isinstance(v, str | list | tuple) else None


def _whole(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


_FORMAT_SPEC = re.compile(r"%(?:\([^)]*\))?[#0\- +]*(\*|\d*)(?:\.(\*|\d*))?")


def _check_format(fmt: Any) -> None:
    """`'%0300000000d' % 1` builds 300 MB: a width or precision over the size budget is refused first."""
    if not isinstance(fmt, str):
        return
    b = _budget()
    for width, precision in _FORMAT_SPEC.findall(fmt):
        for n in (width, precision):
            if n == "*":
                raise OverBudget("template: `*` widths in a format string are not supported (size budget)")
            if n:
                b.size(int(n) if len(n) < 12 else b.max_size + 1, "a formatted field")


def _binop(op: str, left: Any, right: Any) -> None:
    b = _budget()
    if op == "*":
        for seq, n in ((left, right), (right, left)):
            if _sized(seq) is not None and _whole(n):
                b.size(len(seq) * max(n, 0), f"`*` repeating a {type(seq).__name__}")
        if _whole(left) and _whole(right) and left.bit_length() + right.bit_length() > _MAX_INT_BITS:
            raise OverBudget(f"template: `*` of integers over {_MAX_INT_BITS} bits (size budget)")
    elif op == "**":
        big = _whole(left) and _whole(right) and abs(left) > 1 and right > 0
        if big and (right > _MAX_INT_BITS or left.bit_length() * right > _MAX_INT_BITS):
            raise OverBudget(f"template: `**` giving an integer over {_MAX_INT_BITS} bits (size budget)")
    elif op == "+":
        a, c = _sized(left), _sized(right)
        if a is not None and c is not None:
            b.size(a + c, f"`+` joining a {type(left).__name__}")
    elif op == "%" and isinstance(left, str):
        _check_format(left)


def _iterate(iterable: Any) -> Iterator[Any]:
    """Every `{% for %}` loop iterates through this: one operation per item."""
    b = _budget()
    for item in iterable:
        b.charge()
        yield item


def _concat(items: Iterable[Any]) -> str:
    """The `~` operator, with the result's size checked before it is joined."""
    parts = [str(x) for x in items]
    _budget().size(sum(map(len, parts)), "`~` joining strings")
    return "".join(parts)


def _range(*args: int) -> range:
    r = range(*args)
    limit = _budget().max_ops
    if len(r) > limit:
        raise OverBudget(f"template: range of {len(r)} items is over the budget of {limit} (template_ops)")
    return r


def _pre_checks() -> dict[str, Callable[[Any, tuple[Any, ...], dict[str, Any]], None]]:
    """Filters whose numeric arguments size their result: checked before the filter builds it."""

    def numbers(value: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        b = _budget()
        for n in (*args, *kwargs.values()):
            if _whole(n):
                b.size(n + (_sized(value) or 0), "a filter's result")

    def replace(value: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        old, new = [*args, None, None][:2]
        if isinstance(value, str) and isinstance(old, str) and isinstance(new, str):
            hits = value.count(old) if old else len(value) + 1
            _budget().size(len(value) + hits * max(0, len(new) - len(old)), "`replace`'s result")

    def join(value: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        sep = args[0] if args else kwargs.get("d", "")
        n = _sized(value)
        if isinstance(sep, str) and n is not None:
            _budget().size(len(sep) * n, "`join`'s result")

    checks: dict[str, Callable[[Any, tuple[Any, ...], dict[str, Any]], None]] = dict.fromkeys(
        ("center", "indent", "batch", "slice", "wordwrap", "truncate"), numbers
    )
    checks.update(replace=replace, join=join, format=lambda value, args, kwargs: _check_format(value))
    return checks


def _guard_filter(name: str, fn: Callable[..., Any], check: Callable[..., None] | None) -> Callable[..., Any]:
    # a filter marked pass_context/pass_environment gets that first: the filtered value comes after it
    skip = 1 if getattr(fn, "jinja_pass_arg", None) is not None else 0

    def guarded(*args: Any, **kwargs: Any) -> Any:
        if check is not None and len(args) > skip:
            check(args[skip], args[skip + 1 :], kwargs)
        out = fn(*args, **kwargs)
        n = _sized(out)
        if n is not None:
            _budget().size(n, f"`{name}`'s result")
        return out

    if skip:
        guarded.jinja_pass_arg = fn.jinja_pass_arg  # type: ignore[attr-defined]
    return guarded


def _callable_here(obj: Any) -> bool:
    if isinstance(obj, Helper | Macro) or obj is Namespace or obj is dict:
        return True
    if isinstance(obj, LoopContext):  # `loop(children)` in a recursive loop
        return True
    owner = getattr(obj, "__self__", None)
    return isinstance(owner, LoopContext) and getattr(obj, "__name__", "") in ("cycle", "changed")


class _Sandbox(ImmutableSandboxedEnvironment):
    intercepted_binops = frozenset({"*", "**", "+", "%"})

    def is_safe_attribute(self, obj: Any, attr: str, value: Any) -> bool:
        if callable(value) and not _callable_here(value):
            return False  # a method of data: never reachable, let alone callable
        return super().is_safe_attribute(obj, attr, value)

    def getattr(self, obj: Any, attribute: str) -> Any:
        if isinstance(obj, dict):  # a dict's attributes are its keys, never its methods
            try:
                return obj[attribute]
            except KeyError:
                return self.undefined(obj=obj, name=attribute)
        return super().getattr(obj, attribute)

    def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        if not _callable_here(__obj):
            what = getattr(__obj, "__name__", None) or type(__obj).__name__
            raise SecurityError(
                f"{what!r} is not callable in a template: templates call only generators and the documented "
                "helpers (fake, tool_result, range, dict, namespace); use a filter instead of a method"
            )
        if isinstance(__obj, LoopContext) and args and _sized(args[0]) is not None:
            _budget().charge(len(args[0]))
        return __context.call(__obj, *args, **kwargs)

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        _binop(operator, left, right)
        return self.binop_table[operator](left, right)


class _Budgeted(NodeTransformer):
    """Loops iterate through `_synthgpt_iter`, `~` joins through `_synthgpt_concat`: both count."""

    def visit_For(self, node: nodes.For) -> nodes.Node:
        self.generic_visit(node)
        node.iter = nodes.Call(nodes.Name("_synthgpt_iter", "load"), [node.iter], [], None, None)
        return node

    def visit_Concat(self, node: nodes.Concat) -> nodes.Node:
        self.generic_visit(node)
        items = nodes.List(list(node.nodes))
        return nodes.Call(nodes.Name("_synthgpt_concat", "load"), [items], [], None, None)


_ENV: _Sandbox | None = None


def _random_filter(context: Any, seq: Any) -> Any:
    return context["_synthgpt_pick"](seq)


def sandbox() -> _Sandbox:
    global _ENV
    if _ENV is None:
        env = _Sandbox(undefined=jinja2.StrictUndefined, autoescape=False, keep_trailing_newline=True)
        # `lipsum()` reads the global RNG; `cycler()`/`joiner()` work only through method calls
        for name in ("lipsum", "cycler", "joiner"):
            env.globals.pop(name, None)
        env.globals.update(
            range=Helper(_range), _synthgpt_iter=Helper(_iterate), _synthgpt_concat=Helper(_concat)
        )
        # Jinja's own `random` filter reads the global RNG; ours asks the render's seeded picker.
        env.filters["random"] = jinja2.pass_context(_random_filter)
        checks = _pre_checks()
        env.filters = {name: _guard_filter(name, fn, checks.get(name)) for name, fn in env.filters.items()}
        _ENV = env
    return _ENV


def compile_template(ast: nodes.Template) -> jinja2.Template:
    """The parsed template, budgeted, compiled in the sandbox."""
    env = sandbox()
    code = env.compile(_Budgeted().visit(ast))
    return env.template_class.from_code(env, code, env.make_globals(None), None)


def render(template: jinja2.Template, scope: Mapping[str, Any], limits: Limits) -> str:
    """Render within `limits`; a render inside another (a template drawing a template) shares its budget."""
    return render_with(lambda budget: _joined(template.generate(scope), budget), limits)


def render_with(render: Callable[[Budget], str], limits: Limits) -> str:
    """`render(budget)`, the budget this render's draws see: the enclosing render's, else one of `limits`
    (a template simple enough to render without Jinja, `template_plain.PlainRender`, renders this way)."""
    outer = _BUDGET.get()
    budget = outer or Budget(limits)
    token = _BUDGET.set(budget)
    try:
        return render(budget)
    finally:
        _BUDGET.reset(token)


def render_budget(limits: Limits) -> Budget:
    """The budget a render starting here works within: the enclosing render's, else a new one of `limits`
    (for a render whose draws never read it: `render_with` makes it theirs)."""
    return _BUDGET.get() or Budget(limits)


def _joined(chunks: Iterable[str], budget: Budget) -> str:
    out: list[str] = []
    size = 0
    max_size = budget.max_size
    for chunk in chunks:
        size += len(chunk)
        if size > max_size:  # (the check `budget.size` makes, without a call per chunk)
            budget.size(size, "the rendered text")
        out.append(chunk)
    return "".join(out)


# -- the data templates see --

_last: tuple[ModelRequest | None, dict[str, Any]] = (None, {})


def _message(m: Message) -> dict[str, Any]:
    return m.model_dump(mode="json")


def _tool(t: Tool) -> dict[str, Any]:
    return t.model_dump(mode="json")


def template_data(req: ModelRequest) -> dict[str, Any]:
    """The request as plain data: its fields (headers as a dict, credentials left out) and the derived
    `last_user`, `system`, `turn`, `tool_results` and `stop_sequences`. One copy per request, shared by
    its draws: templates cannot change it (no method calls, no item assignment)."""
    global _last
    last_req, data = _last
    if last_req is req:
        return data
    data = req.model_dump(mode="json", by_alias=True, exclude={"headers", "messages", "tools"})
    data["headers"] = {k: v for k, v in req.headers if k not in _PRIVATE_HEADERS}
    data["messages"] = [_message(m) for m in req.messages]
    data["tools"] = [_tool(t) for t in req.tools]
    data.update(
        last_user=req.last_user,
        system=req.system,
        turn=req.turn,
        tool_results=[_message(m) for m in req.tool_results],
        stop_sequences=list(req.stop_sequences),
    )
    _last = (req, data)
    return data
