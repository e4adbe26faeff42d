"""Every built-in name a template may read has its value (`template._BUILTINS`, made per render only for
the names a template reads), through the plain path and through Jinja alike."""

from __future__ import annotations

from synthgpt.generators.core import DrawContext
from synthgpt.generators.template import _BUILTIN_ORDER, _BUILTINS, TEMPLATE_NAMES, Template
from synthgpt.model import ModelRequest

REQUEST = ModelRequest.from_dict(
    {
        "model": "gpt-4o",
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Weather in Lisbon?"},
            {"role": "assistant", "content": "",
             "tool_calls": [{"id": "c1", "name": "weather", "arguments": "{}"}]},
            {"role": "tool", "content": '{"temp": 21}', "tool_call_id": "c1"},
        ],
        "tools": [{"name": "weather", "description": "Look it up"}],
    }
)


def _render(source: str) -> str:
    ctx = DrawContext(REQUEST, 5, now=1_700_000_000.5, captures={"city": "Lisbon"}, call_index=3)
    return Template(source, known_names=("city",)).draw(ctx)


def test_every_built_in_name_has_a_maker() -> None:
    assert set(_BUILTINS) == set(_BUILTIN_ORDER) == TEMPLATE_NAMES


def test_the_built_in_values() -> None:
    assert _render("{{ last_user }}|{{ system }}|{{ model }}|{{ turn }}|{{ call_index }}|{{ now }}") == (
        "Weather in Lisbon?|Be brief.|gpt-4o|1|3|1700000000.5"
    )
    assert _render("{{ captures['city'] }} {{ city }} {{ round }}") == "Lisbon Lisbon 1"
    data = "{{ request['model'] }} {{ messages | length }} {{ tools[0]['name'] }}"
    assert _render(data) == "gpt-4o 4 weather"
    results = "{{ tool_results[0]['content'] }} {{ tool_result('weather')['temp'] }}"
    assert _render(results) == '{"temp": 21} 21'
    assert _render("{{ fake('numerify', text='##') | length }}") == "2"
    # the same names through Jinja (a filter keeps a template off the plain path)
    assert _render("{{ last_user | upper }} {{ turn | string }} {{ captures | length }}") == (
        "WEATHER IN LISBON? 1 1"
    )


def test_a_function_written_without_its_call_is_an_error_that_says_so_not_its_address() -> None:
    import pytest

    from synthgpt.errors import DrawError

    for source in ("{{ fake }}", "a {{ integer }} b", "{{ tool_result }}", "{{ fake | string }}"):
        with pytest.raises(DrawError, match=r"a function of templates written without calling it"):
            _render(source)
    # inside a value it is written the same in every process
    assert _render("{{ [fake, 1] }}") == "[<template function>, 1]"
