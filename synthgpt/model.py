"""Provider-neutral request and output types: every wire format decodes into and encodes from these.

Both are frozen pydantic models. A request built from a plain dict is a deep snapshot of it, so a caller
mutating its dict later changes nothing recorded.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Mapping
from functools import cache
from typing import Annotated, Any, Literal, Self, TypeVar

from orjson import Fragment
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    SerializerFunctionWrapHandler,
    TypeAdapter,
    ValidationError,
    field_validator,
    model_serializer,
    model_validator,
)
from pydantic_core import InitErrorDetails, PydanticCustomError

from .errors import RequestError, RuleError
from .frozen import FrozenDict, FrozenList, deep_freeze
from .jsonutil import canonical_bytes, canonical_bytes_strict, dumps, fitted
from .seeding import canonical_json, seed_after
from .text_json import loads_text
from .trusted import built, private_defaults

__all__ = [
    "ApiKind",
    "ErrorSpec",
    "Fault",
    "FinishReason",
    "ImagePart",
    "Message",
    "ModelOutput",
    "ModelRequest",
    "OutputPart",
    "ReasoningPart",
    "ReasoningRequest",
    "ResponseSchema",
    "Role",
    "StreamPlan",
    "TextPart",
    "Tool",
    "ToolCall",
    "ToolCallPart",
    "ToolChoice",
    "Usage",
]

ApiKind = Literal[
    "chat", "responses", "messages", "embeddings", "gemini", "ollama", "cohere", "bedrock", "python"
]
"""The API a request came through; `embeddings` is an embeddings request from any provider's route."""
Role = Literal["system", "developer", "user", "assistant", "tool"]
FinishReason = Literal["stop", "length", "tool_calls", "content_filter"]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


# ---------------------------------------------------------------------------------------------- request


class TextPart(_Frozen):
    kind: Literal["text"] = "text"
    text: str


class ImagePart(_Frozen):
    """A non-text input part (image, audio, file); only its presence and a reference are kept."""

    kind: Literal["image"] = "image"
    url: str = ""


InputPart = Annotated[TextPart | ImagePart, Field(discriminator="kind")]


def content_parts(content: list[Any]) -> tuple[str, tuple[TextPart | ImagePart, ...]]:
    """A message's list content as (its text parts joined by newlines, its parts): the one reading of
    content parts, used by `Message` validation and by the codecs' decoders alike. ValueError names the
    first part that is neither a string nor an object, or a text part without string text."""
    parts: list[TextPart | ImagePart] = []
    texts: list[str] = []
    for i, p in enumerate(content):
        if isinstance(p, str):
            texts.append(p)
            parts.append(built(TextPart, kind="text", text=p))
        elif isinstance(p, dict):
            ptype = p.get("type", p.get("kind", "text"))
            if ptype in ("text", "input_text", "output_text"):
                text = p.get("text")
                if not isinstance(text, str):
                    raise ValueError(f"content part {i} of type {ptype!r} needs a string 'text'")
            elif ptype == "refusal":
                text = str(p.get("refusal", ""))
            else:
                ref = p.get("image_url", p.get("url", ""))
                if isinstance(ref, dict):
                    ref = ref.get("url", "")
                parts.append(built(ImagePart, kind="image", url=str(ref or ptype)))
                continue
            texts.append(text)
            parts.append(built(TextPart, kind="text", text=text))
        else:
            raise ValueError(f"content part {i} must be an object or a string")
    return "\n".join(texts), tuple(parts)


class ToolCall(_Frozen):
    """A tool call made by the assistant earlier in the conversation. `arguments` is a JSON string."""

    id: str
    name: str
    arguments: str = "{}"

    @model_validator(mode="before")
    @classmethod
    def _openai_shape(cls, data: Any) -> Any:
        # Accept the OpenAI chat shape {id, type, function: {name, arguments}} as well as the flat one.
        if isinstance(data, dict) and "function" in data and "name" not in data:
            fn = data["function"] or {}
            if not isinstance(fn, dict):  # (no name then: the validation says so)
                return {"id": data.get("id", "")}
            data = {"id": data.get("id", ""), "name": fn.get("name"), "arguments": fn.get("arguments", "{}")}
        if isinstance(data, dict) and isinstance(data.get("arguments"), dict | list):
            data = {**data, "arguments": dumps(data["arguments"])}
        return data

    def parsed_arguments(self) -> Any:
        try:
            return loads_text(self.arguments)
        except ValueError:
            return None


