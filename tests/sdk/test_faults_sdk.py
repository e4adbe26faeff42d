"""Every fault on the Responses, Messages and embeddings APIs, and what the official SDK does with it.

Faults come from the `!MOCK_…!` triggers of the built-in rules (a real `synthgpt serve` process), and from a
rule's own stream plan or error (an in-thread server with custom rules): both reach the same encoder.
Chat Completions faults are covered with the chat codec's own tests.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import anthropic
import httpx
import httpx2
import openai
import pytest

from synthgpt import MockGPT, Rule
from synthgpt import generators as g
from synthgpt import matchers as m
from synthgpt.generators.embedding import Embeddings
from synthgpt.server.app import create_app
from synthgpt.testing.live_server import LiveServer

MODEL = "claude-sonnet-4-5"
NO_COMPLETED = r"Didn't receive a `response\.completed` event"

Hook = Callable[[Any], None]


def counting() -> tuple[list[str], Hook]:
    seen: list[str] = []
    return seen, lambda request: seen.append(request.headers.get("x-stainless-retry-count", ""))


@pytest.fixture
def oai(live_server: str) -> Iterator[openai.OpenAI]:
    with openai.OpenAI(
        base_url=live_server + "/v1", api_key="k", _strict_response_validation=True, max_retries=0
    ) as c:
        yield c


@pytest.fixture
def ant(live_server: str) -> Iterator[anthropic.Anthropic]:
    with anthropic.Anthropic(
        base_url=live_server, api_key="k", _strict_response_validation=True, max_retries=0
    ) as c:
        yield c


def ask(text: str) -> Any:
    return [{"role": "user", "content": text}]


# ------------------------------------------------------------------------------------------- HTTP errors


def test_responses_429_is_retried_as_the_headers_say(live_server: str) -> None:
    seen, hook = counting()
    with (
        openai.OpenAI(
            base_url=live_server + "/v1",
            api_key="k",
            max_retries=2,
            http_client=openai.DefaultHttpxClient(event_hooks={"request": [hook]}),
        ) as c,
        pytest.raises(openai.RateLimitError) as info,
    ):
        c.responses.create(model="gpt-4o", input="hi !MOCK_ERROR:429!")
    assert seen == ["0", "1", "2"]  # retried twice, after the 10 ms hint each time
    headers = info.value.response.headers
    assert (headers["retry-after"], headers["retry-after-ms"], headers["x-ratelimit-remaining-requests"]) == (
        "1",
        "10",
        "0",
    )
    assert info.value.body == {
        "message": "Rate limit reached for requests. Please try again shortly. "
        "(synthgpt trigger !MOCK_ERROR:429!)",
        "type": "requests",
        "param": None,
        "code": "rate_limit_exceeded",
    }


@pytest.mark.parametrize(
    ("status", "error"),
    [
        (400, openai.BadRequestError),
        (401, openai.AuthenticationError),
        (404, openai.NotFoundError),
        (500, openai.InternalServerError),
        (503, openai.InternalServerError),
    ],
)
def test_responses_http_errors(oai: openai.OpenAI, status: int, error: type[openai.APIStatusError]) -> None:
    with pytest.raises(error) as info:
        oai.responses.create(model="gpt-4o", input=f"hi !MOCK_ERROR:{status}!")
    assert info.value.status_code == status
    assert info.value.request_id is not None and info.value.request_id.startswith("req_")


def test_anthropic_429_is_retried_as_the_headers_say(live_server: str) -> None:
    seen, hook = counting()
    with (
        anthropic.Anthropic(
            base_url=live_server,
            api_key="k",
            max_retries=1,
            http_client=anthropic.DefaultHttpxClient(event_hooks={"request": [hook]}),
        ) as c,
        pytest.raises(anthropic.RateLimitError) as info,
    ):
        c.messages.create(model=MODEL, max_tokens=64, messages=ask("hi !MOCK_ERROR:429!"))
    assert seen == ["0", "1"]
    assert info.value.type == "rate_limit_error"  # type: ignore[attr-defined]
    assert info.value.response.headers["retry-after-ms"] == "10"
    assert info.value.request_id == info.value.response.headers["request-id"]
    assert info.value.body["request_id"] == info.value.request_id  # type: ignore[index]


@pytest.mark.parametrize(
    ("status", "error", "etype"),
    [
        (400, anthropic.BadRequestError, "invalid_request_error"),
        (404, anthropic.NotFoundError, "not_found_error"),
        (500, anthropic.InternalServerError, "api_error"),
        (503, anthropic.InternalServerError, "api_error"),
        (529, anthropic.OverloadedError, "overloaded_error"),
    ],
)
def test_anthropic_http_errors(
    ant: anthropic.Anthropic, status: int, error: type[anthropic.APIStatusError], etype: str
) -> None:
    with pytest.raises(error) as info:
        ant.messages.create(model=MODEL, max_tokens=64, messages=ask(f"hi !MOCK_ERROR:{status}!"))
    assert info.value.status_code == status
    assert info.value.body["error"]["type"] == etype  # type: ignore[index]


# ------------------------------------------------------------------------------------- cut by the limit


def test_responses_incomplete(oai: openai.OpenAI) -> None:
    r = oai.responses.create(model="gpt-4o", input="Tell me about trains !MOCK_INCOMPLETE!")
    assert (r.status, r.incomplete_details.reason if r.incomplete_details else None) == (
        "incomplete",
        "max_output_tokens",
    )
    assert r.output[0].status == "incomplete"  # type: ignore[union-attr]
    events = list(
        oai.responses.create(model="gpt-4o", input="Tell me about trains !MOCK_INCOMPLETE!", stream=True)
    )
    assert events[-1].type == "response.incomplete"
    assert events[-1].response.model_dump() == r.model_dump()  # type: ignore[union-attr]
    # The stream helper only accepts `response.completed` as an end, as against the real API:
    with (
        oai.responses.stream(model="gpt-4o", input="Tell me about trains !MOCK_INCOMPLETE!") as stream,
        pytest.raises(RuntimeError, match=NO_COMPLETED),
    ):
        stream.get_final_response()


def test_anthropic_max_tokens(ant: anthropic.Anthropic) -> None:
    msg = ant.messages.create(
        model=MODEL, max_tokens=999, messages=ask("Tell me about trains !MOCK_INCOMPLETE!")
    )
    assert msg.stop_reason == "max_tokens"
    with ant.messages.stream(
        model=MODEL,
        max_tokens=999,
        messages=ask("Tell me about trains !MOCK_INCOMPLETE!"),
    ) as stream:
        assert stream.get_final_message().model_dump() == msg.model_dump()


# ------------------------------------------------------------------------------------------ stream faults


def test_responses_truncate(oai: openai.OpenAI) -> None:
    events = list(oai.responses.create(model="gpt-4o", input="hi !MOCK_TRUNCATE:5!", stream=True))
    assert len(events) == 5 and events[-1].type == "response.output_text.delta"  # a clean end: no exception
    with (
        oai.responses.stream(model="gpt-4o", input="hi !MOCK_TRUNCATE:5!") as stream,
        pytest.raises(RuntimeError, match=NO_COMPLETED),
    ):
        stream.get_final_response()


def test_anthropic_truncate(ant: anthropic.Anthropic) -> None:
    with ant.messages.stream(model=MODEL, max_tokens=99, messages=ask("hi !MOCK_TRUNCATE:5!")) as stream:
        partial = stream.get_final_message()  # the SDK hands back what it has
    assert partial.stop_reason is None and partial.content[0].type == "text"


def test_responses_disconnect(oai: openai.OpenAI) -> None:
    with pytest.raises(openai.APIConnectionError):
        list(oai.responses.create(model="gpt-4o", input="hi !MOCK_DISCONNECT:5!", stream=True))


def test_anthropic_disconnect(ant: anthropic.Anthropic) -> None:
    # anthropic up to 2.16 lets the transport's error escape unwrapped (WIRE.md §7.3); 2.17 wraps it in
    # APIConnectionError. Either way the root cause is the chunked body cut off by the dropped connection.
    with (
        pytest.raises((httpx2.RemoteProtocolError, anthropic.APIConnectionError)) as info,
        ant.messages.stream(model=MODEL, max_tokens=99, messages=ask("hi !MOCK_DISCONNECT:5!")) as stream,
    ):
        stream.get_final_message()
    cause = info.value.__cause__ if isinstance(info.value, anthropic.APIConnectionError) else info.value
    assert isinstance(cause, httpx2.RemoteProtocolError)
    assert "incomplete chunked read" in str(cause)


def test_responses_stream_error(oai: openai.OpenAI) -> None:
    events = list(oai.responses.create(model="gpt-4o", input="hi !MOCK_STREAM_ERROR:3!", stream=True))
    assert [e.type for e in events] == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "error",
        "response.failed",
    ]
    error, failed = events[-2], events[-1]
    assert (error.code, error.sequence_number) == ("server_error", 3)  # type: ignore[union-attr]
    assert failed.response.status == "failed" and failed.response.error.code == "server_error"  # type: ignore[union-attr]
    with (
        oai.responses.stream(model="gpt-4o", input="hi !MOCK_STREAM_ERROR:3!") as stream,
        pytest.raises(RuntimeError, match=NO_COMPLETED),
    ):
        stream.get_final_response()


def test_anthropic_stream_error(ant: anthropic.Anthropic) -> None:
    with (
        pytest.raises(anthropic.APIStatusError) as info,
        ant.messages.stream(model=MODEL, max_tokens=99, messages=ask("hi !MOCK_STREAM_ERROR!")) as stream,
    ):
        stream.get_final_message()
    assert info.value.status_code == 200  # the error arrives mid-stream, after the 200 header
    assert info.value.body == {
        "type": "error",
        "error": {"type": "overloaded_error", "message": "Overloaded"},
    }


def test_malformed_frame(oai: openai.OpenAI, ant: anthropic.Anthropic) -> None:
    with pytest.raises(json.JSONDecodeError):
        list(oai.responses.create(model="gpt-4o", input="hi !MOCK_MALFORMED:3!", stream=True))
    with (
        pytest.raises(json.JSONDecodeError),
        ant.messages.stream(model=MODEL, max_tokens=99, messages=ask("hi !MOCK_MALFORMED:3!")) as stream,
    ):
        stream.get_final_message()


def test_unknown_output_item(oai: openai.OpenAI, live_server: str, ant: anthropic.Anthropic) -> None:
    with pytest.raises(openai.APIResponseValidationError):  # a strict client refuses the unknown kind
        oai.responses.create(model="gpt-4o", input="hi !MOCK_UNKNOWN_ITEM!")
    with openai.OpenAI(base_url=live_server + "/v1", api_key="k", max_retries=0) as lenient:
        r = lenient.responses.create(model="gpt-4o", input="hi !MOCK_UNKNOWN_ITEM!")
        raw = lenient.responses.with_raw_response.create(model="gpt-4o", input="hi !MOCK_UNKNOWN_ITEM!")
        events = list(lenient.responses.create(model="gpt-4o", input="hi !MOCK_UNKNOWN_ITEM!", stream=True))
    assert [o["type"] for o in json.loads(raw.text)["output"]] == ["synthgpt_unknown_item", "message"]
    assert len(r.output) == 2 and r.output_text  # the lenient SDK keeps going; the text is still there
    added = [e for e in events if e.type == "response.output_item.added"]
    assert [e.output_index for e in added] == [0, 1]  # type: ignore[union-attr]
    msg = ant.messages.create(model=MODEL, max_tokens=99, messages=ask("hi !MOCK_UNKNOWN_ITEM!"))
    assert [b.type for b in msg.content] == ["text"]  # Messages has no such fault: answered normally


# --------------------------------------------------------------------------------------------- pacing


def test_delay_before_the_first_byte(live_server: str, oai: openai.OpenAI) -> None:
    with (
        openai.OpenAI(base_url=live_server + "/v1", api_key="k", max_retries=0, timeout=0.25) as impatient,
        pytest.raises(openai.APITimeoutError),
    ):
        impatient.responses.create(model="gpt-4o", input="hi !MOCK_DELAY:5000!")
    with (
        anthropic.Anthropic(base_url=live_server, api_key="k", max_retries=0, timeout=0.25) as impatient_ant,
        pytest.raises(anthropic.APITimeoutError),
    ):
        impatient_ant.messages.create(model=MODEL, max_tokens=9, messages=ask("hi !MOCK_DELAY:5000!"))
    assert oai.responses.create(model="gpt-4o", input="hi !MOCK_DELAY:20!").status == "completed"


def test_slow_drip_changes_no_content(oai: openai.OpenAI, ant: anthropic.Anthropic) -> None:
    with oai.responses.stream(model="gpt-4o", input="hi !MOCK_SLOW:2!") as stream:
        slow = stream.get_final_response()
    assert slow.model_dump(exclude={"output"}) == oai.responses.create(
        model="gpt-4o", input="hi !MOCK_SLOW:2!"
    ).model_dump(exclude={"output"})
    with ant.messages.stream(model=MODEL, max_tokens=99, messages=ask("hi !MOCK_SLOW:2!")) as astream:
        drip = astream.get_final_message()
    plain = ant.messages.create(model=MODEL, max_tokens=99, messages=ask("hi !MOCK_SLOW:2!"))
    assert drip.model_dump() == plain.model_dump()


# ----------------------------------------------------------------------------- faults from a rule's plan


@pytest.fixture(scope="module")
def rule_server() -> Iterator[str]:
    rules = [
        Rule(
            "emb_limited",
            m.api("embeddings") & m.model("limited"),
            error={"status": 429, "retry_after_ms": 5},
        ),
        Rule("emb_broken", m.api("embeddings") & m.model("broken"), error={"status": 503}),
        Rule("emb", m.api("embeddings"), Embeddings(dimensions=8)),
        Rule(
            "cut",
            m.last_user(contains="cut"),
            g.answer(g.just("one two three four"), stream={"faults": [{"kind": "truncate", "after": 4}]}),
        ),
        Rule(
            "fail",
            m.last_user(contains="fail"),
            g.answer(g.just("one two three four"), stream={"faults": [{"kind": "stream_error", "after": 4}]}),
        ),
        Rule("text", m.always(), g.just("fine")),
    ]
    with LiveServer(create_app(MockGPT(rules, seed=3))) as server:
        yield server.url


def test_embeddings_errors_from_rules(rule_server: str) -> None:
    with openai.OpenAI(base_url=rule_server + "/v1", api_key="k", max_retries=0) as c:
        with pytest.raises(openai.RateLimitError) as limited:
            c.embeddings.create(model="limited", input="x")
        with pytest.raises(openai.InternalServerError) as broken:
            c.embeddings.create(model="broken", input="x")
        ok = c.embeddings.create(model="fine", input="x")
    assert (
        limited.value.response.headers["retry-after-ms"] == "5"
        and limited.value.code == "rate_limit_exceeded"
    )
    assert broken.value.status_code == 503
    assert len(ok.data[0].embedding) == 8


def test_stream_faults_from_a_rule_plan(rule_server: str) -> None:
    with openai.OpenAI(base_url=rule_server + "/v1", api_key="k", max_retries=0) as c:
        cut = list(c.responses.create(model="m", input="cut", stream=True))
        failed = list(c.responses.create(model="m", input="fail", stream=True))
    assert len(cut) == 4 and cut[-1].type == "response.content_part.added"
    assert [e.type for e in failed[4:]] == ["error", "response.failed"]
    with anthropic.Anthropic(base_url=rule_server, api_key="k", max_retries=0) as a:
        with a.messages.stream(model=MODEL, max_tokens=99, messages=ask("cut")) as stream:
            assert stream.get_final_message().stop_reason is None
        with (
            pytest.raises(anthropic.APIStatusError),
            a.messages.stream(model=MODEL, max_tokens=99, messages=ask("fail")) as stream,
        ):
            stream.get_final_message()


def test_an_embeddings_request_answered_without_vectors_is_a_500() -> None:
    body = {"model": "m", "input": "x"}
    with LiveServer(create_app(MockGPT([Rule("text", m.always(), g.just("no vectors"))]))) as server:
        r = httpx.post(server.url + "/v1/embeddings", json=body)
    assert r.status_code == 500 and r.json()["error"]["type"] == "server_error"
