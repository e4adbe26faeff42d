"""What each generator promises beyond the pinned snapshots: ranges, shapes, and how they read the request."""

from __future__ import annotations

import inspect
import uuid as std_uuid
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from synthgpt import ModelRequest, ReasoningPart, RequestError, ToolCallPart
from synthgpt import generators as g
from synthgpt import matchers as m
from synthgpt.generators import DrawContext, Generator
from synthgpt.model import Choice
from synthgpt.tokens import count_tokens

SETTINGS = settings(max_examples=80, deadline=None, derandomize=True)
seeds = st.integers(0, 2**64 - 1)


def user(text: str) -> ModelRequest:
    return ModelRequest.from_dict({"messages": [{"role": "user", "content": text}]})


def draw(gen: Generator[Any], seed: int = 0, request: ModelRequest | None = None, **ctx: Any) -> Any:
    return gen.draw(DrawContext(request or ModelRequest(), seed, **ctx))


@SETTINGS
@given(seed=seeds, lo=st.integers(-1000, 1000), width=st.integers(0, 1000))
def test_integer_stays_in_its_closed_range(seed: int, lo: int, width: int) -> None:
    assert lo <= draw(g.integer(lo, lo + width), seed) <= lo + width


@SETTINGS
@given(seed=seeds, decimals=st.one_of(st.none(), st.integers(0, 6)))
def test_number_stays_in_range_and_rounds(seed: int, decimals: int | None) -> None:
    v = draw(g.number(-2.5, 7.25, decimals=decimals), seed)
    assert -2.5 <= v <= 7.25
    if decimals is not None:
        assert round(v, decimals) == v


@SETTINGS
@given(seed=seeds)
def test_scalars(seed: int) -> None:
    assert draw(g.boolean(0.0), seed) is False and draw(g.boolean(1.0), seed) is True
    assert draw(g.choice(["a", "b"]), seed) in ("a", "b")
    assert draw(g.weighted([(0, "never"), (1, "always")]), seed) == "always"
    ident = draw(g.id("user", length=12), seed)
    assert ident.startswith("user_") and len(ident) == 17 and ident[5:].isalnum()
    assert len(draw(g.id(), seed)) == 24
    u = std_uuid.UUID(draw(g.uuid(), seed))
    assert u.version == 4 and u.variant == std_uuid.RFC_4122


@SETTINGS
@given(seed=seeds)
def test_text_generators_respect_their_sizes(seed: int) -> None:
    assert 2 <= len(draw(g.words(2, 4), seed).split()) <= 4
    assert draw(g.words(0, 0), seed) == ""
    s = draw(g.sentence(3, 5), seed)
    assert s[0].isupper() and s.endswith(".") and 3 <= len(s.split()) <= 5
    p = draw(g.paragraph(2, 3), seed)
    assert 2 <= p.count(".") <= 3
    assert count_tokens(draw(g.hash_tokens(17), seed)) == 17


def test_prose_talks_about_the_request_keywords() -> None:
    text = draw(g.prose(), 3, user("Explain quantum entanglement simply"))
    assert text == (
        "There are a few things worth knowing about quantum entanglement. It is worth checking the request "
        "early, because small differences there add up. I hope this helps. Let me know if you want more "
        "detail on quantum entanglement."
    )
    # no keywords: talks about "this"
    assert draw(g.prose(2, 2), 3, ModelRequest()) == (
        "There are a few things worth knowing about this. I hope this helps. Let me know if you want more "
        "detail on this."
    )


def test_summary_takes_the_first_sentences_cut_to_max_chars() -> None:
    req = user("  First one. Second one?  Third one! Fourth.")
    assert draw(g.summary(count=1), request=req) == "First one."
    assert draw(g.summary(count=3), request=req) == "First one. Second one? Third one!"
    assert draw(g.summary(max_chars=14, count=3), request=req) == "First one. Sec"
    assert draw(g.summary(max_chars=11, count=3), request=req) == "First one."  # no trailing space
    assert draw(g.summary(), request=ModelRequest()) == ""


def test_echo_and_last_user_return_the_last_user_message() -> None:
    req = ModelRequest.from_dict(
        {
            "messages": [
                {"role": "user", "content": "one"},
                {"role": "assistant", "content": "x"},
                {"role": "user", "content": "two"},
            ]
        }
    )
    assert draw(g.echo(), request=req) == draw(g.last_user(), request=req) == "two"


def test_just_hands_out_copies() -> None:
    gen = g.just({"a": [1]})
    first = draw(gen)
    first["a"].append(2)
    assert draw(gen) == {"a": [1]}


@SETTINGS
@given(seed=seeds)
def test_lists_sizes_and_uniqueness(seed: int) -> None:
    xs = draw(g.lists(g.integer(0, 3), 1, 6), seed)
    assert 1 <= len(xs) <= 6
    ys = draw(g.lists(g.integer(0, 3), 4, 4, unique=True), seed)
    assert sorted(ys) == [0, 1, 2, 3]


@SETTINGS
@given(seed=seeds)
def test_one_of_draws_each_option_from_its_own_fork(seed: int) -> None:
    v = draw(g.one_of(g.just("a"), g.integer(10, 20)), seed)
    assert v == "a" or 10 <= v <= 20


def test_one_of_flattens_nested_alternatives() -> None:
    assert repr(g.one_of("a", g.one_of("b", "c"))) == "one_of(just('a'), just('b'), just('c'))"
    assert repr(g.just(1) | g.just(2) | g.just(3)) == "one_of(just(1), just(2), just(3))"