class Message(_Frozen):
    role: Role
    content: str = ""
    """All text parts joined with newlines: what matchers and generators read."""
    parts: tuple[InputPart, ...] = ()
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None
    is_error: bool = False

    @model_validator(mode="before")
    @classmethod
    def _content_forms(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        content = data.get("content")
        if content is None:
            return {**data, "content": ""}
        if isinstance(content, list):
            text, parts = content_parts(content)
            return {**data, "content": text, "parts": parts}
        return data

    @property
    def text(self) -> str:
        return self.content


class Tool(_Frozen):
    name: str
    description: str = ""
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})
    strict: bool = False

    @model_validator(mode="before")
    @classmethod
    def _openai_shape(cls, data: Any) -> Any:
        if isinstance(data, dict) and "function" in data and "name" not in data:
            fn = data["function"] or {}
            fn = fn if isinstance(fn, dict) else {}  # (no name then: the validation says so)
            data = {k: v for k, v in fn.items() if k in ("name", "description", "parameters", "strict")}
        if isinstance(data, dict):
            data = {k: v for k, v in data.items() if k != "type"}
            if data.get("parameters") is None:
                data.pop("parameters", None)
            if data.get("description") is None:
                data.pop("description", None)
            if data.get("strict") is None:
                data.pop("strict", None)
        return data


class ToolChoice(_Frozen):
    mode: Literal["auto", "none", "required", "named"] = "auto"
    name: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _forms(cls, data: Any) -> Any:
        if isinstance(data, str):
            if data in ("auto", "none", "required"):
                return {"mode": data}
            raise ValueError(f"tool_choice must be 'auto', 'none', 'required' or a named tool, got {data!r}")
        if isinstance(data, dict) and "mode" not in data:
            fn = data.get("function")
            name = data.get("name") or (fn.get("name") if isinstance(fn, dict) else None)
            if name:
                return {"mode": "named", "name": name}
        return data


class ResponseSchema(_Frozen):
    """Structured output requested by the client."""

    kind: Literal["json_schema", "json_object"] = "json_schema"
    name: str = "response"
    schema_: dict[str, Any] | None = Field(default=None, alias="schema")
    strict: bool = False

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)


class ReasoningRequest(_Frozen):
    effort: str | None = None
    budget_tokens: int | None = None
    summary: str | None = None


_C = TypeVar("_C")
_TOOLS_SCANNED = 16
"""Up to this many declared tools, `ModelRequest.tool` looks through them rather than making a table."""


