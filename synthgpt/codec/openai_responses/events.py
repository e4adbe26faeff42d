"""The Responses API event list (WIRE.md §3.3) and the response object it folds into.

`response_events` is the one source of both encodings: the stream sends the events, the non-stream body
is the `response` of the terminal event. Output items are built once, finished; each item's events are
derived from it (added in progress, deltas, done), so the fold of the deltas is the item by construction.

With `include: ["message.output_text.logprobs"]` each `output_text` part carries one `LogProb` entry per
token of its text (`synthgpt.logprobs`, with `top_logprobs` alternatives, default 0), its text deltas are
cut on token boundaries and each carries its tokens' entries in the `ResponseLogProb` shape (no `bytes`),
as does `response.output_text.done` for the whole text. Without it, `logprobs` stays `[]`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal, TypeVar

from ...logprobs import TokenLogprob, alternatives_asked, group_by_chars, token_logprobs
from ...model import ModelOutput, ModelRequest, ReasoningPart, StreamPlan, TextOut
from ...seeding import HEX, derive_seed, token_from_seed
from ..sse import chunk_text, text_pieces
from .hosted import hosted_event_kinds, hosted_items

__all__ = [
    "LOGPROBS_INCLUDE",
    "UNKNOWN_ITEM_TYPE",
    "Event",
    "PlainMessage",
    "Status",
    "TextRun",
    "hex_id",
    "logprobs_asked",
    "response_body",
    "response_events",
    "response_id",
    "response_object",
    "stream_parts",
]  # fmt: skip

LOGPROBS_INCLUDE = "message.output_text.logprobs"
"""The `include` value that asks for the logprobs of output text."""

UNKNOWN_ITEM_TYPE = "synthgpt_unknown_item"
"""The output item type of the `unknown_item` fault: a kind no SDK knows, as a future API might add."""


Status = Literal["completed", "incomplete", "failed", "in_progress"]
Event = dict[str, Any]
P = TypeVar("P")  # what else than events a list of them holds (`_message_events`)


def response_id(output: ModelOutput) -> str:
    """`resp_…` from the answer's seed, or the id its rule pins."""
    return _response_id(output.stream.id, output.id_seed)


@lru_cache(maxsize=256)  # one answer asks for its response id several times (events, store)
def _response_id(pinned: str | None, seed: int) -> str:
    # keyed on the two fields it reads: hashing and comparing the whole (pydantic) output cost more
    return pinned or hex_id("resp_", seed, "response")


def item_seed(output: ModelOutput) -> int:
    """What output item ids derive from: the answer's seed, or its rule's pinned response id, so two servers
    pinning one id write the same item ids (what a recording replays, docs/record.md)."""
    pinned = output.stream.id
    return output.id_seed if pinned is None else derive_seed("pinned-id", pinned)


def hex_id(prefix: str, seed: int, *labels: object) -> str:
    """`prefix` + 48 hex digits derived from a seed and labels (the form of every Responses id)."""
    return prefix + token_from_seed(derive_seed(seed, *labels), 48, HEX)


@dataclass(slots=True)
class TextRun:
    """The `response.output_text.delta` events of one message's text (without logprobs), not yet built:
    most of a stream's events, which the codec writes from a template instead of one dict each.
    `events()` builds them as `response_events` lists them."""

    item_id: str
    output_index: int
    pieces: Sequence[str]

    def events(self) -> list[Event]:
        ids = {"item_id": self.item_id, "output_index": self.output_index}
        return [
            {"type": "response.output_text.delta", **ids, "content_index": 0, "delta": d, "logprobs": []}
            for d in self.pieces
        ]


@dataclass(slots=True)
class PlainMessage:
    """Every event of one message item whose text carries no logprobs and no annotations (most answers),
    from `response.output_item.added` to `.output_item.done`, not yet built: the codec writes them from
    templates around the item id's and the text's JSON, without a dict and an encoder pass each (the text
    alone is in four of them). `events()` builds them as `response_events` lists them."""

    item: dict[str, Any]
    index: int
    pieces: Sequence[str]
    """The text's deltas."""

    def __len__(self) -> int:
        """How many events: added, content part added, the deltas, text done, content part done, done."""
        return len(self.pieces) + 5

    def events(self) -> list[Event]:
        deltas = TextRun(self.item["id"], self.index, self.pieces).events()
        return _message_events(self.item, self.index, deltas)


Part = Event | TextRun | PlainMessage
"""One event of the healthy stream, a run of text delta events, or a plain message's events
(`stream_parts`)."""


