"""A tiny support bot built on the openai SDK: the app under test in this example suite.

It triages tickets with structured output, answers questions with a tool loop (`lookup_order`), streams
replies, and degrades politely when the API is rate limited. Nothing here knows about synthgpt: the tests
hand it a client wired to synthgpt instead of the real API.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Literal

import openai
from pydantic import BaseModel, Field

MODEL = "gpt-4o-mini"
BUSY = "We are busy right now; a human will get back to you."

LOOKUP_ORDER = {
    "type": "function",
    "function": {
        "name": "lookup_order",
        "description": "Find an order by its id",
        "parameters": {
            "type": "object",
            "properties": {"order_id": {"type": "string", "pattern": "^ORD-[0-9]{6}$"}},
            "required": ["order_id"],
            "additionalProperties": False,
        },
    },
}


class Triage(BaseModel):
    category: Literal["billing", "shipping", "bug", "other"]
    urgency: int = Field(ge=1, le=5)
    summary: str = Field(max_length=80)


ORDERS = {"status": "shipped", "carrier": "PostNord"}


def lookup_order(order_id: str) -> dict[str, str]:
    return {"order_id": order_id, **ORDERS}


class SupportBot:
    def __init__(self, client: openai.OpenAI, model: str = MODEL) -> None:
        self.client = client
        self.model = model
        self.tool_calls: list[dict[str, str]] = []

    def triage(self, ticket: str) -> Triage:
        completion = self.client.chat.completions.parse(
            model=self.model,
            messages=[
                {"role": "system", "content": "Triage the ticket."},
                {"role": "user", "content": ticket},
            ],
            response_format=Triage,
        )
        parsed = completion.choices[0].message.parsed
        assert parsed is not None
        return parsed

    def reply(self, question: str, max_rounds: int = 3) -> str:
        messages: list[dict[str, object]] = [{"role": "user", "content": question}]
        try:
            for _ in range(max_rounds):
                completion = self.client.chat.completions.create(
                    model=self.model, messages=messages, tools=[LOOKUP_ORDER]  # type: ignore[arg-type, list-item]
                )
                message = completion.choices[0].message
                if not message.tool_calls:
                    return message.content or ""
                messages.append(message.model_dump(exclude_none=True))
                for call in message.tool_calls:
                    args = json.loads(call.function.arguments)  # type: ignore[union-attr]
                    self.tool_calls.append(args)
                    result = lookup_order(**args)
                    messages.append({"role": "tool", "tool_call_id": call.id, "content": json.dumps(result)})
        except openai.RateLimitError:
            return BUSY
        return BUSY

    def stream_reply(self, question: str) -> Iterator[str]:
        stream = self.client.chat.completions.create(
            model=self.model, messages=[{"role": "user", "content": question}], stream=True
        )
        for chunk in stream:
            if chunk.choices and chunk.choices[0].delta.content:
                yield chunk.choices[0].delta.content
