"""A wire request explained: the trace of the rules and the answer as the API route would send it.

`explain_wire` is what `POST /_synthgpt/explain` answers and `synthgpt explain --json` prints. It goes the
route's way (decode, the served models, the rules) but through `MockGPT.explain`, which claims and records
nothing; the answer is then encoded by a codec of its own, so nothing is added to the server's Responses
store.
"""

from __future__ import annotations

from typing import Any

from ..codec.base import WireCodec
from ..errors import NoRuleMatched, RequestError
from ..explain import Explanation
from ..mock import MockGPT
from ..model import ErrorSpec, ModelRequest
from .routes import model_not_found, serves_model
from .wire_view import WireAnswer, error_answer, scratch_codec, wire_answer

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
    by default a codec of the API's own. A body the API rejects is answered as the route answers it.
    """
    engine_seed = mock.seed if seed is None else seed
    try:
        if api == NEUTRAL:
            req = ModelRequest.from_dict(body)
        else:
            req = (decoder or scratch_codec(api)).decode(body, {}, {})
    except RequestError as exc:
        codec = scratch_codec(api)
        answer = error_answer(codec, exc, getattr(exc, "status", 400), engine_seed)
        return _payload(api, engine_seed, None, None, answer, exc.message)
    codec = scratch_codec(req.api)
    explained = mock.explain(req, seed=engine_seed)
    if not serves_model(mock, req.model):  # the route answers 404 before any rule is tried
        answer = error_answer(codec, model_not_found(req.model), 404, engine_seed, req)
        return _payload(api, engine_seed, req, explained, answer, f"the rules do not serve {req.model!r}")
    error = explained.error
    if explained.output is not None:
        answer = wire_answer(codec, explained.output, req, engine_seed)
    elif isinstance(error, NoRuleMatched):
        spec = ErrorSpec(status=400, message=str(error), type="invalid_request_error", code="no_rule_matched")
        answer = error_answer(codec, spec, 400, engine_seed, req)
    elif isinstance(error, RequestError):
        answer = error_answer(codec, error, getattr(error, "status", 400), engine_seed, req)
    else:  # a rule that cannot answer: the route's 500 rule_error
        spec = ErrorSpec(status=500, message=str(error), type="server_error", code="rule_error")
        answer = error_answer(codec, spec, 500, engine_seed, req)
    said = None if error is None else NO_RULE if isinstance(error, NoRuleMatched) else str(error)
    return _payload(api, engine_seed, req, explained, answer, said)


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