def test_map_bind_filter() -> None:
    assert draw(g.just(3).map(lambda x: x * 2)) == 6
    assert draw(g.integer(1, 4).bind(lambda n: g.lists(g.just("x"), n, n))) in (
        ["x"] * k for k in range(1, 5)
    )
    assert all(draw(g.integer(0, 100).filter(lambda x: x % 7 == 0), s) % 7 == 0 for s in range(30))


def test_template_random_filter_is_seeded_per_use() -> None:
    gen = g.template("{{ range(100)|list|random }} {{ range(100)|list|random }}")
    a, b = draw(gen, 1).split()
    assert draw(gen, 1) == f"{a} {b}"
    assert {draw(gen, s) for s in range(20)} != {f"{a} {b}"}


def test_template_scope() -> None:
    req = ModelRequest.from_dict(
        {
            "model": "gpt-x",
            "messages": [{"role": "system", "content": "S"}, {"role": "user", "content": "hello there"}],
            "tools": [{"name": "t1"}],
        }
    )
    gen = g.template(
        "{{ model }}|{{ last_user }}|{{ system }}|{{ turn }}|{{ tools[0].name }}|{{ messages|length }}|"
        "{{ captures.who }}|{{ who }}|{{ request.model }}|{{ tool_results|length }}"
    )
    assert draw(gen, request=req, captures={"who": "Ada"}) == "gpt-x|hello there|S|1|t1|2|Ada|Ada|gpt-x|0"


def test_jinja_globals_that_read_global_random_are_gone() -> None:
    assert "lipsum" in g.template("{{ lipsum() }}").undeclared


def test_tool_call_shapes() -> None:
    req = ModelRequest.from_dict(
        {
            "tools": [{"name": "a"}, {"name": "b"}],
            "tool_choice": {"type": "function", "function": {"name": "b"}},
        }
    )
    part = draw(g.tool_call("a", {"x": g.integer(1, 1)}), request=req)
    assert isinstance(part, ToolCallPart)
    assert (part.name, part.parsed_arguments()) == ("a", {"x": 1})
    assert part.id.startswith("call_") and len(part.id) == 29
    assert draw(g.tool_call(), request=req).name == "b"  # the forced tool
    raw = draw(g.tool_call("a", g.just('{"raw": true}')), request=req)
    assert raw.arguments == '{"raw": true}'
    assert draw(g.tool_call("undeclared"), request=req).arguments == "{}"


def test_reply_orders_reasoning_text_then_tool_calls() -> None:
    choice = draw(
        g.reply(
            text=g.just({"a": 1}),
            tool_calls=[g.tool_call("t", {}), {"name": "u", "arguments": {"k": "v"}}],
            reasoning="r",
        )
    )
    assert isinstance(choice, Choice)
    assert [p.kind for p in choice.parts] == ["reasoning", "text", "tool_call", "tool_call"]
    assert choice.text == '{"a":1}' and choice.finish_reason == "tool_calls"
    ids = [p.id for p in choice.tool_calls]
    assert len(set(ids)) == 2 and choice.tool_calls[1].arguments == '{"k":"v"}'
    assert isinstance(choice.parts[0], ReasoningPart) and choice.parts[0].text == "r"


def test_example_draws_against_an_empty_request() -> None:
    assert [g.integer(0, 10).example(seed=s) for s in range(5)] == [9, 6, 6, 1, 4]  # pinned draws
    assert g.last_user().example(request=user("hey")) == "hey"
    # a plain dict is read as ModelRequest.from_dict reads it
    assert g.last_user().example(request={"messages": [{"role": "user", "content": "hey"}]}) == "hey"


def test_matchers_take_a_plain_dict_of_a_request() -> None:
    assert m.last_user("hey")({"messages": [{"role": "user", "content": "oh hey"}]})
    assert not m.last_user("hey")({"messages": [{"role": "user", "content": "bye"}]})
    with pytest.raises(RequestError):
        m.always()({"messages": "nope"})


def test_registry_lists_every_generator_of_the_dsl() -> None:
    """Each DSL function that builds a generator is in the registry (answer/error wrap delivery instead)."""
    delivery = {"answer", "error"}
    not_generators = {"fixed_clock", "step_clock", "system_clock", "lift", "lookup", "to_choice"}
    functions = {
        name
        for name in g.__all__
        if inspect.isfunction(getattr(g, name)) and name not in delivery | not_generators
    }
    assert functions - set(g.REGISTRY) == set()
    assert g.lookup("integer") is g.REGISTRY["integer"]


def test_every_name_of_the_dsl_namespace_exists() -> None:
    assert [name for name in g.__all__ if not hasattr(g, name)] == []


def test_faker_relative_dates_follow_the_injected_clock_not_the_wall_clock() -> None:
    day = 86_400
    t = 1_700_000_000  # 2023-11-14T22:13:20Z
    past = draw(g.fake("past_date"), 4, now=t)
    assert "2023-10-15" <= past <= "2023-11-14"
    assert draw(g.fake("past_date"), 4, now=t) == past
    assert draw(g.fake("date_time"), 4, now=t) != draw(g.fake("date_time"), 4, now=t + day)
    assert draw(g.fake("date_this_year"), 9, now=t).startswith("2023-")
    assert draw(g.fake("ssn", locale="sv_SE"), 1, now=t) == draw(g.fake("ssn", locale="sv_SE"), 1, now=t)


def test_faker_outside_a_draw_still_reads_the_real_clock() -> None:
    import datetime as real

    import faker.providers.date_time as faker_dates

    draw(g.fake("date_time"), 1)  # loads and pins the provider modules
    assert abs(faker_dates.datetime.now() - real.datetime.now()) < real.timedelta(minutes=5)
    assert isinstance(real.datetime(2020, 1, 1), faker_dates.datetime)
