"""`boto3`'s `bedrock-runtime` client (dummy credentials, `endpoint_url`) against a real `synthgpt serve`
process: `converse` and `converse_stream` (the binary event stream, CRCs checked by botocore)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError, EventStreamError
from urllib3.exceptions import ProtocolError

MODEL = "anthropic.claude-sonnet-4-5-20250929-v1:0"
TOOLS = {
    "tools": [
        {
            "toolSpec": {
                "name": "get_weather",
                "description": "Current weather for a city",
                "inputSchema": {
                    "json": {
                        "type": "object",
                        "properties": {"city": {"type": "string"}},
                        "required": ["city"],
                    }
                },
            }
        }
    ]
}


@pytest.fixture
def brt(live_server: str) -> Iterator[Any]:
    client = boto3.client(
        "bedrock-runtime",
        endpoint_url=live_server,
        region_name="us-east-1",
        aws_access_key_id="AKIDEXAMPLE",
        aws_secret_access_key="secret",
        config=Config(retries={"total_max_attempts": 1}),
    )
    yield client
    client.close()


def user(text: str) -> list[Any]:
    return [{"role": "user", "content": [{"text": text}]}]


def text_of(response: dict[str, Any]) -> str:
    return "".join(b.get("text", "") for b in response["output"]["message"]["content"])


def test_converse(brt: Any) -> None:
    r = brt.converse(modelId=MODEL, messages=user("Tell me about tea"), system=[{"text": "Be brief."}])
    assert r["ResponseMetadata"]["HTTPStatusCode"] == 200 and len(r["ResponseMetadata"]["RequestId"]) == 36
    assert r["stopReason"] == "end_turn" and "tea" in text_of(r).lower()
    usage = r["usage"]
    assert usage["totalTokens"] == usage["inputTokens"] + usage["outputTokens"] > 0
    assert r["metrics"]["latencyMs"] > 0


def test_stream_folds_to_the_answer(brt: Any) -> None:
    events = list(brt.converse_stream(modelId=MODEL, messages=user("Tell me about tea"))["stream"])
    whole = brt.converse(modelId=MODEL, messages=user("Tell me about tea"))
    names = [next(iter(e)) for e in events]
    assert names[0] == "messageStart" and names[-2:] == ["messageStop", "metadata"]
    text = "".join(
        e["contentBlockDelta"]["delta"].get("text", "") for e in events if "contentBlockDelta" in e
    )
    assert text == text_of(whole) and events[-1]["metadata"]["usage"] == whole["usage"]


def test_tool_use_loop(brt: Any) -> None:
    first = brt.converse(modelId=MODEL, messages=user("What is the weather in Paris?"), toolConfig=TOOLS)
    assert first["stopReason"] == "tool_use"
    (block,) = first["output"]["message"]["content"]
    use = block["toolUse"]
    assert (
        use["name"] == "get_weather"
        and use["input"] == {"city": "Paris"}
        and use["toolUseId"].startswith("tooluse_")
    )
    result = {"toolResult": {"toolUseId": use["toolUseId"], "content": [{"json": {"sky": "sunny"}}]}}
    history = [
        *user("What is the weather in Paris?"),
        first["output"]["message"],
        {"role": "user", "content": [result]},
    ]
    second = brt.converse(modelId=MODEL, messages=history, toolConfig=TOOLS)
    assert second["stopReason"] == "end_turn" and "sunny" in text_of(second)
    streamed = list(
        brt.converse_stream(modelId=MODEL, messages=user("Weather in Oslo?"), toolConfig=TOOLS)["stream"]
    )
    start = next(e["contentBlockStart"] for e in streamed if "contentBlockStart" in e)
    args = "".join(e["contentBlockDelta"]["delta"]["toolUse"]["input"] for e in streamed
                   if "toolUse" in e.get("contentBlockDelta", {}).get("delta", {}))  # fmt: skip
    assert start["start"]["toolUse"]["name"] == "get_weather" and json.loads(args) == {"city": "Oslo"}


def test_forced_tool_and_structured_output(brt: Any) -> None:
    forced = dict(TOOLS, toolChoice={"tool": {"name": "get_weather"}})
    r = brt.converse(modelId=MODEL, messages=user("Hello"), toolConfig=forced)
    assert r["output"]["message"]["content"][0]["toolUse"]["name"] == "get_weather"
    schema = {"type": "object", "properties": {"title": {"type": "string"}, "year": {"type": "integer"}},
              "required": ["title", "year"]}  # fmt: skip
    text_format = {
        "type": "json_schema",
        "structure": {"jsonSchema": {"schema": json.dumps(schema), "name": "book"}},
    }
    doc = json.loads(
        text_of(
            brt.converse(modelId=MODEL, messages=user("A book"), outputConfig={"textFormat": text_format})
        )
    )
    assert list(doc) == ["title", "year"] and isinstance(doc["year"], int)


def test_reasoning(brt: Any) -> None:
    fields = {"thinking": {"type": "enabled", "budget_tokens": 1024}}
    r = brt.converse(
        modelId=MODEL, messages=user("Why is the sky blue?"), additionalModelRequestFields=fields
    )
    first, second = r["output"]["message"]["content"]
    assert (
        first["reasoningContent"]["reasoningText"]["text"]
        and first["reasoningContent"]["reasoningText"]["signature"]
    )
    assert second["text"]


def test_model_id_may_be_an_arn(brt: Any) -> None:
    arn = "arn:aws:bedrock:us-east-1:123456789012:inference-profile/us." + MODEL.removeprefix("anthropic.")
    assert text_of(brt.converse(modelId=arn, messages=user("hi")))


def test_errors_are_botocore_exceptions(brt: Any) -> None:
    with pytest.raises(ClientError) as caught:
        brt.converse(modelId=MODEL, messages=user("!MOCK_ERROR:429! hi"))
    assert caught.value.response["Error"]["Code"] == "ThrottlingException"
    assert isinstance(caught.value, brt.exceptions.ThrottlingException)
    with pytest.raises(brt.exceptions.ValidationException) as bad:
        brt.converse(modelId=MODEL, messages=[{"role": "assistant", "content": []}])
    assert "must start with a user message" in bad.value.response["Error"]["Message"]


def test_mid_stream_error(brt: Any) -> None:
    stream = brt.converse_stream(modelId=MODEL, messages=user("!MOCK_STREAM_ERROR:3! Tell me about tea"))[
        "stream"
    ]
    with pytest.raises(EventStreamError) as caught:
        list(stream)
    stream.close()  # an error leaves the connection to the caller, as with a real endpoint
    assert caught.value.response["Error"]["Code"] == "modelStreamErrorException"


def test_truncated_and_cut_streams(brt: Any) -> None:
    truncated = brt.converse_stream(modelId=MODEL, messages=user("!MOCK_TRUNCATE:3! tea"))["stream"]
    cut = list(truncated)
    assert len(cut) == 3 and "metadata" not in cut[-1]
    dropped = brt.converse_stream(modelId=MODEL, messages=user("!MOCK_DISCONNECT:3! tea"))["stream"]
    with pytest.raises(ProtocolError):
        list(dropped)
    dropped.close()


def test_malformed_event_payload(brt: Any) -> None:
    # the frame itself stays valid (CRCs right); its JSON payload is cut: botocore reads an empty event
    stream = brt.converse_stream(modelId=MODEL, messages=user("!MOCK_MALFORMED:1! tea"))["stream"]
    events = list(stream)
    assert events[1] == {"contentBlockDelta": {}} and "metadata" in events[-1]