class ModelRequest(_Frozen):
    """One call to a model, whatever API it came through."""

    api: ApiKind = "python"
    model: str = "synth-1"
    messages: tuple[Message, ...] = ()
    tools: tuple[Tool, ...] = ()
    tool_choice: ToolChoice = ToolChoice()
    response_schema: ResponseSchema | None = None
    max_output_tokens: int | None = Field(default=None, ge=1)
    n: int = Field(default=1, ge=1, le=128)
    stream: bool = False
    stream_options: dict[str, Any] = Field(default_factory=dict)
    """Wire-only stream flags (e.g. include_usage); like `stream`, not part of the fingerprint."""
    parallel_tool_calls: bool = True
    reasoning: ReasoningRequest | None = None
    headers: tuple[tuple[str, str], ...] = ()
    """Lower-cased names; not part of the fingerprint (SDKs vary them per version and retry)."""
    inputs: tuple[str, ...] = ()
    """Embeddings inputs (token arrays are decoded to text by the wire module)."""
    dimensions: int | None = Field(default=None, ge=1)
    extra: dict[str, Any] = Field(default_factory=dict)
    """Provider-specific fields kept verbatim (temperature, metadata, stop, …)."""

    _fingerprint: int | None = PrivateAttr(default=None)
    _call_names: dict[str, str] | None = PrivateAttr(default=None)
    _tools_by_name: dict[str, Tool] | None = PrivateAttr(default=None)
    _current_turn: tuple[Message, ...] | None = PrivateAttr(default=None)
    _wire: Any = PrivateAttr(default=None)
    """What a served request was decoded from (`codec.envelope.Wire`): the journal keeps that of it."""
    _interned: bool = PrivateAttr(default=False)
    """Its decoder took its tools, and its messages when they are a conversation (`CONVERSATION` or more),
    from the models it made for earlier requests (`codec.interned`): their texts are remembered too."""

    def __eq__(self, other: object) -> bool:
        # Field values only: pydantic would also compare the cached fingerprint, so a request whose
        # fingerprint was taken would differ from an identical one whose fingerprint was not.
        if not isinstance(other, ModelRequest):
            return NotImplemented
        return type(self) is type(other) and self.__dict__ == other.__dict__

    __hash__ = None  # type: ignore[assignment]  # requests hold dicts (extra, tool schemas)

    @field_validator("headers", mode="before")
    @classmethod
    def _headers(cls, value: Any) -> Any:
        if isinstance(value, Mapping):
            return tuple((str(k).lower(), str(v)) for k, v in value.items())
        return value

    @field_validator("tool_choice", mode="before")
    @classmethod
    def _tool_choice(cls, value: Any) -> Any:
        return ToolChoice() if value is None else value

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | ModelRequest) -> ModelRequest:
        """Validate a plain dict (the neutral form, close to OpenAI chat) into a request.

        Raises RequestError naming the first offending field.
        """
        if isinstance(data, ModelRequest):
            return data
        if not isinstance(data, Mapping):
            raise RequestError("the request must be a JSON object", None)
        try:
            return cls.model_validate(_json_copy(dict(data)))
        except ValidationError as exc:
            raise request_error_from(exc) from None
        except RecursionError:  # (a wire body is refused past MAX_JSON_DEPTH levels before it gets here)
            raise RequestError("The request nests arrays and objects too deeply to read.", None) from None

    @classmethod
    def from_decoded(cls, neutral: dict[str, Any]) -> ModelRequest:
        """Validate the neutral dict a wire decoder just built from a parsed body (which nobody else holds):
        `from_dict` without its defensive deep copy. For decoders whose checks do not yet cover every value
        (Gemini, Ollama, Cohere, Bedrock); the others build their requests with `built`."""
        try:
            return cls.model_validate(neutral)
        except ValidationError as exc:
            raise request_error_from(exc) from None

    # -- derived views used by matchers and generators --

    def header(self, name: str) -> str | None:
        name = name.lower()
        for k, v in self.headers:
            if k == name:
                return v
        return None

    @property
    def last_user(self) -> str:
        for m in reversed(self.messages):
            if m.role == "user":
                return m.content
        return ""

    @property
    def system(self) -> str:
        return "\n".join(m.content for m in self.messages if m.role in ("system", "developer"))

    @property
    def current_turn(self) -> tuple[Message, ...]:
        """The messages after the last user message (tool calls and results of the ongoing turn), found
        once per request: the draw, the rules and the tool picker each ask (4 scans of an agent's 62
        messages took ~30 µs)."""
        return self._cached("_current_turn", self._find_current_turn)

    def _find_current_turn(self) -> tuple[Message, ...]:
        messages = self.messages
        for i in range(len(messages) - 1, -1, -1):
            if messages[i].role == "user":
                return messages[i + 1 :]
        return messages

    @property
    def turn(self) -> int:
        """1-based index of the user turn being answered (the number of user messages)."""
        return sum(1 for m in self.messages if m.role == "user")

    @property
    def tool_results(self) -> tuple[Message, ...]:
        """Tool results in the current turn."""
        return tuple(m for m in self.current_turn if m.role == "tool")

    def tool_result_name(self, msg: Message) -> str | None:
        """The tool a tool result answers: the name of the current turn's call with its `tool_call_id` (the
        latest, should ids repeat), else the name the result carries, else None."""
        if msg.tool_call_id:
            name = self._tool_call_names().get(msg.tool_call_id)
            if name is not None:
                return name
        return msg.name

    def _tool_call_names(self) -> dict[str, str]:
        """The current turn's tool calls, id -> name (a later call of an id wins), made once per request:
        looked up call by call for each result, a trace of 5,000 calls and results took 9 s to answer."""
        return self._cached(
            "_call_names", lambda: {tc.id: tc.name for m in self.current_turn for tc in m.tool_calls}
        )

    def _cached(self, name: str, make: Callable[[], _C]) -> _C:
        """The private attribute `name`, made by `make` the first time it is asked for (read from the private
        dict directly: `self._name` is found only after pydantic's __getattr__ fallback)."""
        private: dict[str, Any] = self.__pydantic_private__  # type: ignore[assignment]
        value: _C | None = private[name]
        if value is None:
            value = private[name] = make()
        return value

    @property
    def ends_with_tool_result(self) -> bool:
        return bool(self.messages) and self.messages[-1].role == "tool"

    def tool(self, name: str) -> Tool | None:
        """The declared tool of that name (the first, should names repeat), or None."""
        if len(self.tools) <= _TOOLS_SCANNED:
            return next((t for t in self.tools if t.name == name), None)
        # one table per request: looked up call by call, 8,000 tools and as many calls took 1.8 s; the
        # first of a name is kept (a reversed dict keeps the last one written: the first declared)
        by_name = self._cached("_tools_by_name", lambda: {t.name: t for t in reversed(self.tools)})
        return by_name.get(name)

    @property
    def stop_sequences(self) -> tuple[str, ...]:
        """Where answer text must end: Chat `stop` (a string or a list) and Messages `stop_sequences`."""
        found: dict[str, None] = {}  # in order, each once (a list's `in` made 8,000 of them take 0.3 s)
        for key in ("stop", "stop_sequences"):
            value = self.extra.get(key)
            for s in [value] if isinstance(value, str) else value if isinstance(value, list) else ():
                if isinstance(s, str) and s:
                    found[s] = None
        return tuple(found)

    def fingerprint(self) -> int:
        """A stable hash of what the answer may depend on: not the API, the stream flags, the headers, or
        whether logprobs and `include` fields are asked for."""
        # the private dict directly: `self._fingerprint` is found only after pydantic's __getattr__ fallback
        private: dict[str, Any] = self.__pydantic_private__  # type: ignore[assignment]
        cached: int | None = private["_fingerprint"]
        if cached is None:
            # written from the fields when it can be (orjson refuses a lone surrogate, key or value, there)
            body = _fingerprinted_fields(self)
            if body is None:
                try:
                    body = self._fingerprinted_json()
                except UnicodeEncodeError:  # only a lone surrogate makes a str that UTF-8 cannot hold
                    raise _lone_surrogate_error(self) from None
                # pydantic writes a lone surrogate in a dict field's own keys as U+FFFD instead of failing
                if b"\xef\xbf\xbd" in body and _find_lone_surrogate(self.model_dump(by_alias=True), ()):
                    raise _lone_surrogate_error(self)
            cached = private["_fingerprint"] = seed_after(b"", body)  # derive_seed(body)
        return cached

    def _fingerprinted_json(self) -> bytes:
        """The canonical JSON (UTF-8) of what the fingerprint covers. A long conversation (or list of tools)
        is dumped and encoded `_ITEMS_PER_PIECE` items at a time and joined into the text one call would
        give: one pydantic dump of 100,000 messages held the GIL for 0.4 s, and its encoding 0.16 s more, in
        a worker thread whose event loop waited that long to answer anyone (`server.offload`)."""
        long = [name for name in ("messages", "tools") if len(getattr(self, name)) > _ITEMS_PER_PIECE]
        if not long:
            return canonical_bytes(self.model_dump(mode="json", exclude=_NOT_FINGERPRINTED, by_alias=True))
        rest = self.model_dump(mode="json", exclude={**_NOT_FINGERPRINTED, **dict.fromkeys(long, True)},
                               by_alias=True)  # fmt: skip
        fields = [(k, canonical_bytes(v)) for k, v in rest.items()]
        step = _ITEMS_PER_PIECE
        for name in long:
            items: tuple[Any, ...] = getattr(self, name)
            dump = _item_lists()[name].dump_python
            pieces = (
                canonical_bytes(dump(items[i : i + step], mode="json", by_alias=True))[1:-1]
                for i in range(0, len(items), step)
            )
            fields.append((name, b"[" + b",".join(pieces) + b"]"))
        # what the encoder writes for a dict with sorted keys, the long fields in their places among them
        return b"{" + b",".join(canonical_bytes(k) + b":" + v for k, v in sorted(fields)) + b"}"

    @model_validator(mode="after")
    def _unicode_text(self) -> Self:
        # A lone surrogate ("\ud800") is a Python str but not Unicode text: no JSON body can carry one (the
        # server refuses such a body), and hashing or encoding the request would fail deep in a draw. Every
        # answer needs the fingerprint, and taking it encodes every fingerprinted string as UTF-8, so taking
        # it here checks those at no extra cost; the few wire-only strings are checked beside it.
        self.fingerprint()
        try:
            if self.headers:
                "".join(map("".join, self.headers)).encode()
            if self.stream_options:
                canonical_json(self.stream_options).encode()
        except UnicodeEncodeError:
            raise _lone_surrogate_error(self) from None
        return self

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        copied = super().model_copy(update=update, deep=deep)
        if update and not _WIRE_ONLY.issuperset(update):
            # what is cached is the original's: the copy's own is worked out when it is first asked for
            copied.__pydantic_private__ = private_defaults(ModelRequest)
        elif update:  # the cached views still hold; the bytes decode to the original, not to the copy
            copied.__pydantic_private__["_wire"] = None  # type: ignore[index]
        return copied

    def summary(self) -> str:
        text = self.last_user.replace("\n", " ")
        if len(text) > 60:
            text = text[:57] + "..."
        bits = [f"api={self.api}", f"model={self.model!r}", f"last_user={text!r}"]
        if self.tools:
            bits.append("tools=[" + ", ".join(t.name for t in self.tools) + "]")
        if self.tool_results:
            bits.append(f"tool_results={len(self.tool_results)}")
        if self.response_schema:
            bits.append(f"schema={self.response_schema.kind}")
        return "request(" + ", ".join(bits) + ")"


