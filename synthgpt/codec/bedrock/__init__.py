"""AWS Bedrock Converse: `request` decodes `converse`/`converse-stream`, `encode` renders answers,
`eventstream` frames the binary `application/vnd.amazon.eventstream` messages with their CRCs."""

from __future__ import annotations

from .encode import BedrockCodec

__all__ = ["BedrockCodec"]
