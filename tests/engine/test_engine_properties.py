"""Properties of the seeding: equal inputs give equal outputs, seeds matter, fields are independent."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from synthgpt import MockGPT, ModelRequest, Rule
from synthgpt import generators as g
from synthgpt import matchers as m
from synthgpt.generators import DrawContext

SETTINGS = settings(max_examples=60, deadline=None, derandomize=True)

texts = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=80)
seeds = st.integers(min_value=0, max_value=2**64 - 1)
messages = st.lists(
    st.fixed_dictionaries({"role": st.sampled_from(["system", "user", "assistant"]), "content": texts}),
    min_size=1,
    max_size=4,
)
requests = st.fixed_dictionaries(
    {"model": st.sampled_from(["gpt-4o", "claude-x", "synth-1"]), "messages": messages},
    optional={"max_output_tokens": st.integers(1, 64), "n": st.integers(1, 3)},
)


def rich_rules() -> list[Rule]:
    """Rules that draw from every source of randomness: the rng, forks, Faker, templates, ids, lists."""
    return [
        Rule(
            "data",
            m.model("gpt-*"),
            g.objects({"id": g.id("u"), "who": g.fake("name"), "xs": g.lists(g.uuid())}),
        ),
        Rule(
            "tpl",
            m.model("claude-*"),
            g.template("{{ fake('city') }} {{ integer(1, 9) }} {{ [1,2,3]|random }}"),
        ),
        Rule("text", m.always(), g.reply(text=g.paragraph(), reasoning=g.reasoning())),
    ]


@SETTINGS
@given(seed=seeds, body=requests)
def test_same_seed_and_request_give_equal_outputs(seed: int, body: dict[str, Any]) -> None:
    first = MockGPT(rich_rules(), seed=seed).generate(body)
    # a second engine, and the same engine after other calls: call order must not matter
    other = MockGPT(rich_rules(), seed=seed)
    other.generate({"model": "synth-1", "messages": [{"role": "user", "content": "something else first"}]})
    second = other.generate(body)
    assert first == second
    assert first.model_dump_json() == second.model_dump_json()


@SETTINGS
@given(a=seeds, b=seeds, body=requests)
def test_different_seeds_give_different_outputs(a: int, b: int, body: dict[str, Any]) -> None:
    if a == b:
        return
    body = {**body, "max_output_tokens": None}
    rules = [Rule("text", m.always(), g.paragraph(3, 5))]  # ~40 words of 150: collisions are negligible
    assert MockGPT(rules, seed=a).generate(body).text != MockGPT(rules, seed=b).generate(body).text


@SETTINGS
@given(seed=seeds, body=requests)
def test_different_requests_give_different_outputs(seed: int, body: dict[str, Any]) -> None:
    rules = [Rule("text", m.always(), g.paragraph(3, 5))]
    changed = {**body, "messages": [*body["messages"], {"role": "user", "content": "and one more thing"}]}
    mock = MockGPT(rules, seed=seed)
    assert mock.generate(body).text != mock.generate(changed).text


field_gens = st.sampled_from(
    [
        g.integer(0, 10**9),
        g.fake("name"),
        g.id("x"),
        g.uuid(),
        g.words(),
        g.lists(g.number(), 1, 3),
        g.template("{{ integer(1, 100) }}"),
    ]
)


@SETTINGS
@given(
    seed=seeds,
    fields=st.dictionaries(st.text(min_size=1, max_size=8), field_gens, min_size=1, max_size=5),
    extra_name=st.text(min_size=1, max_size=8),
    extra=field_gens,
)
def test_adding_a_field_leaves_the_other_fields_unchanged(
    seed: int, fields: dict[str, Any], extra_name: str, extra: Any
) -> None:
    if extra_name in fields:
        return
    request = ModelRequest.from_dict({"model": "synth-1", "messages": [{"role": "user", "content": "hi"}]})
    before = g.objects(fields).draw(DrawContext(request, seed))
    # the new field goes first, so it is also drawn before every other field
    after = g.objects({extra_name: extra, **fields}).draw(DrawContext(request, seed))
    assert {k: after[k] for k in fields} == before


@SETTINGS
@given(seed=seeds)
def test_field_values_do_not_depend_on_field_order(seed: int) -> None:
    request = ModelRequest()
    a = g.objects({"x": g.integer(0, 10**6), "y": g.fake("name")}).draw(DrawContext(request, seed))
    b = g.objects({"y": g.fake("name"), "x": g.integer(0, 10**6)}).draw(DrawContext(request, seed))
    assert a == b


@SETTINGS
@given(seed=seeds, body=requests)
def test_streaming_flag_api_and_headers_do_not_change_the_content(seed: int, body: dict[str, Any]) -> None:
    mock = MockGPT(rich_rules(), seed=seed)
    plain = mock.generate(body)
    varied = mock.generate({**body, "stream": True, "headers": {"x-stainless-retry-count": "2"}}, api="chat")
    assert varied.choices == plain.choices
    assert varied.id_seed == plain.id_seed
