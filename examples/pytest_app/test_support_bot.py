"""The support bot tested in process against synthgpt: no network, no API key, same answers every run."""

from __future__ import annotations

import json

import openai
import pytest
from support_bot import BUSY, SupportBot, Triage

from synthgpt import Rule
from synthgpt import generators as g
from synthgpt import matchers as m
from synthgpt.testing.snapshots import JSONSnapshotExtension, SSESnapshotExtension

MASK_IDS = SSESnapshotExtension.with_mask(["id", "created", "system_fingerprint"])


def test_triage_returns_a_valid_structured_answer(synthgpt_openai: openai.OpenAI, snapshot) -> None:
    # The built-in rules answer a json_schema request with a document valid against the schema.
    triage = SupportBot(synthgpt_openai).triage("My parcel never arrived!")
    assert isinstance(triage, Triage)
    assert triage.category in ("billing", "shipping", "bug", "other")
    assert triage == snapshot(extension_class=JSONSnapshotExtension)


def test_reply_runs_the_tool_loop(synthgpt, synthgpt_openai: openai.OpenAI) -> None:
    bot = SupportBot(synthgpt_openai)
    answer = bot.reply("Where is my order?")
    # round 1: the model called lookup_order with schema-valid arguments; round 2: it quoted the result
    assert len(bot.tool_calls) == 1 and bot.tool_calls[0]["order_id"].startswith("ORD-")
    assert "PostNord" in answer
    assert synthgpt.call_count == 2
    assert [c.rule for c in synthgpt.calls] == ["tool_call", "tool_results"]
    synthgpt.assert_called_with(m.has_tool_result("lookup_order"), model="gpt-4o-mini")


@pytest.mark.synthgpt(
    rules=[
        Rule("refunds", m.last_user(contains="refund"), "Refunds reach your card within 5 days."),
        Rule("order", m.last_user(regex=r"order (?P<id>ORD-\d{6})"),
             g.tool_call("lookup_order", {"order_id": g.template("{{ id }}")}), times=1),
        Rule("after-tool", m.has_tool_result("lookup_order"),
             g.template("Your order has {{ tool_result('lookup_order').status }}.")),
    ]
)  # fmt: skip
def test_scripted_conversation(synthgpt, synthgpt_openai: openai.OpenAI) -> None:
    bot = SupportBot(synthgpt_openai)
    assert bot.reply("Can I get a refund?") == "Refunds reach your card within 5 days."
    assert bot.reply("What about order ORD-123456?") == "Your order has shipped."
    assert bot.tool_calls == [{"order_id": "ORD-123456"}]
    synthgpt.assert_any_call(rule="order")
    synthgpt.assert_all_rules_called()


def test_rate_limits_degrade_politely(synthgpt, synthgpt_openai: openai.OpenAI) -> None:
    # A trigger in the message makes any rule set answer 429 in OpenAI's own error shape.
    assert SupportBot(synthgpt_openai).reply("hello !MOCK_ERROR:429!") == BUSY
    assert synthgpt.last.output.error is not None and synthgpt.last.output.error.status == 429


def test_streamed_reply(synthgpt, synthgpt_openai: openai.OpenAI) -> None:
    pieces = list(SupportBot(synthgpt_openai).stream_reply("Tell me about your return policy."))
    assert len(pieces) > 3  # delivered as deltas, not one block
    assert "".join(pieces) == synthgpt.last.output.text


HELLO = Rule("hi", m.always(), g.answer("Hello! How can I help?", stream={"chunk_chars": 8}))


@pytest.mark.synthgpt(rules=[HELLO])
def test_stream_on_the_wire(synthgpt_openai: openai.OpenAI, snapshot) -> None:
    with synthgpt_openai.chat.completions.with_streaming_response.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": "Say hi"}], stream=True,
        stream_options={"include_usage": True},
    ) as response:
        raw = response.read()
    assert raw.endswith(b"data: [DONE]\n\n")
    assert raw == snapshot(extension_class=MASK_IDS)


@pytest.mark.synthgpt(seed=42)
def test_the_seed_picks_the_answer(synthgpt, synthgpt_openai: openai.OpenAI) -> None:
    first = SupportBot(synthgpt_openai).reply("hi")
    synthgpt.reset()
    assert SupportBot(synthgpt_openai).reply("hi") == first  # same seed + same request = same answer
    assert json.dumps(first)  # plain text, ready to assert on
