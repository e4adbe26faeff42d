"""Anthropic Messages: `request` decodes a Messages body, `encode` renders a message or its event
stream (also `count_tokens` and the models list)."""

from __future__ import annotations

from .encode import MessagesCodec

__all__ = ["MessagesCodec"]
