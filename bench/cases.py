"""The benchmark cases: which request each sends, to which server, and the target it is held to.

Stream cases are sized to exactly `events` SSE events on the built-in rules by choosing the request's
output-token limit (the prose is cut there): the bench tries limits until the stream has that many
events, for a few prompt variants. The answer synthgpt actually gives is captured and becomes the
ceiling app's fixed payload, so both servers send the same bytes.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

__all__ = [
    "CASES",
    "NESTED_SCHEMA",
    "Case",
    "Prepared",
    "count_events",
    "prepare",
    "split_events",
]

PROMPT = "Tell me about tide pools and the creatures living in them"

NESTED_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["order_id", "status", "customer", "items", "totals"],
    "properties": {
        "order_id": {"type": "string"},
        "status": {"type": "string", "enum": ["pending", "paid", "shipped", "delivered"]},
        "customer": {
            "type": "object",
            "additionalProperties": False,
            "required": ["name", "email", "address"],
            "properties": {
                "name": {"type": "string"},
                "email": {"type": "string", "format": "email"},
                "address": {
                    "type": "object",
                    "additionalProperties": False,
                    "required": ["street", "city", "postcode", "country"],
                    "properties": {
                        "street": {"type": "string"},
                        "city": {"type": "string"},
                        "postcode": {"type": "string"},
                        "country": {"type": "string"},
                    },
                },
            },
        },
        "items": {
            "type": "array",
            "minItems": 1,
            "maxItems": 3,
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["sku", "quantity", "price"],
                "properties": {
                    "sku": {"type": "string"},
                    "quantity": {"type": "integer", "minimum": 1, "maximum": 9},
                    "price": {"type": "number", "minimum": 0, "maximum": 500},
                },
            },
        },
        "totals": {
            "type": "object",
            "additionalProperties": False,
            "required": ["subtotal", "tax", "total"],
            "properties": {
                "subtotal": {"type": "number"},
                "tax": {"type": "number"},
                "total": {"type": "number"},
            },
        },
    },
}

OPENAI_HEADERS = (("Content-Type", "application/json"), ("Authorization", "Bearer sk-bench"))
ANTHROPIC_HEADERS = (
    ("Content-Type", "application/json"),
    ("x-api-key", "sk-bench"),
    ("anthropic-version", "2023-06-01"),
)


def _chat(prompt: str, limit: int | None, stream: bool) -> dict[str, Any]:
    body: dict[str, Any] = {"model": "gpt-4o", "messages": [{"role": "user", "content": prompt}]}
    if stream:
        body["stream"] = True
    if limit is not None:
        body["max_tokens"] = limit
    return body


def _responses(prompt: str, limit: int | None, stream: bool) -> dict[str, Any]:
    body: dict[str, Any] = {"model": "gpt-4o", "input": prompt, "stream": stream}
    if limit is not None:
        body["max_output_tokens"] = limit
    return body


def _messages(prompt: str, limit: int | None, stream: bool) -> dict[str, Any]:
    return {
        "model": "claude-sonnet-4-5",
        "max_tokens": limit or 1024,
        "stream": stream,
        "messages": [{"role": "user", "content": prompt}],
    }


def _faker(prompt: str, limit: int | None, stream: bool) -> dict[str, Any]:
    return {"model": "bench-faker-template", "messages": [{"role": "user", "content": prompt}]}


def _schema(prompt: str, limit: int | None, stream: bool) -> dict[str, Any]:
    return {
        "model": "gpt-4o",
        "messages": [{"role": "user", "content": "Make up an order for " + prompt}],
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": "order", "strict": True, "schema": NESTED_SCHEMA},
        },
    }


@dataclass(frozen=True)
class Case:
    name: str
    title: str
    path: str
    make_body: Callable[[str, int | None, bool], dict[str, Any]]
    headers: tuple[tuple[str, str], ...]
    stream: bool
    target: float
    """Minimum same-round ratio synthgpt / ceiling, the same request repeated."""
    server: str = "builtin"
    """Which synthgpt instance answers: `builtin` (no rule file) or `rules` (bench/rules/*.yaml)."""
    ceiling: str = "the same bytes in one response"
    distinct: float | None = None
    """Minimum ratio with every request different (None: `target`)."""

    def target_for(self, mode: str) -> float:
        return self.distinct if mode == "distinct" and self.distinct is not None else self.target


STREAM_CEILING = "the same events, one SSE event per send"

CASES: tuple[Case, ...] = (
    Case(
        "chat", "chat, non-stream, built-in rules", "/v1/chat/completions", _chat, OPENAI_HEADERS, False,
        0.75, distinct=0.5,
    ),
    Case(
        "chat_stream",
        "chat stream, 50 events, unpaced",
        "/v1/chat/completions",
        _chat,
        OPENAI_HEADERS,
        True,
        2.6,
        ceiling=STREAM_CEILING,
    ),
    Case(
        "responses_stream",
        "responses stream, 50 events, unpaced",
        "/v1/responses",
        _responses,
        OPENAI_HEADERS,
        True,
        2.6,
        ceiling=STREAM_CEILING,
    ),
    Case(
        "messages_stream",
        "anthropic stream, 50 events, unpaced",
        "/v1/messages",
        _messages,
        ANTHROPIC_HEADERS,
        True,
        2.6,
        ceiling=STREAM_CEILING,
    ),
    Case(
        "faker_template",
        "Faker + Jinja2 template rule",
        "/v1/chat/completions",
        _faker,
        OPENAI_HEADERS,
        False,
        0.5,
        server="rules",
        distinct=0.25,
    ),
    Case(
        "schema",
        "structured output, nested JSON schema",
        "/v1/chat/completions",
        _schema,
        OPENAI_HEADERS,
        False,
        0.5,
        distinct=0.25,
    ),
    Case(
        "responses", "responses, non-stream, built-in rules", "/v1/responses", _responses, OPENAI_HEADERS,
        False, 0.75, distinct=0.5,
    ),
)


def split_events(body: bytes) -> list[bytes]:
    """The SSE events of a stream body, each with its terminating blank line."""
    norm = body.replace(b"\r\n", b"\n")
    return [block + b"\n\n" for block in norm.split(b"\n\n") if block.strip()]


def count_events(body: bytes) -> int:
    return len(split_events(body))


@dataclass
class Prepared:
    """A case ready to run: the exact body sent and the answer captured for the ceiling."""

    case: Case
    body: bytes = b""
    content_type: str = ""
    answer: bytes = b""
    events: int = 0
    note: str = ""
    skip: str | None = None
    """Why the case cannot run (e.g. "n/a: route missing")."""
    extra: dict[str, Any] = field(default_factory=dict)

    def ceiling_payload(self) -> dict[str, Any]:
        if self.case.stream:
            return {
                "content_type": self.content_type,
                "events": [e.decode() for e in split_events(self.answer)],
            }
        return {"content_type": self.content_type, "body": self.answer.decode()}


def _encode(body: dict[str, Any]) -> bytes:
    return json.dumps(body, separators=(",", ":")).encode()


async def _post_all(
    base: str,
    path: str,
    headers: tuple[tuple[str, str], ...],
    bodies: list[bytes],
    timeout: float,
    transport: httpx.AsyncBaseTransport | None = None,
) -> list[httpx.Response | Exception]:
    limits = httpx.Limits(max_connections=len(bodies) + 1, max_keepalive_connections=len(bodies) + 1)
    async with httpx.AsyncClient(
        base_url=base, timeout=timeout, limits=limits, transport=transport
    ) as client:

        async def one(b: bytes) -> httpx.Response | Exception:
            try:
                return await client.post(path, content=b, headers=dict(headers))
            except httpx.HTTPError as exc:
                return exc

        return list(await asyncio.gather(*(one(b) for b in bodies)))


def _describe_failure(resp: httpx.Response | Exception) -> str:
    if isinstance(resp, Exception):
        return f"n/a: {type(resp).__name__}: {resp}"
    if resp.status_code in (404, 405):
        return "n/a: route missing"
    first = resp.text.strip().splitlines()[0] if resp.text.strip() else ""
    return f"n/a: HTTP {resp.status_code}: {first[:100]}"


def prepare(
    case: Case,
    base: str,
    *,
    events: int = 50,
    prompt: str = PROMPT,
    variants: int = 12,
    timeout: float = 30.0,
    transport: httpx.AsyncBaseTransport | None = None,
) -> Prepared:
    """Pick the body (sizing streams to `events` events) and capture synthgpt's answer to it.

    `transport` replaces the network (e.g. an httpx.ASGITransport to call an app in process).
    """
    prep = Prepared(case)
    if not case.stream:
        body = _encode(case.make_body(prompt, None, False))
        resp = asyncio.run(_post_all(base, case.path, case.headers, [body], timeout, transport))[0]
        if isinstance(resp, Exception) or resp.status_code != 200:
            prep.skip = _describe_failure(resp)
            return prep
        prep.body, prep.answer = body, resp.content
        prep.content_type = resp.headers.get("content-type", "application/json")
        return prep
    best: tuple[int, bytes, httpx.Response] | None = None
    failures: list[httpx.Response | Exception] = []

    def consider(bodies: list[bytes]) -> list[int]:
        """Event counts of the answers to `bodies` (-1 for a failure); keeps the closest to `events`."""
        nonlocal best
        counts = []
        answers = asyncio.run(_post_all(base, case.path, case.headers, bodies, timeout, transport))
        for body, resp in zip(bodies, answers, strict=True):
            if isinstance(resp, Exception) or resp.status_code != 200:
                failures.append(resp)
                counts.append(-1)
                continue
            n = count_events(resp.content)
            counts.append(n)
            if best is None or abs(n - events) < abs(best[0] - events):
                best = (n, body, resp)
        return counts

    # The limit is part of the request, so it reseeds the prose too: the event count is not monotonic in
    # it. Batches of limits (and prompt variants) are tried until one answer has exactly `events` events.
    limits = list(range(max(1, events - 10), events + 90))
    for v in range(variants):
        text = prompt if v == 0 else f"{prompt} (variant {v})"
        for start in range(0, len(limits), 40):
            counts = consider([_encode(case.make_body(text, n, True)) for n in limits[start : start + 40]])
            if events in counts:
                break
            if v == 0 and start == 0 and all(c < 0 for c in counts):
                prep.skip = _describe_failure(failures[-1])
                return prep
        if best is not None and best[0] == events:
            break
    if best is None:
        prep.skip = "n/a: no answer"
        return prep
    prep.events, prep.body, resp = best[0], best[1], best[2]
    prep.answer = resp.content
    prep.content_type = resp.headers.get("content-type", "text/event-stream")
    if prep.events != events:
        prep.note = f"{prep.events} events (no output-token limit gave exactly {events})"
    return prep


def with_counter(body: bytes, prompt: str = PROMPT) -> bytes:
    """The body with a `{N}` placeholder in its prompt, for load generators that make each request unique."""
    data = json.loads(body)
    text = json.dumps(data)
    return _encode(json.loads(text.replace(prompt, prompt + " #{N}", 1)))


__all__ += ["PROMPT", "with_counter"]
