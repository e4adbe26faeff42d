"""A call record's JSON form: the SQLite journal's rows, the JSONL export, the Redis journal's entries."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..model import ModelOutput, ModelRequest
from .memory import CallRecord, Delivery

__all__ = ["record_from_dict", "record_to_dict"]


def record_to_dict(record: CallRecord) -> dict[str, Any]:
    """A JSON-ready form of a record; `seed` is a string because it is a 64-bit unsigned integer,
    which JavaScript and SQLite integers cannot hold exactly."""
    return {
        "index": record.index,
        "api": record.api,
        "model": record.model,
        "rule": record.rule,
        "seed": str(record.seed),
        "at": record.at,
        "duration_ms": record.duration_ms,
        "captures": dict(record.captures),
        "outcome": record.outcome,
        "frames_sent": record.frames_sent,
        "request": record.request.model_dump(mode="json", by_alias=True),
        "output": record.output.model_dump(mode="json"),
    }


def record_from_dict(data: Mapping[str, Any]) -> CallRecord:
    return CallRecord(
        index=int(data["index"]),
        request=ModelRequest.model_validate(data["request"]),
        rule=str(data["rule"]),
        seed=int(data["seed"]),
        output=ModelOutput.model_validate(data["output"]),
        at=float(data["at"]),
        duration_ms=float(data.get("duration_ms", 0.0)),
        captures=dict(data.get("captures", {})),
        delivery=Delivery(data.get("outcome", "done"), data.get("frames_sent")),
    )
