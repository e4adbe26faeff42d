"""The template sandbox: templates see plain read-only data, call only generators and documented helpers,
and stay within an operation and size budget (issue 11, sections 1 and 2)."""

from __future__ import annotations

import pathlib
import pickle
import time
from typing import Any

import pytest

from synthgpt import generators as g
from synthgpt.errors import DrawError, RuleError
from synthgpt.generators.core import DrawContext
from synthgpt.generators.template import Template
from synthgpt.limits import Limits
from synthgpt.model import ModelRequest


class _Touch:
    """Unpickling this touches a marker file: proof that `pickle.loads` ran, and nothing worse."""

    def __init__(self, path: pathlib.Path) -> None:
        self.path = path

    def __reduce__(self) -> Any:
        return (pathlib.Path.touch, (self.path,))


@pytest.fixture
def unchecked(monkeypatch: pytest.MonkeyPatch) -> None:
    """Templates built without the build-time scope check: the runtime sandbox must hold on its own."""
    monkeypatch.setattr("synthgpt.generators.template_scope.check_scope", lambda *a, **k: None)


def _request(text: str) -> dict[str, Any]:
    return {"model": "m", "messages": [{"role": "user", "content": text}]}


@pytest.mark.usefixtures("unchecked")
def test_pickle_through_parse_raw_never_runs(tmp_path: pathlib.Path) -> None:
    marker = tmp_path / "pwned"
    payload = pickle.dumps(_Touch(marker), protocol=0).decode()
    t = g.template("{{ request.parse_raw(last_user, proto='pickle', allow_pickle=True) }}")
    with pytest.raises(DrawError):
        t.example(request=_request(payload))
    assert not marker.exists()


@pytest.mark.usefixtures("unchecked")
def test_parse_file_cannot_read_files(tmp_path: pathlib.Path) -> None:
    secret = tmp_path / "secret.json"
    secret.write_text('["SECRET-MARKER-123"]')
    t = g.template("{{ request.parse_file(last_user) }}")
    with pytest.raises(DrawError) as caught:
        t.example(request=_request(str(secret)))
    assert "SECRET-MARKER-123" not in str(caught.value)


@pytest.mark.parametrize(
    "source",
    [
        "{{ request.model_dump() }}",
        "{{ messages[0].model_copy() }}",
        "{{ last_user.upper() }}",
        "{{ captures.get('who', 'x') }}",
        "{{ messages.append(1) }}",
        "{{ tools.__class__ }}",
        "{{ request.headers.items() }}",
        "{% set r = request %}{{ r.json() }}",
        "{{ fake('date_object').strftime('%Y') }}",
    ],
)
@pytest.mark.usefixtures("unchecked")
def test_no_method_of_any_data_is_callable(source: str) -> None:
    t = g.template(source)
    with pytest.raises(DrawError, match="template"):
        t.example(request=_request("hi"))


def test_templates_see_plain_data_with_the_documented_fields() -> None:
    request = {
        "model": "m",
        "messages": [
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": "weather in Paris?"},
        ],
        "tools": [{"name": "get_weather", "description": "Weather", "parameters": {"type": "object"}}],
    }
    t = g.template(
        "{{ request.model }}|{{ request.last_user }}|{{ request.system }}|{{ messages[1].role }}|"
        "{{ messages[1].content }}|{{ tools[0].name }}|{{ tools[0].parameters.type }}|{{ request.n }}|"
        "{{ request.messages|length }}|{{ captures|length }}"
    )
    expected = "m|weather in Paris?|be brief|user|weather in Paris?|get_weather|object|1|2|0"
    assert t.example(request=request) == expected


def test_a_dict_key_named_like_a_method_reads_the_key() -> None:
    t = g.template("{{ tool_result().items }}|{{ tool_result().keys|length }}")
    req = {
        "model": "m",
        "messages": [
            {"role": "user", "content": "go"},
            {"role": "assistant", "tool_calls": [{"id": "c1", "name": "f", "arguments": "{}"}]},
            {"role": "tool", "tool_call_id": "c1", "content": '{"items": 3, "keys": [1, 2]}'},
        ],
    }
    assert t.example(request=req) == "3|2"


