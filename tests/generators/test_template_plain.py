"""Templates of text, names and constant calls render without Jinja (`template_plain`), to the same text,
with the same draws and the same errors as Jinja's render."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from synthgpt.errors import DrawError
from synthgpt.generators import registry
from synthgpt.generators.core import DrawContext, Generator
from synthgpt.generators.template import Template
from synthgpt.limits import DEFAULT_LIMITS
from synthgpt.model import ModelRequest

_REQUEST = ModelRequest.from_dict({"model": "gpt-x", "messages": [{"role": "user", "content": "Hi there"}]})

PLAIN = [
    "",
    "just text\n",
    "Dear {{ fake('name') }}, order {{ fake('bothify', text='??-#####') }} to {{ fake('city') }}.",
    "{{ last_user }} / {{ model }} / {{ now }} / {{ turn }} / {{ call_index }}",
    "{{ integer(1, 6) }} and {{ fake('name') }} and {{ integer(lo=5, hi=9) }}{{ fake('postcode') }}",
    "{{ fake('pyint', min_value=1, max_value=3) }} {{ fake('pybool') }} {{ word }}",
    "{{ system }}{# a comment #} tail {{ fake('day_of_week') }}",
]
NOT_PLAIN = [
    "{{ fake('name') | upper }}",
    "{% for i in range(2) %}{{ fake('name') }}{% endfor %}",
    "{{ integer(1, -1 * -6) }}",
    "{{ request.model }}",
    "{{ 'x' ~ last_user }}",
]


def _draw(t: Template, seed: int, captures: dict[str, str] | None = None, **limits: Any) -> str:
    ctx = DrawContext(_REQUEST, seed, now=1_767_225_600, captures=captures,
                      limits=dataclasses.replace(DEFAULT_LIMITS, **limits))  # fmt: skip
    return t.draw(ctx)


def _jinja_only(source: str, **known: Any) -> Template:
    t = Template(source, **known)
    t._plain = None
    return t


@pytest.mark.parametrize("source", PLAIN)
def test_plain_templates_render_what_jinja_renders(source: str) -> None:
    known = {"known_names": ["word"]}
    plain, jinja = Template(source, **known), _jinja_only(source, **known)
    assert plain._plain is not None
    for seed in range(200):
        captures = {"word": f"w{seed}"}
        assert _draw(plain, seed, captures) == _draw(jinja, seed, captures)


@pytest.mark.parametrize("source", NOT_PLAIN)
def test_other_templates_are_left_to_jinja(source: str) -> None:
    assert Template(source)._plain is None


def test_a_capture_named_like_a_helper_gets_jinjas_error() -> None:
    source = "{{ fake('name') }}"
    errors = []
    for t in (Template(source, known_names=["fake"]), _jinja_only(source, known_names=["fake"])):
        with pytest.raises(DrawError) as exc:
            _draw(t, 1, {"fake": "not a helper"})
        errors.append(str(exc.value))
    assert errors[0] == errors[1]


def test_the_size_budget_is_checked_chunk_by_chunk_as_jinja_does() -> None:
    source = "{{ fake('name') }} and some words {{ fake('city') }} and more {{ last_user }}"
    errors = []
    for t in (Template(source), _jinja_only(source)):
        with pytest.raises(DrawError) as exc:
            _draw(t, 3, max_answer_bytes=30)
        errors.append(str(exc.value))
    assert errors[0] == errors[1]


class _Stops(Generator[Any]):
    def draw(self, ctx: DrawContext) -> Any:
        raise StopIteration

    def __repr__(self) -> str:
        return "stops()"


def test_a_helper_raising_stop_iteration_gets_jinjas_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(registry.REGISTRY, "stops", lambda: _Stops())
    errors = []
    for t in (Template("a {{ stops() }}"), _jinja_only("a {{ stops() }}")):
        with pytest.raises(DrawError) as exc:
            _draw(t, 1)
        errors.append(str(exc.value))
    assert errors[0] == errors[1]


def test_template_fork_keys_are_the_labels_keys() -> None:
    from synthgpt.generators.template import template_key
    from synthgpt.seeding import label_key

    for i in (0, 1, 63, 64, 200, 1023, 1024, 5000):
        assert template_key(i) == label_key(("template", i))
