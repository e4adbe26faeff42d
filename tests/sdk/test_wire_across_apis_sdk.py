"""What the official SDKs see of the wire requirements closed late (issues 3 and 4): stop sequences, custom
tools refused, an embeddings rule without vectors, Anthropic-worded 529s, the models list of a rule file
that restricts the models, and AzureOpenAI's embeddings and Responses paths.

Most tests run a server on the rule file below: its fixed text makes the cut by a stop sequence exact.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest

from synthgpt.tokens import count_tokens

TEXT = "Alpha beta. Gamma delta END epsilon zeta. Omega."
CUT = "Alpha beta. Gamma delta "
RULES = f"""
models: [gpt-4o, "claude-*", text-embedding-3-small, team-model]
rules:
  - name: busy
    match: {{last_user: {{contains: busy}}}}
    error: {{status: 529}}
  - name: vectorless
    match: {{api: embeddings}}
    output: {{text: "no vectors"}}
  - name: named
    match: {{model: team-model, last_user: {{contains: team}}}}
    output: {{text: "team"}}
  - name: fixed
    match: always
    output: {{text: "{TEXT}"}}
"""


@pytest.fixture(scope="module")
def rules_server(tmp_path_factory: pytest.TempPathFactory, start_server: Any) -> Iterator[str]:
    path: Path = tmp_path_factory.mktemp("rules") / "gaps.yaml"
    path.write_text(RULES)
    with start_server(str(path)) as url:
        yield url


@pytest.fixture
def oai(rules_server: str) -> Iterator[openai.OpenAI]:
    with openai.OpenAI(
        base_url=rules_server + "/v1", api_key="k", max_retries=0, _strict_response_validation=True
    ) as c:
        yield c


@pytest.fixture
def ant(rules_server: str) -> Iterator[anthropic.Anthropic]:
    with anthropic.Anthropic(
        base_url=rules_server, api_key="k", max_retries=0, _strict_response_validation=True
    ) as c:
        yield c


def ask(text: str = "hi") -> Any:
    return [{"role": "user", "content": text}]


# ------------------------------------------------------------------------------------------ stop sequences


def test_chat_stop_create_stream_and_helper_agree(oai: openai.OpenAI) -> None:
    done = oai.chat.completions.create(model="gpt-4o", messages=ask(), stop=["zeta", "END"])
    assert (done.choices[0].message.content, done.choices[0].finish_reason) == (CUT, "stop")
    assert done.usage is not None
    assert done.usage.completion_tokens == count_tokens(CUT)
    assert done.usage.total_tokens == done.usage.prompt_tokens + count_tokens(CUT)

    chunks = list(
        oai.chat.completions.create(
            model="gpt-4o",
            messages=ask(),
            stop=["zeta", "END"],
            stream=True,
            stream_options={"include_usage": True},
        )
    )
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == CUT
    assert [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason] == [
        "stop"
    ]
    assert chunks[-1].usage == done.usage

    with oai.chat.completions.stream(model="gpt-4o", messages=ask(), stop=["zeta", "END"]) as s:
        final = s.get_final_completion()
    assert final.choices[0].message.content == CUT
    assert final.choices[0].finish_reason == "stop"


def test_anthropic_stop_sequences_create_and_stream_agree(ant: anthropic.Anthropic) -> None:
    msg = ant.messages.create(
        model="claude-sonnet-4-5", max_tokens=200, messages=ask(), stop_sequences=["zeta", "END"]
    )
    assert (msg.stop_reason, msg.stop_sequence) == ("stop_sequence", "END")
    assert [b.text for b in msg.content if b.type == "text"] == [CUT]
    assert msg.usage.output_tokens == count_tokens(CUT)
    with ant.messages.stream(
        model="claude-sonnet-4-5", max_tokens=200, messages=ask(), stop_sequences=["zeta", "END"]
    ) as s:
        streamed = s.get_final_message()
    assert streamed.model_dump() == msg.model_dump()


def test_responses_refuses_stop(oai: openai.OpenAI) -> None:
    with pytest.raises(openai.BadRequestError) as info:
        oai.responses.create(model="gpt-4o", input="hi", extra_body={"stop": ["END"]})
    assert info.value.body == {
        "message": "Unknown parameter: 'stop'.",
        "type": "invalid_request_error",
        "param": "stop",
        "code": "unknown_parameter",
    }


# ------------------------------------------------------------------------------------------- custom tools


def test_chat_custom_tool_is_a_bad_request_naming_the_param(oai: openai.OpenAI) -> None:
    with pytest.raises(openai.BadRequestError) as info:
        oai.chat.completions.create(
            model="gpt-4o", messages=ask(), tools=[{"type": "custom", "custom": {"name": "sql"}}]
        )
    assert (info.value.param, info.value.code, info.value.status_code) == (
        "tools[0].type",
        "unsupported_value",
        400,
    )
    assert "Custom (free-form) tools are not simulated" in info.value.message


# ---------------------------------------------------------------------------- embeddings without vectors


def test_embeddings_rule_without_vectors_is_a_clear_server_error(oai: openai.OpenAI) -> None:
    with pytest.raises(openai.InternalServerError) as info:
        oai.embeddings.create(model="text-embedding-3-small", input="hello", encoding_format="float")
    assert info.value.body == {
        "message": "rule 'vectorless' answered an embeddings request without one vector per input (0 for 1); "
        "use the `embeddings` generator",
        "type": "server_error",
        "param": None,
        "code": "rule_error",
    }


# -------------------------------------------------------------------------------------------------- 529


def test_anthropic_529_is_an_overloaded_error_worded_like_anthropic(ant: anthropic.Anthropic) -> None:
    with pytest.raises(anthropic.OverloadedError) as info:
        ant.messages.create(model="claude-sonnet-4-5", max_tokens=50, messages=ask("busy"))
    request_id = info.value.response.headers["request-id"]
    assert info.value.body == {
        "type": "error",
        "error": {"type": "overloaded_error", "message": "Overloaded"},
        "request_id": request_id,
    }
    assert info.value.status_code == 529


# ------------------------------------------------------------------------------------------------ models


def test_models_lists_only_what_the_rule_file_serves(oai: openai.OpenAI, ant: anthropic.Anthropic) -> None:
    assert [m.id for m in oai.models.list()] == ["gpt-4o", "text-embedding-3-small", "team-model"]
    assert [m.id for m in ant.models.list()] == [
        "gpt-4o",
        "text-embedding-3-small",
        "team-model",
        "claude-opus-4-5",
        "claude-sonnet-4-5",
        "claude-haiku-4-5",
    ]
    assert oai.models.retrieve("team-model").owned_by == "synthgpt"
    with pytest.raises(openai.NotFoundError):
        oai.models.retrieve("gpt-5")


def test_models_unrestricted_are_the_defaults(live_server: str) -> None:
    with openai.OpenAI(base_url=live_server + "/v1", api_key="k", _strict_response_validation=True) as c:
        ids = [m.id for m in c.models.list()]
    assert ids[:2] == ["gpt-4o", "gpt-4o-mini"] and "text-embedding-3-small" in ids


# ------------------------------------------------------------------------------------------------- Azure


def test_azure_client_embeddings_responses_and_models(live_server: str) -> None:
    with openai.AzureOpenAI(
        azure_endpoint=live_server, api_key="k", api_version="2024-10-21", max_retries=0
    ) as az:
        emb = az.embeddings.create(model="my-embedding-deployment", input=["a", "b"])
        assert [len(d.embedding) for d in emb.data] == [1536, 1536]
        assert emb.model == "my-embedding-deployment"
        resp = az.responses.create(model="my-deployment", input="hi")
        assert resp.status == "completed" and resp.output_text
        assert [m.id for m in az.models.list()][:1] == ["gpt-4o"]
