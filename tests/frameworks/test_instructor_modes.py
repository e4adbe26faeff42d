"""The requests instructor's modes send, through the official openai SDK, in process.

instructor itself runs in its own virtualenv (`test_instructor.py`: it pins `jiter<0.15`, which the
openai SDK 3.x of the dev extra cannot share); these quick checks send what its modes send (the system
prompt of `Mode.JSON`, the code-block request of `Mode.MD_JSON`, the tool choice of `Mode.RESPONSES_TOOLS`)
and pin the exact documents.
"""

from __future__ import annotations

import json
import re

import jsonschema
from pydantic import BaseModel

from synthgpt import MockGPT
from synthgpt.generators import fixed_clock
from synthgpt.testing import openai_client


class Person(BaseModel):
    name: str
    age: int


SCHEMA = Person.model_json_schema()
TEXT = "Extract: Jason is 25 years old."
# the system prompt of instructor's Mode.JSON and Mode.MD_JSON
SYSTEM = (
    "As a genius expert, your task is to understand the content and provide\n"
    "the parsed objects in json that match the following json_schema:\n\n"
    f"{json.dumps(SCHEMA, indent=2)}\n\n"
    "Make sure to return an instance of the JSON, not the schema itself"
)


def _client() -> tuple[MockGPT, object]:
    mock = MockGPT(seed=11, clock=fixed_clock(1_700_000_000))
    return mock, openai_client(mock)


def test_mode_json_schema_in_the_system_message() -> None:
    mock, client = _client()
    reply = client.chat.completions.create(  # type: ignore[attr-defined]
        model="gpt-4o",
        response_format={"type": "json_object"},
        messages=[{"role": "system", "content": SYSTEM}, {"role": "user", "content": TEXT}],
    )
    assert mock.records[-1].rule == "structured_output"
    person = Person.model_validate_json(reply.choices[0].message.content)
    assert person == Person(name="Jason", age=25)


def test_mode_md_json_answers_in_a_fenced_block() -> None:
    _, client = _client()
    reply = client.chat.completions.create(  # type: ignore[attr-defined]
        model="gpt-4o",
        messages=[
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": TEXT},
            {
                "role": "user",
                "content": "Return the correct JSON response within a ```json codeblock. not the JSON_SCHEMA",
            },
        ],
    )
    content = reply.choices[0].message.content
    found = re.fullmatch(r"```json\n(.*)\n```", content, re.DOTALL)
    assert found, content
    assert Person.model_validate_json(found.group(1)) == Person(name="Jason", age=25)


def test_a_schema_quoted_without_asking_for_json_is_not_an_order() -> None:
    mock, client = _client()
    client.chat.completions.create(  # type: ignore[attr-defined]
        model="gpt-4o",
        messages=[{"role": "user", "content": f"What does this schema describe? {json.dumps(SCHEMA)}"}],
    )
    assert mock.records[-1].rule == "default"


def test_mode_responses_tools_named_choice_wins_over_text_format() -> None:
    _, client = _client()
    strict = {**SCHEMA, "additionalProperties": False}
    reply = client.responses.create(  # type: ignore[attr-defined]
        model="gpt-4o",
        input=[{"role": "user", "content": TEXT}],
        text={"format": {"type": "json_schema", "name": "Person", "schema": strict, "strict": True}},
        tools=[
            {
                "type": "function",
                "name": "Person",
                "description": "Correctly extracted `Person`",
                "parameters": strict,
                "strict": True,
            }
        ],
        tool_choice={"type": "function", "name": "Person"},
    )
    calls = [item for item in reply.output if item.type == "function_call"]
    assert [c.name for c in calls] == ["Person"]
    assert json.loads(calls[0].arguments) == {"name": "Jason", "age": 25}


def test_chat_required_choice_wins_over_response_format() -> None:
    _, client = _client()
    strict = {**SCHEMA, "additionalProperties": False}
    reply = client.chat.completions.create(  # type: ignore[attr-defined]
        model="gpt-4o",
        messages=[{"role": "user", "content": TEXT}],
        response_format={"type": "json_schema", "json_schema": {"name": "Person", "schema": strict}},
        tools=[{"type": "function", "function": {"name": "Person", "parameters": strict}}],
        tool_choice="required",
    )
    (call,) = reply.choices[0].message.tool_calls
    assert reply.choices[0].finish_reason == "tool_calls"
    doc = json.loads(call.function.arguments)
    jsonschema.validate(doc, strict)
    assert doc == {"name": "Jason", "age": 25}
