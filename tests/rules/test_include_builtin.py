"""`include: builtin` (and `builtin:triggers`, `builtin:defaults`): rule files compose with the built-in rules
instead of replacing them; `synthgpt check` warns when requests can go unanswered."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from synthgpt import MockGPT
from synthgpt.codec.embeddings import EmbeddingsCodec
from synthgpt.codec.openai_chat.encode import ChatCodec
from synthgpt.errors import NoRuleMatched
from synthgpt.model import ModelRequest
from synthgpt.rules.check import check_report, main
from synthgpt.rules.defaults import builtin_rules
from synthgpt.rules.loader import RuleFileError, load_text
from synthgpt.rules.triggers import TRIGGER_NAMES
from synthgpt.testing import openai_client

CUSTOM = """
include: {include}
rules:
  - name: refund
    match: {{last_user: {{contains: refund}}}}
    output: {{text: Refunds take 5 days.}}
  - name: weather
    match: {{last_user: {{contains: weather}}, has_tools: true}}
    output: {{tool_calls: [{{name: get_weather, arguments: {{city: Oslo}}}}]}}
"""
TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}},
    {"type": "function", "function": {"name": "get_time", "parameters": {"type": "object"}}},
]  # fmt: skip

# One message per trigger (every name in TRIGGER_NAMES), each beside words a custom rule would answer.
TRIGGERED = {
    "TOOL_CALL": "weather please !MOCK_TOOL_CALL:get_time!",
    "PARALLEL_TOOL_CALLS": "weather and time !MOCK_PARALLEL_TOOL_CALLS!",
    "ERROR": "a story !MOCK_ERROR:429!",
    "INCOMPLETE": "a story !MOCK_INCOMPLETE:3!",
    "TRUNCATE": "a story !MOCK_TRUNCATE:2!",
    "DISCONNECT": "a story !MOCK_DISCONNECT:2!",
    "STREAM_ERROR": "a story !MOCK_STREAM_ERROR!",
    "MALFORMED": "a story !MOCK_MALFORMED:1!",
    "UNKNOWN_ITEM": "a story !MOCK_UNKNOWN_ITEM!",
    "DELAY": "a story !MOCK_DELAY:5!",
    "SLOW": "a story !MOCK_SLOW:1!",
}


def chat(text: str, **extra: Any) -> ModelRequest:
    return ChatCodec().decode(
        {"model": "gpt-4o", "messages": [{"role": "user", "content": text}], **extra}, {}, {}
    )


def embed(*inputs: str) -> ModelRequest:
    return EmbeddingsCodec().decode({"model": "text-embedding-3-small", "input": list(inputs)}, {}, {})


def custom(include: str = "builtin") -> MockGPT:
    return load_text(CUSTOM.format(include=include), "rules.yaml").mock(seed=0)


def test_every_trigger_is_covered() -> None:
    assert set(TRIGGERED) == set(TRIGGER_NAMES)


@pytest.mark.parametrize("name", sorted(TRIGGERED))
@pytest.mark.parametrize("include", ["builtin", "builtin:triggers"])
def test_every_trigger_answers_as_with_the_builtin_rules_alone(name: str, include: str) -> None:
    request = chat(TRIGGERED[name], tools=TOOLS)
    mine = custom(include).generate(request)
    assert mine.rule == "triggers"
    assert mine == MockGPT(seed=0).generate(request)  # the same answer, byte for byte


def test_embeddings_triggers_too() -> None:
    out = custom().generate(embed("a !MOCK_ERROR:503!"))
    assert (out.rule, out.error is not None and out.error.status) == ("embeddings_triggers", 503)


def test_custom_rules_answer_before_the_defaults_and_the_defaults_after() -> None:
    mock = custom()
    assert [r.name for r in mock.rules] == [
        "embeddings_triggers", "triggers", "refund", "weather",
        *(r.name for r in builtin_rules("defaults")),
    ]  # fmt: skip
    assert mock.generate(chat("I want a refund")).text == "Refunds take 5 days."
    assert mock.generate(chat("weather?", tools=TOOLS)).tool_calls[0].arguments == '{"city":"Oslo"}'
    schema = {"type": "json_schema", "json_schema": {"name": "p", "schema": {
        "type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}}}  # fmt: skip
    assert mock.generate(chat("a number", response_format=schema)).rule == "structured_output"
    assert mock.generate(chat("time?", tools=TOOLS)).rule == "tool_call"
    assert mock.generate(chat("hello")) == MockGPT(seed=0).generate(chat("hello"))
    embeddings = embed("x")
    assert mock.generate(embeddings) == MockGPT(seed=0).generate(embeddings)


def test_through_the_sdk() -> None:
    import openai

    sdk = openai_client(custom(), max_retries=0)
    reply = sdk.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "refund"}])
    assert reply.choices[0].message.content == "Refunds take 5 days."
    with pytest.raises(openai.RateLimitError):
        sdk.chat.completions.create(
            model="gpt-4o", messages=[{"role": "user", "content": "a story !MOCK_ERROR:429!"}]
        )


def test_parts() -> None:
    triggers_only = custom("builtin:triggers")
    assert [r.name for r in triggers_only.rules] == ["embeddings_triggers", "triggers", "refund", "weather"]
    with pytest.raises(NoRuleMatched):
        triggers_only.generate(chat("hello"))
    defaults_only = custom("builtin:defaults")
    assert defaults_only.generate(chat("refund")).rule == "refund"
    assert defaults_only.generate(chat("hi !MOCK_ERROR:429!")).rule == "default"  # no triggers: plain text
    twice = custom("[builtin, builtin:triggers, builtin:defaults]")
    assert [r.name for r in twice.rules] == [r.name for r in custom().rules]


def test_mistakes_name_the_place_and_the_fix() -> None:
    with pytest.raises(RuleFileError) as info:
        load_text("include: builtin:trigers\nrules: []\n", "r.yaml")
    assert (
        str(info.value) == "r.yaml:1:10: no built-in part 'builtin:trigers': did you mean `builtin:triggers`?"
    )
    text = "include: builtin\nrules:\n  - name: default\n    match: always\n    output: {text: hi}\n"
    with pytest.raises(RuleFileError) as info:
        load_text(text, "r.yaml")
    assert str(info.value) == ("r.yaml:3:11: rule name 'default' is taken by the built-in rules "
                               "(`include: builtin`); rename this rule")  # fmt: skip
    later = "rules:\n  - name: triggers\n    match: always\n    output: {text: hi}\n"
    with pytest.raises(RuleFileError) as info:
        load_text("include: [builtin:triggers]\n" + later, "r.yaml")
    assert str(info.value).startswith("r.yaml:3:11: rule name 'triggers' is taken")


def write(tmp_path: Path, name: str, text: str) -> str:
    (tmp_path / name).write_text(text)
    return str(tmp_path / name)


def test_check_warns_when_requests_can_go_unanswered(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = write(tmp_path, "empty.yaml", "rules: []\n")
    partial = write(tmp_path, "partial.yaml", CUSTOM.format(include="builtin:triggers"))
    fine = write(tmp_path, "fine.yaml", CUSTOM.format(include="builtin"))
    caught = write(tmp_path, "caught.yaml", "rules:\n  - {name: all, match: always, output: {text: hi}}\n")
    assert check_report([fine]) == ([], []) and check_report([caught]) == ([], [])
    assert main([empty]) == 0
    assert capsys.readouterr() == (
        f"{empty}:1:1: warning: there are no rules, so every request gets 400 no_rule_matched: add "
        "`include: builtin` to keep the built-in answers as the fallback, or end with a rule that has "
        "`match: always`\n",
        f"ok with 1 warning: {empty}\n",
    )
    assert main([partial, "--strict"]) == 1
    out, err = capsys.readouterr()
    assert out.startswith(f"{partial}:1:1: warning: no rule matches every request, so a request none "
                          "matches gets 400 no_rule_matched")  # fmt: skip
    assert err == f"1 warning (--strict): {partial}\n"


def test_a_catch_all_before_the_builtin_defaults_is_reported(tmp_path: Path) -> None:
    path = write(
        tmp_path, "r.yaml", "include: builtin\nrules:\n  - {name: all, match: always, output: {text: hi}}\n"
    )
    [finding], [] = check_report([path])
    names = ", ".join(repr(r.name) for r in builtin_rules("defaults"))
    assert str(finding) == (
        f"{path}:3:24: rule 'all' matches every request, so the rules after it never answer ({names}); "
        "the built-in answers are the fallback after every rule: include `builtin:triggers` instead of "
        "`builtin` to keep only the triggers"
    )


def test_a_trigger_delivers_the_content_your_rule_would_answer() -> None:
    mock = custom()
    cut = mock.generate(chat("refund please !MOCK_INCOMPLETE:4!"))
    assert (cut.rule, cut.text, cut.finish_reason) == ("triggers", "Refunds take 5", "length")
    streamed = mock.generate(chat("refund please !MOCK_TRUNCATE:2!", stream=True))
    assert streamed.text == "Refunds take 5 days."
    assert [f.kind for f in streamed.stream.faults] == ["truncate"]
    # the built-in content where no rule of yours matches: as with the built-in rules alone
    plain = chat("hello !MOCK_TRUNCATE:2!")
    assert mock.generate(plain) == MockGPT(seed=0).generate(plain)


def test_serve_warns_at_start_up_too(tmp_path: Path) -> None:
    import io

    from synthgpt.server.run import ServeConfig, build_mock

    said = io.StringIO()
    build_mock(ServeConfig(rule_files=(write(tmp_path, "empty.yaml", "rules: []\n"),)), warn=said)
    assert said.getvalue() == (
        "synthgpt serve: warning: there are no rules, so every request gets 400 no_rule_matched: add "
        "`include: builtin` to keep the built-in answers as the fallback, or end with a rule that has "
        "`match: always`\n"
    )
    quiet = io.StringIO()
    build_mock(ServeConfig(rule_files=(write(tmp_path, "fine.yaml", CUSTOM.format(include="builtin")),)),
               warn=quiet)  # fmt: skip
    build_mock(ServeConfig(), warn=quiet)  # the built-in rules
    assert quiet.getvalue() == ""