def logprobs_asked(request: ModelRequest) -> int | None:
    """The alternatives per token asked for (`top_logprobs`, default 0) when `include` asks for output text
    logprobs; None when it does not. A request built in Python is held to the API's 0..20."""
    include = request.extra.get("include")
    if not isinstance(include, list | tuple) or LOGPROBS_INCLUDE not in include:
        return None
    return alternatives_asked(request.extra.get("top_logprobs"))


def response_events(output: ModelOutput, request: ModelRequest) -> list[Event]:
    """The healthy stream's payloads, numbered; the last one is the terminal event (whose `response` is
    the non-stream body)."""
    events: list[Event] = []
    for part in stream_parts(output, request):
        if isinstance(part, TextRun | PlainMessage):
            events += part.events()
        else:
            events.append(part)
    for i, e in enumerate(events):
        e["sequence_number"] = i
    return events


def stream_parts(output: ModelOutput, request: ModelRequest) -> list[Part]:
    """The healthy stream's payloads in order, not numbered, each message without logprobs and annotations
    as one `PlainMessage`, any other message's plain text deltas as one `TextRun`; the last one is the
    terminal event."""
    status, items = _finished_items(output, request)
    final = response_object(output, request, status, items)
    shell = _in_progress(final)
    events: list[Part] = [
        {"type": "response.created", "response": shell},
        {"type": "response.in_progress", "response": shell},
    ]
    for index, item in enumerate(items):
        events.extend(_item_events(item, index, output.stream))
    terminal = "response.completed" if status == "completed" else "response.incomplete"
    events.append({"type": terminal, "response": final})
    return events


def _in_progress(response: Event) -> Event:
    """`response_object(output, request, "in_progress", [])` made from the same answer's finished
    `response` (one object built instead of two): only the members the status and the items decide differ,
    the others are the same values (`usage` is left out, as for any unfinished response)."""
    shell = {**response, "status": "in_progress", "completed_at": None, "incomplete_details": None}
    shell["output"] = []
    shell.pop("usage", None)
    return shell


def response_body(output: ModelOutput, request: ModelRequest) -> Event:
    """The `response` of `stream_parts`' terminal event (the non-stream body), without building the events
    before it: they only ever read the items, so the fold is the items themselves (tested equal)."""
    status, items = _finished_items(output, request)
    return response_object(output, request, status, items)


def _finished_items(output: ModelOutput, request: ModelRequest) -> tuple[Status, list[dict[str, Any]]]:
    """The answer's status and its output items as the terminal event carries them."""
    items = _items(output, request)
    unknown = output.stream.fault("unknown_item")
    if unknown is not None:
        items.insert(_unknown_position(items, unknown.after), _unknown_item(output, len(items)))
    status: Status = "completed"
    if output.finish_reason in ("length", "content_filter"):
        status = "incomplete"
        for index, item in enumerate(items):
            # a cut answer's messages are incomplete, and so is a function call the token limit cut (the
            # last)
            last_call = item["type"] == "function_call" and index == len(items) - 1
            if item["type"] == "message" or last_call:
                item["status"] = "incomplete"
    return status, items


# ------------------------------------------------------------------------------------------------- items


def _items(output: ModelOutput, request: ModelRequest) -> list[dict[str, Any]]:
    """The finished output items, in order: reasoning, one message per run of text, function calls."""
    seed = item_seed(output)
    summarise = request.reasoning is not None and request.reasoning.summary is not None
    encrypted = "reasoning.encrypted_content" in (request.extra.get("include") or ())
    items: list[dict[str, Any]] = []
    for index, part in enumerate(output.parts):
        if isinstance(part, ReasoningPart):
            item: dict[str, Any] = {
                "id": hex_id("rs_", seed, "item", index),
                "type": "reasoning",
                "summary": [],
            }
            if summarise:
                item["summary"] = [{"type": "summary_text", "text": part.text}]
            if encrypted:
                item["encrypted_content"] = part.signature or token_from_seed(
                    derive_seed(seed, "sig", index), 64
                )
            items.append(item)
        elif isinstance(part, TextOut):
            if items and items[-1]["type"] == "message":  # adjacent text parts read as one message
                items[-1]["content"][0]["text"] += part.text
                continue
            items.append(
                {
                    "id": hex_id("msg_", seed, "item", index),
                    "type": "message",
                    "status": "completed",
                    "content": [
                        {"type": "output_text", "annotations": [], "logprobs": [], "text": part.text}
                    ],
                    "role": "assistant",
                }
            )
        else:
            items.append(
                {
                    "id": hex_id("fc_", seed, "item", index),
                    "type": "function_call",
                    "status": "completed",
                    "arguments": part.arguments,
                    "call_id": part.id,
                    "name": part.name,
                }
            )
    if not any(i["type"] in ("message", "function_call") for i in items):
        items.append(
            {
                "id": hex_id("msg_", seed, "item", len(output.parts)),
                "type": "message",
                "status": "completed",
                "content": [{"type": "output_text", "annotations": [], "logprobs": [], "text": ""}],
                "role": "assistant",
            }
        )
    searches, notes = hosted_items(output, request, hex_id)
    if searches:  # the provider's searches come before the answer that cites them
        at = next(i for i, item in enumerate(items) if item["type"] == "message")
        items[at]["content"][0]["annotations"] = notes
        items[at:at] = searches
    top = logprobs_asked(request)
    if top is not None:
        for item in items:
            if item["type"] == "message":
                part = item["content"][0]
                # seeded by the item: each message of the answer has its own, the same in stream and body
                part["logprobs"] = token_logprobs(
                    part["text"], derive_seed(seed, "logprobs", item["id"]), top
                )
    return items