_WIRE_ONLY: set[str] = {"api", "stream", "stream_options", "headers"}  # read only
_ITEMS_PER_PIECE = 256
"""Messages (or tools) dumped and encoded per call when a long request is fingerprinted."""


@cache
def _item_lists() -> dict[str, TypeAdapter[Any]]:
    """The request's `messages` and `tools`, dumped as those fields dump them (by their declared type;
    neither field has an alias, so their names are their keys)."""
    return {"messages": TypeAdapter(tuple[Message, ...]), "tools": TypeAdapter(tuple[Tool, ...])}


# What the fingerprint leaves out: the wire-only fields, and the settings that add to an answer's form
# without changing what a model would say (asking for logprobs or extra `include` fields must not change
# the text, or turning them on in a test would rewrite every expected answer).
_NOT_FINGERPRINTED: dict[str, Any] = {
    **dict.fromkeys(_WIRE_ONLY, True),
    "extra": {"logprobs": True, "top_logprobs": True, "include": True},
}


_EXTRA_NOT_FINGERPRINTED = frozenset(_NOT_FINGERPRINTED["extra"])


def _fingerprinted_fields(request: ModelRequest) -> bytes | None:
    """`request._fingerprinted_json()`, written from the fields as they are, without pydantic's dump (a
    fifth of its cost: 0.9 against 4.4 µs for a one-message chat request, 2.4 against 13.5 with a nested
    schema); None when `jsonutil.canonical_bytes_strict` cannot vouch for its text or the request is a
    long one (which `_fingerprinted_json` encodes in pieces), a subclass, or holds a model of a subclass:
    then the dump is taken. Every submodel's `__dict__` is its fields (frozen, no extras, no serializers,
    one alias: `ResponseSchema.schema_`, see `_dumped_fields`)."""
    if type(request) is not ModelRequest:
        return None
    data = request.__dict__.copy()
    messages = data["messages"]
    if len(messages) > _ITEMS_PER_PIECE or len(data["tools"]) > _ITEMS_PER_PIECE:
        return None
    for name in _WIRE_ONLY:
        del data[name]
    extra = data["extra"]
    if extra and not _EXTRA_NOT_FINGERPRINTED.isdisjoint(extra):
        data["extra"] = {k: v for k, v in extra.items() if k not in _EXTRA_NOT_FINGERPRINTED}
    # what `_dumped_fields` gives for them, taken here: a list's items at Python speed, where the encoder
    # calls back into Python for each (their parts and tool calls still go to `_dumped_fields`); a
    # conversation's messages, kept by its decoder, as their texts, which its next turns hold again
    private: dict[str, Any] = request.__pydantic_private__  # type: ignore[assignment]
    if len(messages) >= CONVERSATION and private["_interned"]:
        data["messages"] = [_kept_text(m, False) if type(m) is Message else m for m in messages]
    else:
        data["messages"] = [m.__dict__ if type(m) is Message else m for m in messages]
    tools = data["tools"]
    loose = False  # whether a tool is written from its fields, and so may hold a float
    if tools:
        if private["_interned"]:  # (a kept text is in `repr`'s float form already)
            data["tools"] = tools = [_kept_text(t, True) if type(t) is Tool else t for t in tools]
        loose = any(type(t) is not Fragment for t in tools)
    choice = data["tool_choice"]
    if type(choice) is ToolChoice:
        data["tool_choice"] = choice.__dict__
    # the other fields hold no float: they are typed str, int, bool or None all the way down
    floats = (
        loose
        or data["response_schema"] is not None
        or (bool(extra) and not _SCALARS.issuperset(map(type, extra.values())))
    )
    return canonical_bytes_strict(data, _dumped_fields, floats)


