"""`summary` ends sentences at CJK and other full stops, not only at `. ! ?` before a space."""

from __future__ import annotations

import pytest

from synthgpt import MockGPT, Rule
from synthgpt import generators as g
from synthgpt import matchers as m


@pytest.mark.parametrize(
    ("text", "count", "expected"),
    [
        ("今日は晴れです。明日は雨でしょう！残り。", 1, "今日は晴れです。"),
        ("今日は晴れです。明日は雨でしょう！残り。", 2, "今日は晴れです。明日は雨でしょう！"),
        ("你好！我很好？谢谢", 2, "你好！我很好？"),
        ("नमस्ते। आप कैसे हैं?", 1, "नमस्ते।"),
        ("Hello there. How are you?\nFine.", 2, "Hello there. How are you?"),
        ("Price is 3.5 dollars. Ok", 1, "Price is 3.5 dollars."),
        ("", 1, ""),
    ],
)
def test_summary_sentences(text: str, count: int, expected: str) -> None:
    mock = MockGPT(rules=[Rule("s", m.always(), g.summary(count=count))])
    assert mock.generate({"model": "m", "messages": [{"role": "user", "content": text}]}).text == expected