_WHOLE = StreamPlan(chunk_chars=1 << 30)


def _unknown_position(items: list[dict[str, Any]], after_frames: int) -> int:
    """The first item boundary at or after `after_frames` frames of the healthy stream."""
    frames = 2  # response.created, response.in_progress
    for index, item in enumerate(items):
        if frames >= after_frames:
            return index
        parts = _item_events(item, index, _WHOLE)
        frames += sum(len(p.pieces) if isinstance(p, TextRun) else len(p) for p in parts)
    return len(items)


def _unknown_item(output: ModelOutput, index: int) -> dict[str, Any]:
    return {
        "id": hex_id("synth_", item_seed(output), "unknown", index),
        "type": UNKNOWN_ITEM_TYPE,
        "status": "completed",
    }


def _item_events(item: dict[str, Any], index: int, plan: StreamPlan) -> list[Part]:
    kind = item["type"]
    chunk = plan.chunk_chars
    ids = {"item_id": item["id"], "output_index": index}
    out: list[Part] = []
    if kind == "message":
        full = item["content"][0]
        entries: list[TokenLogprob] = full["logprobs"]
        if not entries and not full["annotations"]:
            return [PlainMessage(item, index, text_pieces(full["text"], plan))]
        deltas: list[Part] = []
        if entries:
            deltas.extend(
                {
                    "type": "response.output_text.delta",
                    **ids,
                    "content_index": 0,
                    "delta": piece,
                    "logprobs": _event_logprobs(members),
                }
                for piece, members in group_by_chars(entries, chunk)
            )
        else:
            pieces = text_pieces(full["text"], plan)
            if pieces:
                deltas.append(TextRun(item["id"], index, pieces))
        return _message_events(item, index, deltas)
    elif kind in ("web_search_call", "file_search_call"):
        out.append(_added({**item, "status": "in_progress"}, index))
        out.extend({"type": name, **ids} for name in hosted_event_kinds(item))
    elif kind == "function_call":
        out.append(_added({**item, "status": "in_progress", "arguments": ""}, index))
        out.extend(
            {"type": "response.function_call_arguments.delta", **ids, "delta": d}
            for d in chunk_text(item["arguments"], chunk)
        )
        out.append(
            {
                "type": "response.function_call_arguments.done",
                **ids,
                "name": item["name"],
                "arguments": item["arguments"],
            }
        )
    elif kind == "reasoning":
        out.append(_added({**item, "summary": []}, index))
        for s, summary in enumerate(item["summary"]):
            sid = {**ids, "summary_index": s}
            out.append(
                {
                    "type": "response.reasoning_summary_part.added",
                    **sid,
                    "part": {"type": "summary_text", "text": ""},
                }
            )
            out.extend(
                {"type": "response.reasoning_summary_text.delta", **sid, "delta": d}
                for d in chunk_text(summary["text"], chunk)
            )
            out.append({"type": "response.reasoning_summary_text.done", **sid, "text": summary["text"]})
            out.append({"type": "response.reasoning_summary_part.done", **sid, "part": summary})
    else:
        out.append(_added({**item, "status": "in_progress"}, index))
    out.append({"type": "response.output_item.done", "output_index": index, "item": item})
    return out