CONVERSATION = 8
"""From this many messages a request is a conversation, whose messages the next turns send again: its
decoder keeps them (`codec.interned`), and the fingerprint their texts."""


def _kept_text(model: Message | Tool, floats: bool) -> Any:
    """A message's or a tool's text in the fingerprint (`floats`: it may hold one), remembered for the
    object: a decoder hands every request that holds the same message or declares the same tool the same
    model (`codec.interned`, `ModelRequest._interned`), and an agent's 60 messages and 10 tools took ~30
    µs to write out on every turn. Its fields when the text is not certain."""
    kept = _KEPT_TEXTS.get(id(model))
    if kept is not None and kept[0] is model:
        return kept[1]
    fields = model.__dict__
    text = canonical_bytes_strict(fields, _dumped_fields, floats)
    if text is None:
        return fields
    fragment = Fragment(fitted(text))  # kept: sized to fit
    if len(_KEPT_TEXTS) >= _KEPT_TEXTS_MAX:
        _KEPT_TEXTS.clear()
    _KEPT_TEXTS[id(model)] = (model, fragment)  # the entry holds the model: its id stays its own
    return fragment


_KEPT_TEXTS: dict[int, tuple[Message | Tool, Fragment]] = {}
_KEPT_TEXTS_MAX = 8192


