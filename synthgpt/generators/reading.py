"""How much of a message the generators that read it look at.

The built-in answers read the user's text for its topic, the shape of answer it asks for, the sides of a
comparison, places, quoted values and stated facts. Each reader is linear or close to it, but on a message
of megabytes they took seconds (a 10 MB message: 1.8 s, half of it one regex call holding the GIL), and
a few patterns that look for "between X and Y" grow with the square of the text. What they look for sits
where people write it, at the start ("Summarize this: …") or at the end ("… What are the key points?"),
so a long message is read as its first and last `READ_CHARS // 2` characters. A message up to
`READ_CHARS` long is read whole, so answers to ordinary prompts are what they always were.
"""

from __future__ import annotations

__all__ = ["READ_CHARS", "read_window"]

READ_CHARS = 8192


_HALF = READ_CHARS // 2


def read_window(text: str) -> str:
    """`text` itself, or for a longer one its head and tail joined by a line break. A window is returned
    as it is (it is `READ_CHARS + 1` long), so a reader handed a window by another reads no less."""
    if len(text) <= READ_CHARS + 1:
        return text
    return text[:_HALF] + "\n" + text[-_HALF:]