def _message_events(item: dict[str, Any], index: int, deltas: list[P]) -> list[Event | P]:
    """A message item's events around its text's `deltas` (`PlainMessage` lists its own from here too)."""
    ids = {"item_id": item["id"], "output_index": index}
    full = item["content"][0]
    entries: list[TokenLogprob] = full["logprobs"]
    empty = {"type": "output_text", "annotations": [], "logprobs": [], "text": ""}
    out: list[Event | P] = [
        _added({**item, "status": "in_progress", "content": []}, index),
        {"type": "response.content_part.added", **ids, "content_index": 0, "part": empty},
    ]
    out += deltas
    out.extend(
        {"type": "response.output_text.annotation.added", **ids, "content_index": 0,
         "annotation_index": k, "annotation": note}
        for k, note in enumerate(full["annotations"])
    )  # fmt: skip
    out.append(
        {
            "type": "response.output_text.done",
            **ids,
            "content_index": 0,
            "text": full["text"],
            "logprobs": _event_logprobs(entries) if entries else [],
        }
    )
    out.append({"type": "response.content_part.done", **ids, "content_index": 0, "part": full})
    out.append({"type": "response.output_item.done", "output_index": index, "item": item})
    return out



def _event_logprobs(entries: list[TokenLogprob]) -> list[dict[str, Any]]:
    """Entries in the events' `ResponseLogProb` shape: the part's `LogProb` without `bytes`."""
    return [
        {
            "token": e["token"],
            "logprob": e["logprob"],
            "top_logprobs": [{"token": t["token"], "logprob": t["logprob"]} for t in e["top_logprobs"]],
        }
        for e in entries
    ]


def _added(item: dict[str, Any], index: int) -> Event:
    return {"type": "response.output_item.added", "output_index": index, "item": item}


# ---------------------------------------------------------------------------------------------- response


def _tool_choice(request: ModelRequest) -> Any:
    if "tool_choice" in request.extra:
        return request.extra["tool_choice"]
    choice = request.tool_choice
    return {"type": "function", "name": choice.name} if choice.mode == "named" else choice.mode


def _text_config(request: ModelRequest) -> dict[str, Any]:
    text = request.extra.get("text")
    config: dict[str, Any] = {"format": {"type": "text"}, "verbosity": "medium"}
    if isinstance(text, dict):
        config.update({k: v for k, v in text.items() if v is not None})
    elif request.response_schema is not None:
        schema = request.response_schema
        if schema.kind == "json_object":
            config["format"] = {"type": "json_object"}
        else:
            config["format"] = {
                "type": "json_schema",
                "name": schema.name,
                "schema": schema.schema_,
                "strict": schema.strict,
            }
    return config


def response_object(
    output: ModelOutput, request: ModelRequest, status: Status, items: list[dict[str, Any]]
) -> Event:
    extra = request.extra
    usage = output.usage
    reason = {"length": "max_output_tokens", "content_filter": "content_filter"}.get(output.finish_reason)
    response: Event = {
        "id": response_id(output),
        "object": "response",
        "created_at": output.created,
        "status": status,
        "background": bool(extra.get("background", False)),
        "completed_at": output.created if status == "completed" else None,
        "error": None,
        "incomplete_details": {"reason": reason} if status == "incomplete" else None,
        "instructions": extra.get("instructions"),
        "max_output_tokens": request.max_output_tokens,
        "max_tool_calls": extra.get("max_tool_calls"),
        "model": output.model,
        "output": list(items),
        "parallel_tool_calls": request.parallel_tool_calls,
        "previous_response_id": extra.get("previous_response_id"),
        "prompt_cache_key": extra.get("prompt_cache_key"),
        "reasoning": {
            "effort": request.reasoning.effort if request.reasoning else None,
            "summary": request.reasoning.summary if request.reasoning else None,
        },
        "safety_identifier": extra.get("safety_identifier"),
        "service_tier": "default",
        "store": extra.get("store", True) is not False,
        "temperature": extra.get("temperature", 1.0),
        "text": _text_config(request),
        "tool_choice": _tool_choice(request),
        "tools": [
            {
                "type": "function",
                "name": t.name,
                "description": t.description or None,
                "parameters": t.parameters,
                "strict": t.strict,
            }
            for t in request.tools
        ],
        "top_logprobs": extra.get("top_logprobs", 0),
        "top_p": extra.get("top_p", 1.0),
        "truncation": extra.get("truncation", "disabled"),
        "metadata": extra.get("metadata") or {},
    }
    # The spec types `usage` and `user` as non-nullable: they are left out rather than sent as null.
    if status not in ("in_progress", "failed"):
        response["usage"] = {
            "input_tokens": usage.prompt_tokens,
            "input_tokens_details": {"cached_tokens": usage.cached_tokens, "cache_write_tokens": 0},
            "output_tokens": usage.completion_tokens,
            "output_tokens_details": {"reasoning_tokens": usage.reasoning_tokens},
            "total_tokens": usage.total_tokens,
        }
    if extra.get("user") is not None:
        response["user"] = extra["user"]
    return response