def _dumped_fields(obj: Any) -> dict[str, Any]:
    """What `model_dump(by_alias=True)` keys a request's submodel's fields by (the values are dumped by
    the caller); TypeError for anything else."""
    kind = type(obj)
    if kind in _PLAIN_MODELS:
        fields: dict[str, Any] = obj.__dict__
        return fields
    if kind is ResponseSchema:
        held = obj.__dict__
        return {"kind": held["kind"], "name": held["name"], "schema": held["schema_"],
                "strict": held["strict"]}  # fmt: skip
    raise TypeError(kind.__name__)


_SCALARS = frozenset({str, int, bool, type(None)})
_PLAIN_MODELS = frozenset({Message, TextPart, ImagePart, ToolCall, Tool, ToolChoice, ReasoningRequest})
"""The request's submodels dumped as their `__dict__`: fields without alias or serializer."""


def _lone_surrogate_error(request: ModelRequest) -> ValidationError:
    """A ValidationError at the first string of `request` (a value, or a dict key) holding a lone
    surrogate, in field order. Only built on failure: finding the field walks the whole request."""
    # the Python form: the JSON one would fail on (or replace) the very strings looked for
    found = _find_lone_surrogate(request.model_dump(by_alias=True), ())
    loc, text, at = found if found is not None else ((), "", 0)
    escaped = text[at].encode("utf-8", "backslashreplace").decode() if text else "?"
    message = (
        f"a lone surrogate ({escaped} at index {at}) is not valid Unicode text; write the character it is "
        "half of (a str holds code points, not UTF-16 halves), or remove it"
    )
    error = PydanticCustomError("lone_surrogate", message)
    return ValidationError.from_exception_data(
        "ModelRequest", [InitErrorDetails(type=error, loc=loc, input=text)]
    )


def _json_copy(value: Any) -> Any:
    """A deep copy, so a caller who changes its request dict afterwards changes no record: dicts, lists and
    tuples rebuilt, str/int/float/bool/None shared (immutable), anything else through `copy.deepcopy`.
    What `copy.deepcopy` gives for a request made of JSON values, at a fifth of its cost."""
    kind = type(value)
    if kind is dict:
        return {k: _json_copy(v) for k, v in value.items()}
    if kind is list:
        return [_json_copy(v) for v in value]
    if kind in _SHARED:
        return value
    if kind is tuple:
        return tuple(_json_copy(v) for v in value)
    return copy.deepcopy(value)


