"""What every request must hold before it is answered, whichever way it came in.

The wire decoders check what their API's JSON must look like (types, required keys, each provider's own
wording); this module checks what the engine needs from any request, so that `MockGPT.generate()` in
Python refuses exactly what the HTTP routes refuse: a request without a model, with an empty model name,
or with nothing to answer (no message; no input for embeddings). The error is a `RequestError` (a
`ValueError`) naming the field, which the server answers as a 400 in the route's provider shape.
"""

from __future__ import annotations

from .errors import RequestError
from .model import ModelRequest

__all__ = ["check_answerable"]


def check_answerable(req: ModelRequest) -> None:
    """Raise RequestError (with `param` and `code`) for the first thing `req` lacks to be answered."""
    if "model" not in req.__pydantic_fields_set__:  # `model_fields_set`, without its property call
        raise RequestError("Missing required parameter: 'model'.", "model", code="missing_required_parameter")
    if not req.model.strip():
        raise RequestError(
            "Invalid 'model': empty string. Expected the name of a model, but got an empty string instead.",
            "model",
            code="empty_string",
        )
    if req.api == "embeddings" or (req.inputs and not req.messages):
        if not req.inputs:
            raise RequestError(
                "Invalid 'input': empty array. Expected at least one input.", "input", code="empty_array"
            )
        return
    if not req.messages:
        raise RequestError(
            "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty "
            "array instead.",
            "messages",
            code="empty_array",
        )
