"""An answer as the wire carries it, for people to look at: status, JSON body, SSE frames and their timing.

What `synthgpt explain`, `POST /_synthgpt/explain` and the journal viewer show. Built by the same codec
calls the API routes make (`codec.body`, `codec.frames`, `plan_wire`), so the body and the stream bytes
are those a client receives; encoding is deterministic, so a journaled answer is re-encoded here rather
than its bytes kept. Stream timing is the plan's: the wait before each frame (first delay, then interval
plus seeded jitter) and when it is due from the start.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..codec.anthropic.encode import MessagesCodec
from ..codec.base import WireCodec
from ..codec.bedrock.encode import BedrockCodec
from ..codec.cohere.encode import CohereCodec
from ..codec.embeddings import EmbeddingsCodec
from ..codec.gemini.encode import GeminiCodec
from ..codec.ollama.encode import OllamaCodec
from ..codec.openai_chat.encode import ChatCodec
from ..codec.openai_responses.encode import ResponsesCodec
from ..codec.openai_responses.store import ResponseStore
from ..codec.sse import frame_delays, plan_wire
from ..model import ApiKind, ModelOutput, ModelRequest
from ..pipeline import Answered, error_answer, request_id

__all__ = ["WIRE_APIS", "WireAnswer", "WireFrame", "refused", "scratch_codec", "wire_answer"]

WIRE_APIS: tuple[ApiKind, ...] = ("chat", "responses", "messages", "embeddings")


def scratch_codec(api: str, request: ModelRequest | None = None) -> WireCodec:
    """A codec of `api` of its own: encoding a Responses answer stores it, and a view must store nothing
    in the server's `previous_response_id` store. `request` (decoded) tells the route of an API with more
    than one (Gemini's streaming route, Ollama's `/api/generate`, Bedrock's `converse-stream`). A Python
    (`api="python"`) request shows as Chat, and an embeddings request as OpenAI's (its neutral form does
    not say which provider's route it came by)."""
    if api == "responses":
        return ResponsesCodec(ResponseStore(1))
    if api == "messages":
        return MessagesCodec()
    if api == "embeddings":
        return EmbeddingsCodec()
    streamed = request is not None and request.stream
    if api == "gemini":
        return GeminiCodec(stream=streamed)
    if api == "ollama":
        return OllamaCodec(generate=request is not None and request.extra.get("endpoint") == "generate")
    if api == "cohere":
        return CohereCodec()
    if api == "bedrock":
        return BedrockCodec(stream=streamed)
    return ChatCodec()


@dataclass(frozen=True, slots=True)
class WireFrame:
    event: str | None
    data: str
    delay_ms: float
    """Wait before this frame (after the one before it)."""
    at_ms: float
    """When the frame is due, from the start of the response."""


@dataclass(frozen=True, slots=True)
class WireAnswer:
    status: int
    stream: bool
    """Whether the call is answered with the stream (else with `body`)."""
    body: Any
    """The JSON body (an error body for a status other than 200)."""
    frames: tuple[WireFrame, ...] = ()
    """The SSE frames of the same answer (faults applied); empty for embeddings and errors."""
    sse: str = ""
    """The stream's exact text (frames, keep-alives, malformed frames)."""
    aborts: bool = False
    """The stream ends by dropping the connection."""
    first_delay_ms: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "stream": self.stream,
            "body": self.body,
            "frames": [
                {
                    "event": f.event,
                    "data": f.data,
                    "delay_ms": round(f.delay_ms, 3),
                    "at_ms": round(f.at_ms, 3),
                }
                for f in self.frames
            ],
            "sse": self.sse,
            "aborts": self.aborts,
            "first_delay_ms": self.first_delay_ms,
        }


def wire_answer(codec: WireCodec, output: ModelOutput, request: ModelRequest, seed: int) -> WireAnswer:
    """`output` as `codec` puts it on the wire; `seed` is the engine seed (error bodies carry request ids)."""
    plan = output.stream
    if output.error is not None:  # what the route sends for a rule's error answer
        rid = request_id(seed, request.api, request.fingerprint())
        error = output.error
        return refused(error_answer(codec, error, error.status, rid, first_delay_ms=plan.first_delay_ms))
    body = codec.body(output, request)
    if request.api == "embeddings" or isinstance(codec, EmbeddingsCodec):
        return WireAnswer(200, False, body, first_delay_ms=plan.first_delay_ms)
    # the first delay holds back the whole response (the route sleeps it first), so frames start after it
    rest = plan.model_copy(update={"first_delay_ms": 0.0})
    wire = plan_wire(codec.frames(output, request), rest, codec, output, request)
    delays = frame_delays(rest, len(wire.frames), output.id_seed)
    frames: list[WireFrame] = []
    at = plan.first_delay_ms
    for frame, delay in zip(wire.frames, delays, strict=True):
        at += delay
        frames.append(WireFrame(frame.event, frame.data, delay, at))
    sse = wire.data.decode("utf-8", errors="replace")
    return WireAnswer(200, request.stream, body, tuple(frames), sse, wire.aborts, plan.first_delay_ms)


def refused(answered: Answered) -> WireAnswer:
    """An error answer of the pipeline (`pipeline.refuse`, `pipeline.error_answer`) for people to read."""
    return WireAnswer(answered.status, False, answered.payload, first_delay_ms=answered.first_delay_ms)
