"""Hosted-tool items on the Responses wire: the web and file searches OpenAI runs itself.

A request declaring `web_search` (or `web_search_preview`) or `file_search` gets, before a text answer,
the search the provider would have run — a `web_search_call` (action `search` with the query) or a
`file_search_call` (its queries, and its results when `include` asks for `file_search_call.results`) — and
the message cites it: `url_citation` over the answer's last sentence, `file_citation` at the end. Streams
carry their events (`response.web_search_call.in_progress|searching|completed`, the file-search ones,
`response.output_text.annotation.added`). Only the items are synthesised: the text is the engine's answer,
the same on every API; everything else is derived from the answer's id seed and the request.
"""

from __future__ import annotations

import re
from typing import Any

from ...model import ModelOutput, ModelRequest
from ...seeding import derive_seed, token_from_seed

__all__ = ["HOSTED_EXTRA", "hosted_event_kinds", "hosted_items", "hosted_tools"]

HOSTED_EXTRA = "hosted_tools"
"""The `ModelRequest.extra` key holding the request's hosted search tools (their types, in order)."""
_SEARCHES = {
    "web_search": "web_search_call",
    "web_search_preview": "web_search_call",
    "web_search_2025_08_26": "web_search_call",
    "file_search": "file_search_call",
}
_LAST_SENTENCE = re.compile(r"[^.!?\n]+[.!?]?\s*$")


def hosted_tools(tools: Any) -> list[str]:
    """The kinds of hosted search the request's `tools` declare (`web_search_call`, `file_search_call`)."""
    kinds: list[str] = []
    for t in tools if isinstance(tools, list) else ():
        kind = _SEARCHES.get(t.get("type", "")) if isinstance(t, dict) else None
        if kind is not None and kind not in kinds:
            kinds.append(kind)
    return kinds


def _query(request: ModelRequest) -> str:
    from ...generators.prose import topic

    about = topic(request.last_user)
    return request.last_user.strip()[:200] if about == "this" else about


def hosted_items(
    output: ModelOutput, request: ModelRequest, hex_id: Any
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The search items to put before the answer's message, and the annotations of that message's text.
    Nothing when no search is declared, the choice is `none`, or the answer calls functions."""
    kinds = request.extra.get(HOSTED_EXTRA) or []
    if not kinds:  # most requests: the answer's text is not joined for nothing
        return [], []
    text = output.text
    if request.tool_choice.mode == "none" or output.tool_calls or not text:
        return [], []
    seed = output.id_seed
    query = _query(request)
    slug = re.sub(r"[^a-z0-9]+", "-", query.lower()).strip("-")[:60] or "answer"
    items: list[dict[str, Any]] = []
    notes: list[dict[str, Any]] = []
    for kind in kinds:
        if kind == "web_search_call":
            items.append(
                {
                    "id": hex_id("ws_", seed, "hosted", kind),
                    "type": kind,
                    "status": "completed",
                    "action": {"type": "search", "query": query},
                }
            )
            found = _LAST_SENTENCE.search(text)
            start = found.start() if found else 0
            end = len(text.rstrip()) if found else len(text)
            url = f"https://en.wikipedia.org/wiki/{slug.replace('-', '_').capitalize()}"
            notes.append(
                {
                    "type": "url_citation",
                    "start_index": start,
                    "end_index": end,
                    "url": url,
                    "title": query[:1].upper() + query[1:],
                }
            )
        else:
            file_id = "file-" + token_from_seed(derive_seed(seed, "file_search", slug), 22)
            filename = f"{slug}.pdf"
            results: list[dict[str, Any]] | None = None
            if "file_search_call.results" in (request.extra.get("include") or ()):
                score = 0.6 + (derive_seed(seed, "score") % 3900) / 10000
                first = re.split(r"(?<=[.!?])\s", text, maxsplit=1)[0]
                results = [
                    {
                        "file_id": file_id,
                        "filename": filename,
                        "score": round(score, 4),
                        "text": first,
                        "attributes": {},
                    }
                ]
            items.append(
                {
                    "id": hex_id("fs_", seed, "hosted", kind),
                    "type": kind,
                    "status": "completed",
                    "queries": [query],
                    "results": results,
                }
            )
            notes.append(
                {"type": "file_citation", "file_id": file_id, "filename": filename, "index": len(text)}
            )
    return items, notes


def hosted_event_kinds(item: dict[str, Any]) -> list[str]:
    """The progress events of a hosted search item, between its `output_item.added` and `.done`."""
    base = "response." + item["type"]
    return [f"{base}.in_progress", f"{base}.searching", f"{base}.completed"]
