"""The built-in rule set (DESIGN.md §4) and the `!MOCK_…!` triggers, at the engine level."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest

from synthgpt import MockGPT, ModelOutput, RequestError
from synthgpt.model import Fault, StreamPlan
from synthgpt.rules.defaults import default_rules
from synthgpt.rules.triggers import parse_triggers, strip_triggers
from synthgpt.tokens import count_tokens

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "days": {"type": "integer", "minimum": 1, "maximum": 7},
            },
            "required": ["city", "days"],
            "additionalProperties": False,
        },
    },
}
TIME = {
    "type": "function",
    "function": {
        "name": "get_time",
        "parameters": {"type": "object", "properties": {"zone": {"type": "string"}}, "required": ["zone"]},
    },
}


ALLOW_UNDECLARED = {"x-synthgpt-allow-undeclared-tools": "1"}


def test_a_tool_call_trigger_for_an_undeclared_tool_is_a_400_unless_allowed() -> None:
    with pytest.raises(RequestError) as info:
        ask("go !MOCK_TOOL_CALL:launch!", tools=[WEATHER])
    assert info.value.param == "tools"
    assert info.value.message == (
        "!MOCK_TOOL_CALL:launch! calls a tool the request does not declare (declared: get_weather). Declare "
        "it in `tools`, or send the header `x-synthgpt-allow-undeclared-tools: 1` to allow it."
    )
    assert ask("go !MOCK_TOOL_CALL:launch!", headers=ALLOW_UNDECLARED).tool_calls[0].name == "launch"


def ask(text: str, **extra: Any) -> ModelOutput:
    return MockGPT(seed=0).generate(
        {"model": "gpt-4o", "messages": [{"role": "user", "content": text}], **extra}
    )


def tool_round(**extra: Any) -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": "What is the weather in Paris?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city":"Paris","days":1}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": '{"temp_c": 21, "sky": "clear"}'},
    ]


def test_rules_are_in_the_documented_order() -> None:
    assert [r.name for r in default_rules()] == [
        "embeddings_triggers",
        "embeddings",
        "triggers",
        "tool_call",
        "structured_output",
        "tool_results",
        "default",
    ]


def test_each_engine_gets_fresh_rules() -> None:
    a, b = default_rules(), default_rules()
    assert a.rules[0] is not b.rules[0]


def test_plain_question_gets_prose_about_it() -> None:
    out = ask("Tell me about volcanoes")
    assert out.rule == "default"
    assert out.finish_reason == "stop"
    assert "volcanoes" in out.text
    assert out.text == ask("Tell me about volcanoes").text


def test_structured_output_is_valid_against_the_schema() -> None:
    schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "age": {"type": "integer", "minimum": 0, "maximum": 120},
            "tags": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["name", "age", "tags"],
        "additionalProperties": False,
    }
    out = ask("Describe a person", response_schema={"name": "person", "schema": schema})
    assert out.rule == "structured_output"
    jsonschema.validate(json.loads(out.text), schema)


def test_json_object_mode_gives_a_json_object() -> None:
    out = ask("Give me JSON", response_schema={"kind": "json_object"})
    assert isinstance(json.loads(out.text), dict)


def test_tools_declared_calls_the_first_tool_with_valid_arguments() -> None:
    out = ask("What is the weather?", tools=[WEATHER, TIME])
    assert out.rule == "tool_call"
    assert out.finish_reason == "tool_calls"
    [call] = out.tool_calls
    assert call.name == "get_weather"
    jsonschema.validate(call.parsed_arguments(), WEATHER["function"]["parameters"])  # type: ignore[index]


def test_named_tool_choice_calls_that_tool() -> None:
    out = ask(
        "time?", tools=[WEATHER, TIME], tool_choice={"type": "function", "function": {"name": "get_time"}}
    )
    assert [c.name for c in out.tool_calls] == ["get_time"]


def test_tool_choice_none_answers_with_text() -> None:
    out = ask("weather?", tools=[WEATHER], tool_choice="none")
    assert out.rule == "default"
    assert out.tool_calls == ()


def test_tool_results_end_the_loop_with_text_quoting_them() -> None:
    out = MockGPT().generate({"model": "m", "messages": tool_round(), "tools": [WEATHER]})
    assert out.rule == "tool_results"
    assert out.finish_reason == "stop"
    assert 'get_weather returned: {"temp_c": 21, "sky": "clear"}' in out.text


def test_required_tool_choice_calls_again_even_after_results() -> None:
    out = MockGPT().generate(
        {"model": "m", "messages": tool_round(), "tools": [WEATHER], "tool_choice": "required"}
    )
    assert out.rule == "tool_call"


def test_reasoning_comes_first_when_asked() -> None:
    out = ask("Think about chess", reasoning={"effort": "high"})
    assert out.parts[0].kind == "reasoning"
    assert out.usage.reasoning_tokens > 0


def test_embeddings_requests_get_one_vector_per_input() -> None:
    out = MockGPT().generate({"api": "embeddings", "model": "text-embedding-3-small", "inputs": ["a", "b"]})
    assert out.rule == "embeddings"
    assert [len(v) for v in out.embeddings] == [1536, 1536]


# ------------------------------------------------------------------------------------------------ triggers


def test_parse_combines_every_trigger() -> None:
    t = parse_triggers(
        '!MOCK_SLOW:20! please !MOCK_TOOL_CALL:get_weather:{"city":"Oslo!"}! !MOCK_TRUNCATE:3!'
    )
    assert t.tool_calls == (("get_weather", {"city": "Oslo!"}),)
    assert t.slow_ms == 20.0
    assert t.faults == (Fault(kind="truncate", after=3),)
    assert t.stream_plan() == StreamPlan(interval_ms=20.0, faults=(Fault(kind="truncate", after=3),))


def test_strip_leaves_the_question() -> None:
    text = "Hello !MOCK_DELAY:5!  there !MOCK_INCOMPLETE!"
    assert strip_triggers(text, parse_triggers(text)) == "Hello there"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("!MOCK_TRUNCATE:2!", Fault(kind="truncate", after=2)),
        ("!MOCK_DISCONNECT:0!", Fault(kind="disconnect", after=0)),
        ("!MOCK_STREAM_ERROR!", Fault(kind="stream_error", after=2)),
        ("!MOCK_STREAM_ERROR:5!", Fault(kind="stream_error", after=5)),
        ("!MOCK_MALFORMED:1!", Fault(kind="malformed", after=1)),
        ("!MOCK_UNKNOWN_ITEM!", Fault(kind="unknown_item", after=0)),
    ],
)
def test_frame_fault_triggers(text: str, expected: Fault) -> None:
    out = ask(f"Tell me a story {text}")
    assert out.rule == "triggers"
    assert out.stream.faults == (expected,)
    assert out.error is None
    assert out.text and "MOCK" not in out.text


def test_delay_and_slow_set_the_pacing() -> None:
    out = ask("hi !MOCK_DELAY:150! !MOCK_SLOW:25!")
    assert (out.stream.first_delay_ms, out.stream.interval_ms) == (150.0, 25.0)


@pytest.mark.parametrize(("status", "retry"), [(429, 10), (500, 10), (503, 10), (400, None), (404, None)])
def test_error_trigger(status: int, retry: int | None) -> None:
    out = ask(f"hi !MOCK_ERROR:{status}!")
    assert out.error is not None
    assert out.error.status == status
    assert out.error.retry_after_ms == retry
    assert f"!MOCK_ERROR:{status}!" in (out.error.message or "")


def test_incomplete_cuts_at_half_the_answer() -> None:
    out = ask("Tell me about rivers !MOCK_INCOMPLETE!")
    assert out.finish_reason == "length"
    # pinned: half (53) of the uncut answer's tokens, cut inside "because"
    assert out.usage.completion_tokens == 53 == count_tokens(out.text)
    assert out.text == (
        "Good question: it comes down to a few ideas about rivers. Most people start with the skill and only "
        "later notice how much the trend matters. It is worth checking the step early, beca"
    )


def test_incomplete_with_a_token_count() -> None:
    out = ask("Tell me about rivers !MOCK_INCOMPLETE:3!")
    assert out.finish_reason == "length"
    assert out.usage.completion_tokens == 3


def test_tool_call_trigger_uses_the_given_arguments() -> None:
    out = ask('go !MOCK_TOOL_CALL:lookup:{"q": "x", "n": [1, 2]}!', headers=ALLOW_UNDECLARED)
    [call] = out.tool_calls
    assert (call.name, call.arguments) == ("lookup", '{"q":"x","n":[1,2]}')
    assert out.finish_reason == "tool_calls"


def test_tool_call_trigger_without_arguments_draws_them_from_the_schema() -> None:
    out = ask("go !MOCK_TOOL_CALL:get_weather!", tools=[WEATHER])
    jsonschema.validate(out.tool_calls[0].parsed_arguments(), WEATHER["function"]["parameters"])  # type: ignore[index]


def test_several_tool_call_triggers_give_several_calls_with_distinct_ids() -> None:
    out = ask("!MOCK_TOOL_CALL:a:{}! !MOCK_TOOL_CALL:b:{}!", headers=ALLOW_UNDECLARED)
    assert [c.name for c in out.tool_calls] == ["a", "b"]
    assert len({c.id for c in out.tool_calls}) == 2


def test_tool_call_trigger_stops_once_results_are_back() -> None:
    msgs = tool_round()
    msgs[0]["content"] = "weather? !MOCK_TOOL_CALL:get_weather:{}! !MOCK_SLOW:5!"
    out = MockGPT().generate({"model": "m", "messages": msgs, "tools": [WEATHER]})
    assert out.rule == "triggers"
    assert out.tool_calls == ()
    assert "get_weather returned:" in out.text
    assert out.stream.interval_ms == 5.0


def test_parallel_trigger_calls_every_declared_tool() -> None:
    out = ask("both !MOCK_PARALLEL_TOOL_CALLS!", tools=[WEATHER, TIME])
    assert [c.name for c in out.tool_calls] == ["get_weather", "get_time"]


def test_parallel_trigger_respects_parallel_tool_calls_false() -> None:
    out = ask("both !MOCK_PARALLEL_TOOL_CALLS!", tools=[WEATHER, TIME], parallel_tool_calls=False)
    assert [c.name for c in out.tool_calls] == ["get_weather"]


def test_trigger_content_follows_the_other_rules() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    out = ask("numbers !MOCK_SLOW:1!", response_schema={"name": "n", "schema": schema})
    jsonschema.validate(json.loads(out.text), schema)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("!MOCK_EROR:500!", "Unknown trigger !MOCK_EROR! — did you mean !MOCK_ERROR!?"),
        (
            "!MOCK_ERROR:abc!",
            "!MOCK_ERROR! needs a whole number between 400 and 599, as in !MOCK_ERROR:400!, got 'abc'.",
        ),
        ("!MOCK_ERROR:200!", "!MOCK_ERROR:200! is out of range: use 400 to 599."),
        (
            "!MOCK_TRUNCATE!",
            "!MOCK_TRUNCATE! needs a whole number between 0 and 100000, as in !MOCK_TRUNCATE:0!, got None.",
        ),
        ("!MOCK_TOOL_CALL!", "!MOCK_TOOL_CALL! needs a tool name, as in !MOCK_TOOL_CALL:get_weather!."),
        (
            "!MOCK_TOOL_CALL:f:{oops}!",
            "!MOCK_TOOL_CALL:f:…! needs JSON arguments: Expecting property name enclosed in double quotes.",
        ),
        ("!MOCK_TOOL_CALL:f:[1]!", "!MOCK_TOOL_CALL:f:…! takes a JSON object of arguments."),
        ("!MOCK_SLOW:10", "Trigger !MOCK_SLOW… is not closed with '!'."),
        ("!MOCK_PARALLEL_TOOL_CALLS:2!", "!MOCK_PARALLEL_TOOL_CALLS! takes no argument."),
    ],
)
def test_bad_triggers_are_request_errors(text: str, message: str) -> None:
    with pytest.raises(RequestError) as info:
        ask(text)
    assert info.value.param == "messages"
    assert info.value.message.startswith(message + " Triggers: !MOCK_TOOL_CALL!, !MOCK_PARALLEL_TOOL_CALLS!")
