"""A wire request explained: the trace of the rules and the answer as the API route would send it.

`explain_wire` is what `POST /_synthgpt/explain` answers and `synthgpt explain --json` prints. It goes the
route's way (decode, the served models, the rules) but through `MockGPT.explain`, which claims and records
nothing; the answer is then encoded by a codec of its own, so nothing is added to the server's Responses
store.
"""

from __future__ import annotations

from typing import Any

from ..codec.base import WireCodec
from ..engine import MockGPT
from ..errors import NoRuleMatched
from ..explain import Explanation, with_seed
from ..model import ModelRequest
from ..pipeline import error_answer, model_not_found, refuse, request_id, serves
from .wire_view import WireAnswer, refused, scratch_codec, wire_answer

__all__ = ["NEUTRAL", "NO_RULE", "explain_wire", "explained_json"]

NEUTRAL = "neutral"
"""The `api` of a request given in synthgpt's own form (a journal record's `request`), not a wire body."""
NO_RULE = "no rule answers this request"


def explain_wire(
    mock: MockGPT,
    api: str,
    body: Any,
    *,
    seed: int | None = None,
    decoder: WireCodec | None = None,
) -> dict[str, Any]:
    """Explain the request `body` of `api` (a wire API, or `neutral`) under `seed` (default: the mock's).

    `decoder` decodes the body (the app's own codec, whose Responses store `previous_response_id` reads);
    by default a codec of the API's own. Whatever keeps the request from an answer drawn by a rule (a body
    the API rejects, a model not served, no rule, a rule that cannot draw) is answered as the route
    answers it: by the pipeline's own refusals.
    """
    seeded = with_seed(mock, mock.seed if seed is None else seed)
    codec = scratch_codec(api)
    try:
        req = ModelRequest.from_dict(body) if api == NEUTRAL else (decoder or codec).decode(body, {}, {})
    except Exception as exc:  # what `pipeline.answer` refuses before a rule is tried
        answered = refuse(seeded, codec, exc, "/_synthgpt/explain", api)
        return _payload(api, seeded.seed, None, None, refused(answered), answered.failure)
    codec = scratch_codec(req.api, req)
    explained = mock.explain(req, seed=seeded.seed)
    if not serves(mock, req.model):  # the route answers 404 before any rule is tried
        rid = request_id(seeded.seed, req.api, req.fingerprint())
        answered = error_answer(codec, model_not_found(req.model), 404, rid)
        failure = f"the rules do not serve the model {req.model!r}"
        return _payload(api, seeded.seed, req, explained, refused(answered), failure)
    if explained.output is not None:
        answer = wire_answer(codec, explained.output, req, seeded.seed)
        return _payload(api, seeded.seed, req, explained, answer, None)
    error = explained.error
    assert error is not None  # an explanation has an output or the error the call raises
    answered = refuse(seeded, codec, error, req.api, req.fingerprint())
    said = NO_RULE if isinstance(error, NoRuleMatched) else answered.failure
    return _payload(api, seeded.seed, req, explained, refused(answered), said)


def explained_json(explained: Explanation) -> dict[str, Any]:
    """The engine's part of an explanation: the rule, its seed, the trace."""
    seed = explained.answer_seed
    return {
        "rule": explained.rule,
        "answer_seed": None if seed is None else str(seed),  # 64-bit: more than a JavaScript number holds
        "trace": explained.trace_json(),
    }


def _payload(
    api: str,
    seed: int,
    req: ModelRequest | None,
    explained: Explanation | None,
    answer: WireAnswer,
    error: str | None,
) -> dict[str, Any]:
    out: dict[str, Any] = {"api": api, "seed": seed}
    out["request"] = None if req is None else {
        "api": req.api, "model": req.model, "summary": req.summary(), "stream": req.stream,
        "neutral": req.model_dump(mode="json", by_alias=True, exclude_defaults=True),
    }  # fmt: skip
    out.update(explained_json(explained) if explained is not None else {"rule": None, "answer_seed": None,
                                                                         "trace": []})  # fmt: skip
    out["answer"] = answer.to_json()
    out["error"] = error
    return out
