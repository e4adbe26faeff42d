"""Item 7 of the parity issue: model profiles (context window, maximum output, reasoning by default,
refuse or clamp), from rule files, the Python DSL and `serve --context-window`; `/v1/models` lists them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from synthgpt import ContextWindowExceeded, MockGPT, ModelProfile, RequestError, Rule, RuleError, RuleSet
from synthgpt import matchers as m
from synthgpt.rules.loader import RuleFileError, load_text
from synthgpt.server import create_app

LONG = " ".join(f"w{i}" for i in range(40))  # 40 tokens
RULES_YAML = f"""
models:
  - gpt-4o
  - {{name: small, context_window: 40, max_output_tokens: 10}}
  - {{name: "vllm-*", context_window: 40, overflow: clamp}}
  - {{name: thinker, reasoning: true}}
rules:
  - {{name: long, match: always, output: {{text: "{LONG}"}}}}
"""
USER = [{"role": "user", "content": "hi"}]  # 8 prompt tokens


def _mock(**kwargs: Any) -> MockGPT:
    return load_text(RULES_YAML, "rules.yaml").mock(**kwargs)


def _ask(model: str, **extra: Any) -> dict[str, Any]:
    return {"model": model, "messages": USER, **extra}


def test_a_profile_caps_the_answer_and_refuses_a_longer_max_tokens() -> None:
    mock = _mock()
    out = mock.generate(_ask("small"))
    assert (out.usage.completion_tokens, out.finish_reason) == (10, "length")
    with pytest.raises(RequestError) as info:
        mock.generate(_ask("small", max_output_tokens=20))
    assert (info.value.message, info.value.param, info.value.code) == (
        "max_output_tokens is too large: 20. This model supports at most 10 completion tokens, whereas you "
        "provided 20.",
        "max_output_tokens",
        "invalid_value",
    )
    # within the maximum but past the room the window leaves (40 - 8 = 32): today's refusal
    mock2 = MockGPT(
        RuleSet([Rule("r", m.always(), LONG)], models=[ModelProfile(name="w", context_window=40)])
    )
    with pytest.raises(ContextWindowExceeded) as exceeded:
        mock2.generate(_ask("w", max_output_tokens=33))
    assert exceeded.value.code == "context_length_exceeded"
    assert mock2.generate(_ask("w", max_output_tokens=32)).usage.completion_tokens == 32


def test_clamp_cuts_to_the_room_left_like_vllm() -> None:
    out = _mock().generate(_ask("vllm-7b", max_output_tokens=1000))
    assert (out.usage.prompt_tokens, out.usage.completion_tokens, out.finish_reason) == (8, 32, "length")


def test_a_prompt_that_fills_the_window_is_refused_even_with_clamp() -> None:
    with pytest.raises(ContextWindowExceeded):
        _mock().generate({"model": "vllm-7b", "messages": [{"role": "user", "content": LONG}]})


def test_a_reasoning_profile_thinks_without_being_asked() -> None:
    mock = _mock()
    assert mock.generate(_ask("thinker")).reasoning
    assert not mock.generate(_ask("gpt-4o")).reasoning


def test_models_without_a_profile_use_the_engine_window() -> None:
    mock = _mock(context_window=20)
    out = mock.generate(_ask("gpt-4o"))
    assert out.usage.completion_tokens == 12  # 20 - 8 prompt tokens
    assert _mock(context_window=20).generate(_ask("small")).usage.completion_tokens == 10  # its own window


def test_python_profiles_accept_dicts_and_check_them() -> None:
    rules = RuleSet([Rule("r", m.always(), "x")], models=["a", {"name": "b", "max_output_tokens": 5}])
    assert rules.models == ("a", "b")
    assert rules.profiles == (ModelProfile(name="b", max_output_tokens=5),)
    with pytest.raises(RuleError) as info:
        RuleSet([], models=[{"name": "b", "overflow": "truncate"}])
    assert str(info.value) == "models[0]: Invalid value for 'overflow': Input should be 'refuse' or 'clamp'"


@pytest.mark.parametrize(
    ("entry", "error"),
    [
        (
            "{name: x, context_window: 0}",
            "r.yaml:2:31: `models[0].context_window`: input should be greater than or equal to 1, got 0",
        ),
        (
            "{name: x, overflow: cut}",
            "r.yaml:2:25: `models[0].overflow`: input should be 'refuse' or 'clamp', got 'cut'",
        ),
        ("{name: x, windw: 3}", "r.yaml:2:15: unknown key 'windw'"),
        ("3", "r.yaml:2:5: `models[0]`: input should be a valid string, got 3"),
    ],
)
def test_rule_file_profile_mistakes_are_located(entry: str, error: str) -> None:
    with pytest.raises(RuleFileError) as info:
        load_text(f"models:\n  - {entry}\nrules: []\n", "r.yaml")
    assert str(info.value).splitlines()[0] == error


async def _client(mock: MockGPT) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=create_app(mock)), base_url="http://t")


async def test_http_refuses_or_clamps_in_the_provider_shape_and_lists_profiles() -> None:
    async with await _client(_mock()) as c:
        refused = await c.post("/v1/chat/completions", json=_ask("small", max_tokens=20))
        clamped = await c.post("/v1/chat/completions", json=_ask("vllm-7b", max_tokens=1000))
        anthropic = await c.post("/v1/messages", json=_ask("small", max_tokens=20),
                                 headers={"anthropic-version": "2023-06-01"})  # fmt: skip
        listed = await c.get("/v1/models")
        one = await c.get("/v1/models/small")
    assert refused.status_code == 400
    message = (
        "max_tokens is too large: 20. This model supports at most 10 completion tokens, whereas you "
        "provided 20."
    )
    assert refused.json() == {
        "error": {
            "message": message,
            "type": "invalid_request_error",
            "param": "max_tokens",
            "code": "invalid_value",
        }
    }
    assert clamped.status_code == 200 and clamped.json()["usage"]["completion_tokens"] == 32
    assert anthropic.status_code == 400
    assert anthropic.json()["error"] == {
        "type": "invalid_request_error",
        "message": "max_tokens: 20 > 10, which is the maximum allowed number of output tokens for small",
    }
    data = {d["id"]: d for d in listed.json()["data"]}
    listed_small = {"context_window": 40, "max_output_tokens": 10, "reasoning": False}
    plain = {"object": "model", "created": 1_704_067_200, "owned_by": "synthgpt"}
    assert data["small"] == {"id": "small", **plain, **listed_small}
    assert data["gpt-4o"] == {
        "id": "gpt-4o",
        "object": "model",
        "created": 1_704_067_200,
        "owned_by": "synthgpt",
    }
    assert one.json()["context_window"] == 40


@pytest.mark.slow
def test_serve_context_window_flag(start_server: Any, tmp_path: Path) -> None:
    with start_server("--context-window", "12") as url, httpx.Client(base_url=url) as client:
        too_long = client.post("/v1/chat/completions", json=_ask("gpt-4o", max_tokens=5))
        ok = client.post("/v1/chat/completions", json=_ask("gpt-4o"))
        listed = client.get("/v1/models").json()["data"]
    assert too_long.status_code == 400 and too_long.json()["error"]["code"] == "context_length_exceeded"
    assert ok.json()["usage"]["completion_tokens"] <= 4
    assert all(d["context_window"] == 12 for d in listed)