_SHARED = frozenset({str, int, float, bool, type(None)})


def _find_lone_surrogate(
    value: Any, loc: tuple[str | int, ...]
) -> tuple[tuple[str | int, ...], str, int] | None:
    if isinstance(value, str):
        try:
            value.encode()
        except UnicodeEncodeError as exc:
            return loc, value, exc.start
        return None
    if isinstance(value, dict):
        for key, item in value.items():
            # a loc element is shown and sent back: a key holding the surrogate is named escaped
            named = key.encode("utf-8", "backslashreplace").decode() if isinstance(key, str) else str(key)
            found = _find_lone_surrogate(key, (*loc, named)) or _find_lone_surrogate(item, (*loc, named))
            if found is not None:
                return found
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            found = _find_lone_surrogate(item, (*loc, i))
            if found is not None:
                return found
    return None


def request_error_from(exc: ValidationError) -> RequestError:
    err = exc.errors()[0]
    loc = [p for p in err["loc"] if not (isinstance(p, str) and ("[" in p or p.startswith("function-")))]
    param = ""
    for p in loc:
        param += f"[{p}]" if isinstance(p, int) else (f".{p}" if param else str(p))
    msg = err["msg"]
    if msg.startswith("Value error, "):
        msg = msg[len("Value error, ") :]
    # requests are JSON: say "array" where pydantic speaks of the tuple the field is stored as
    msg = msg.replace("a valid tuple", "a valid array")
    return RequestError(f"Invalid value for '{param or 'body'}': {msg}", param or None)


# ---------------------------------------------------------------------------------------------- output


class TextOut(_Frozen):
    kind: Literal["text"] = "text"
    text: str


class ToolCallPart(_Frozen):
    kind: Literal["tool_call"] = "tool_call"
    id: str
    name: str
    arguments: str = "{}"
    """A JSON document as a string, exactly as it goes on the wire."""

    def parsed_arguments(self) -> Any:
        return json.loads(self.arguments)


class ReasoningPart(_Frozen):
    kind: Literal["reasoning"] = "reasoning"
    text: str
    signature: str = ""


OutputPart = Annotated[TextOut | ToolCallPart | ReasoningPart, Field(discriminator="kind")]


class Usage(_Frozen):
    prompt_tokens: int = 0
    completion_tokens: int = 0
    reasoning_tokens: int = 0
    """Part of completion_tokens."""
    cached_tokens: int = 0
    """Part of prompt_tokens."""

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


FaultKind = Literal["disconnect", "truncate", "stream_error", "malformed", "unknown_item"]


class Fault(_Frozen):
    """Something that goes wrong in a stream after `after` frames (a frame is one SSE event).

    disconnect: the connection is aborted, no terminator. truncate: clean close, no terminator.
    stream_error: a provider-shaped error frame, then the end. malformed: frame `after` is sent as
    invalid JSON. unknown_item: an output item of a kind no SDK knows (Responses).
    """

    kind: FaultKind
    after: int = Field(default=0, ge=0)
    message: str = "The server had an error while processing your request."


