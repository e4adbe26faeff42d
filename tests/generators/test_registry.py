"""The generator registry is filled by `@registered` on the public functions: one source for rule files,
templates and docs, and a leaf module (no import cycle with `template`)."""

from __future__ import annotations

import ast
import inspect

from synthgpt import generators as g
from synthgpt.generators import registry


def test_every_entry_is_the_public_function_of_that_name() -> None:
    aliases = {"echo": g.last_user, "json_object": g.objects}
    for name, factory in g.REGISTRY.items():
        assert factory is aliases.get(name, getattr(g, name)), name
    assert list(g.REGISTRY) == sorted(g.REGISTRY)
    assert "answer" not in g.REGISTRY and "error" not in g.REGISTRY


def test_the_public_functions_carry_the_documentation() -> None:
    for name, factory in g.REGISTRY.items():
        if name not in ("boolean", "integer", "number", "just", "lists", "one_of", "weighted", "words",
                        "sentence", "paragraph", "from_schema", "from_request_schema"):  # fmt: skip
            assert inspect.getdoc(factory), name


def test_the_registry_imports_no_generator() -> None:
    tree = ast.parse(inspect.getsource(registry))
    imported = [n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.level > 0]
    assert imported == ["errors", "core"]  # `core` only under TYPE_CHECKING