def test_loop_helpers_still_work() -> None:
    t = g.template("{% for x in [1, 2, 3] %}{{ loop.cycle('a', 'b') }}{{ x }}{% endfor %}")
    assert t.example() == "a1b2a3"


def _draw(source: str, limits: Limits | None = None) -> str:
    t = g.template(source)
    ctx = DrawContext(ModelRequest(), 0, limits=limits)
    return t.draw(ctx)


@pytest.mark.parametrize(
    "source",
    [
        "{{ 'x' * 300000000 }}",
        "{{ ['x'] * 300000000 }}",
        "{{ 9 ** 999999999 }}",
        "{% set ns = namespace(n=99) %}{% for i in range(30) %}{% set ns.n = ns.n ** 2 %}{% endfor %}",
        "{{ '%0300000000d' % 1 }}",
        "{{ '%0300000000d'|format(1) }}",
        "{{ 'x'|center(300000000) }}",
        "{{ 'x'|indent(300000000, true) }}",
        "{% set ns = namespace(s='xx') %}{% for i in range(40) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}",
        "{% set ns = namespace(s='xx') %}{% for i in range(40) %}{% set ns.s = ns.s + ns.s %}{% endfor %}",
        "{% set ns = namespace(s=3) %}{% for i in range(40) %}{% set ns.s = ns.s * ns.s %}{% endfor %}",
        "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
        "{% for i in range(100000) %}{% for j in [1,2,3,4,5,6,7,8,9,10] %}{% endfor %}{% endfor %}",
        "{% set a32 = 'a' * 32 %}{{ 'aaaaaaaa'|replace('a', a32)|replace('a', a32)|replace('a', a32)"
        "|replace('a', a32)|replace('a', a32) }}",
        "{% for i in range(20000) %}{{ 'y' * 1000 }}{% endfor %}",
    ],
)
def test_a_template_over_budget_is_a_draw_error_not_a_hang(source: str) -> None:
    started = time.perf_counter()
    with pytest.raises(DrawError, match="budget"):
        _draw(source, Limits(max_answer_bytes=10_000_000, template_ops=100_000))
    assert time.perf_counter() - started < 2.0


def test_the_budget_follows_the_limits() -> None:
    assert len(_draw("{{ 'x' * 5000 }}", Limits(max_answer_bytes=5000))) == 5000
    with pytest.raises(DrawError, match="5000"):
        _draw("{{ 'x' * 5001 }}", Limits(max_answer_bytes=5000))
    assert _draw("{% for i in range(100) %}.{% endfor %}", Limits(template_ops=100)) == "." * 100
    with pytest.raises(DrawError, match="template_ops"):
        _draw("{% for i in range(101) %}.{% endfor %}", Limits(template_ops=100))


@pytest.mark.parametrize(
    ("source", "needle"),
    [
        ("{{ request.parse_raw('x') }}", "parse_raw"),
        ("{{ request.parse_file('/etc/passwd') }}", "parse_file"),
        ("{{ request.model_dump }}", "model_dump"),
        ("{{ messages[0].model_copy() }}", "model_copy"),
        ("{{ request.nope }}", "nope"),
        ("{{ tools[0].function }}", "function"),
        ("{{ last_user.upper() }}", "upper"),
        ("{{ x.__class__ }}", "__class__"),
    ],
)
def test_building_a_template_flags_attributes_outside_the_documented_scope(source: str, needle: str) -> None:
    with pytest.raises(RuleError, match=needle):
        Template(source, known_names=["x"])


def test_documented_attributes_and_dynamic_data_pass_the_check() -> None:
    Template(
        "{{ request.model }}{{ request.last_user }}{{ messages[0].content }}{{ tools[0].parameters }}"
        "{% for m in messages %}{{ m.role }}{% endfor %}{{ tool_result('x').anything }}"
        "{{ from_schema({'type': 'object'}).whatever }}{{ captures.who }}{{ loop_free }}",
        known_names=["loop_free"],
    )
