"""NaN and infinities are not JSON (issue 11, §4): Responses and Messages took `temperature`/`top_p` of
NaN, ±Infinity and -1 and echoed NaN into the body. Now every API refuses them in its own shape, and the
JSON encoder refuses to write them anywhere."""

from __future__ import annotations

import json
import math
from typing import Any

import httpx2
import pytest

from synthgpt import MockGPT
from synthgpt.codec.common import parse_json_body
from synthgpt.errors import RequestError
from synthgpt.jsonutil import dumps
from synthgpt.server.responses import json_bytes
from synthgpt.testing import InProcessTransport2

CHAT = ("/v1/chat/completions", '{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}],"%s":%s}')
RESPONSES = ("/v1/responses", '{"model":"gpt-4o","input":"hi","%s":%s}')
MESSAGES = (
    "/v1/messages",
    '{"model":"claude-sonnet-4-5","max_tokens":20,"messages":[{"role":"user","content":"hi"}],"%s":%s}',
)


def _post(route: tuple[str, str], key: str, value: str) -> httpx2.Response:
    client = httpx2.Client(transport=InProcessTransport2(MockGPT()), base_url="http://t")
    headers = {"content-type": "application/json", "anthropic-version": "2023-06-01"}
    return client.post(route[0], content=(route[1] % (key, value)).encode(), headers=headers)


@pytest.mark.parametrize("route", [CHAT, RESPONSES, MESSAGES], ids=["chat", "responses", "messages"])
@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity", "1e999", "-1e400"])
def test_non_finite_literals_are_not_json(route: tuple[str, str], literal: str) -> None:
    r = _post(route, "temperature", literal)
    assert r.status_code == 400, r.text
    body = r.json()  # the error itself is JSON
    message = body["error"]["message"]
    assert (
        f"`{literal}` is not a JSON number a double can hold" in message
        or f"`{literal}` is not JSON" in message
    )


@pytest.mark.parametrize(
    ("key", "value", "message", "code"),
    [
        ("temperature", "-1", "below minimum value. Expected a value >= 0, but got -1", "decimal_below_min_value"),  # noqa: E501
        ("temperature", "2.5", "above maximum value. Expected a value <= 2, but got 2.5", "decimal_above_max_value"),  # noqa: E501
        ("top_p", "1.01", "above maximum value. Expected a value <= 1, but got 1.01", "decimal_above_max_value"),  # noqa: E501
    ],
)
def test_responses_range(key: str, value: str, message: str, code: str) -> None:
    r = _post(RESPONSES, key, value)
    assert r.status_code == 400
    error = {"message": f"Invalid '{key}': decimal {message} instead.", "type": "invalid_request_error",
             "param": key, "code": code}  # fmt: skip
    assert r.json() == {"error": error}


def test_responses_type() -> None:
    r = _post(RESPONSES, "top_p", '"high"')
    message = "Invalid type for 'top_p': expected a decimal, but got a string instead."
    assert r.json()["error"]["message"] == message


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("temperature", "-1", "temperature: Input should be greater than or equal to 0"),
        ("temperature", "1.5", "temperature: Input should be less than or equal to 1"),
        ("top_p", "-0.5", "top_p: Input should be greater than or equal to 0"),
        ("top_p", "true", "top_p: Input should be a valid number"),
        ("top_k", "-1", "top_k: Input should be greater than or equal to 0"),
        ("top_k", "1.5", "top_k: Input should be a valid integer"),
    ],
)
def test_messages_range(key: str, value: str, message: str) -> None:
    r = _post(MESSAGES, key, value)
    assert r.status_code == 400
    assert r.json()["error"] == {"type": "invalid_request_error", "message": message}


def test_valid_values_are_echoed_as_json() -> None:
    r = _post(RESPONSES, "temperature", "0.7")
    assert r.status_code == 200 and r.json()["temperature"] == 0.7
    assert _post(MESSAGES, "temperature", "1").status_code == 200
    assert _post(CHAT, "top_p", "0").status_code == 200


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf, {"a": [math.nan]}])
def test_the_encoders_refuse_non_finite_numbers(value: Any) -> None:
    with pytest.raises(ValueError, match="not JSON compliant"):
        dumps(value)
    with pytest.raises(ValueError, match="not JSON compliant"):
        json_bytes(value)


def test_parse_reports_where() -> None:
    with pytest.raises(RequestError) as err:
        parse_json_body(b'{"a": 1,\n "temperature": NaN}')
    assert err.value.message == (
        "We could not parse the JSON body of your request: `NaN` is not JSON (line 2 column 17). "
        "Send a number, or null."
    )
    assert json.loads(dumps({"x": 1.5})) == {"x": 1.5}