class StreamPlan(_Frozen):
    """How the answer goes on the wire. Content never depends on it; only its pacing and faults do."""

    first_delay_ms: float = Field(default=0, ge=0)
    """Before the first byte, streaming or not."""
    chunk_chars: int = Field(default=4, ge=1)
    """Text per delta, in Unicode code points."""
    interval_ms: float = Field(default=0, ge=0)
    jitter_ms: float = Field(default=0, ge=0)
    """Seeded jitter added to each interval (0..jitter_ms)."""
    wire_chunk_bytes: int | None = Field(default=None, ge=1)
    """Split the bytes on the transport independently of frames."""
    keepalive_every: int | None = Field(default=None, ge=1)
    """Insert an SSE comment every N frames."""
    faults: tuple[Fault, ...] = ()
    deltas: tuple[str, ...] | None = None
    """The answer text's stream deltas, one per event, exactly as listed (a character or a citation marker
    split across deltas): instead of the `chunk_chars` re-cut. They must spell the answer's text; a rule
    with deltas and no answer answers with that text."""
    id: str | None = Field(default=None, min_length=1, max_length=256)
    """The response id, verbatim (`mock-1`), instead of the one derived from the seed."""
    created: int | None = Field(default=None, ge=0)
    """The answer's `created` (Unix seconds), instead of the clock reading."""

    @model_serializer(mode="wrap")
    def _omit_unpinned(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # Dumped only when set, so journal records of answers without them read as before.
        data: dict[str, Any] = handler(self)
        for key in ("deltas", "id", "created"):
            if data.get(key) is None:
                data.pop(key, None)
        return data

    @property
    def paced(self) -> bool:
        return self.interval_ms > 0 or self.jitter_ms > 0 or self.wire_chunk_bytes is not None

    def fault(self, kind: FaultKind) -> Fault | None:
        return next((f for f in self.faults if f.kind == kind), None)

    def ending(self) -> Fault | None:
        """The fault that ends a stream (disconnect, truncate or stream_error): the earliest of them."""
        endings = [f for f in self.faults if f.kind in ("disconnect", "truncate", "stream_error")]
        return min(endings, key=lambda f: f.after) if endings else None  # min keeps the first of equals


class ErrorSpec(_Frozen):
    """An HTTP error answer; each wire module renders it in its provider's shape."""

    status: int = Field(default=500, ge=400, le=599)
    message: str | None = None
    type: str | None = None
    code: str | None = None
    param: str | None = None
    # read-only at any depth: an answer's error is part of its journal record
    headers: Annotated[dict[str, str], AfterValidator(deep_freeze)] = Field(default_factory=FrozenDict)
    body: Annotated[dict[str, Any] | None, AfterValidator(deep_freeze)] = None
    """A verbatim body, overriding the provider shape."""
    retry_after_ms: int | None = None


class Choice(_Frozen):
    parts: tuple[OutputPart, ...] = ()
    finish_reason: FinishReason = "stop"
    stop_sequence: str | None = None
    """The request's stop sequence the text ended before (finish `stop`); Anthropic reports it."""

    @model_serializer(mode="wrap")
    def _omit_no_stop(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # Dumped only when set, so the records of answers without one read as before.
        data: dict[str, Any] = handler(self)
        if data.get("stop_sequence") is None:
            data.pop("stop_sequence", None)
        return data

    @property
    def text(self) -> str:
        return "".join(p.text for p in self.parts if isinstance(p, TextOut))

    @property
    def reasoning(self) -> str:
        return "".join(p.text for p in self.parts if isinstance(p, ReasoningPart))

    @property
    def tool_calls(self) -> tuple[ToolCallPart, ...]:
        return tuple(p for p in self.parts if isinstance(p, ToolCallPart))


class ModelOutput(_Frozen):
    """One answer: n choices (usually one), usage, how to stream it, or an error to answer with.

    `id_seed` and `created` are what wire modules derive response ids and timestamps from.
    """

    choices: tuple[Choice, ...] = (Choice(),)
    usage: Usage = Usage()
    stream: StreamPlan = StreamPlan()
    error: ErrorSpec | None = None
    model: str = "synth-1"
    id_seed: int = 0
    created: int = 0
    rule: str = ""
    embeddings: tuple[tuple[float, ...], ...] = ()

    # conveniences for the first choice, which is all most callers have
    @property
    def parts(self) -> tuple[OutputPart, ...]:
        return self.choices[0].parts

    @property
    def text(self) -> str:
        return self.choices[0].text

    @property
    def reasoning(self) -> str:
        return self.choices[0].reasoning

    @property
    def tool_calls(self) -> tuple[ToolCallPart, ...]:
        return self.choices[0].tool_calls

    @property
    def finish_reason(self) -> FinishReason:
        return self.choices[0].finish_reason


__all__ += ["Choice", "FaultKind", "InputPart", "TextOut", "built", "content_parts", "request_error_from"]


_Spec = TypeVar("_Spec", bound=BaseModel)


def coerce_spec(cls: type[_Spec], value: _Spec | Mapping[str, Any] | None, what: str) -> _Spec | None:
    """A StreamPlan / ErrorSpec / Fault, as itself or as a dict; a bad one is a RuleError naming `what`."""
    if value is None or isinstance(value, cls):
        return value
    if not isinstance(value, Mapping):
        raise RuleError(f"{what}: expected a dict or {cls.__name__}, got {type(value).__name__}")
    try:
        return cls.model_validate(dict(value))
    except ValidationError as exc:
        raise RuleError(f"{what}: {request_error_from(exc).message}") from None


__all__ += ["FrozenDict", "FrozenList", "coerce_spec", "deep_freeze"]
