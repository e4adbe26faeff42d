"""The plugin's fixtures used directly: the plugin is active in synthgpt's own suite too."""

from __future__ import annotations

import anthropic
import httpx
import openai
import pytest

from synthgpt import Rule
from synthgpt import matchers as m
from synthgpt.testing import LiveServer, SynthGPTFixture

CANNED = [Rule("canned", m.always(), "Canned answer.")]
ASK = [{"role": "user", "content": "hello"}]


@pytest.mark.synthgpt(rules=CANNED, seed=3)
def test_anthropic_sync(synthgpt: SynthGPTFixture, synthgpt_anthropic: anthropic.Anthropic) -> None:
    message = synthgpt_anthropic.messages.create(model="claude-sonnet-4-5", max_tokens=64, messages=ASK)
    assert message.content[0].type == "text" and message.content[0].text == "Canned answer."
    with synthgpt_anthropic.messages.stream(model="claude-sonnet-4-5", max_tokens=64, messages=ASK) as stream:
        assert "".join(stream.text_stream) == "Canned answer."
    assert [c.api for c in synthgpt.calls] == ["messages", "messages"]
    synthgpt.assert_called_with(api="messages", model="claude-*")


@pytest.mark.synthgpt(rules=CANNED)
async def test_anthropic_and_openai_async(
    synthgpt: SynthGPTFixture,
    synthgpt_async_anthropic: anthropic.AsyncAnthropic,
    synthgpt_async_openai: openai.AsyncOpenAI,
) -> None:
    message = await synthgpt_async_anthropic.messages.create(model="claude-x", max_tokens=64, messages=ASK)
    assert message.content[0].type == "text" and message.content[0].text == "Canned answer."
    response = await synthgpt_async_openai.responses.create(model="gpt-4o", input="hello")
    assert response.output_text == "Canned answer."
    assert [c.api for c in synthgpt.calls] == ["messages", "responses"]


def test_openai_sync_and_server_share_one_journal(
    synthgpt: SynthGPTFixture, synthgpt_openai: openai.OpenAI, synthgpt_server: LiveServer
) -> None:
    local = synthgpt_openai.chat.completions.create(model="gpt-4o", messages=ASK)  # type: ignore[arg-type]
    url = synthgpt_server.url + "/v1/chat/completions"
    remote = httpx.post(url, json={"model": "gpt-4o", "messages": ASK})
    assert remote.json()["choices"][0]["message"]["content"] == local.choices[0].message.content
    assert remote.json()["id"] == local.id  # same seed, same request: same bytes, whichever way it came
    assert synthgpt.call_count == 2


def test_snapshot_fixtures_use_the_extensions(
    synthgpt_sse_snapshot: object, synthgpt_json_snapshot: object
) -> None:
    from synthgpt.testing.snapshots import JSONSnapshotExtension, SSESnapshotExtension

    assert getattr(synthgpt_sse_snapshot, "extension_class", None) is SSESnapshotExtension
    assert getattr(synthgpt_json_snapshot, "extension_class", None) is JSONSnapshotExtension
