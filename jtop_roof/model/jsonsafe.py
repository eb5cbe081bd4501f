"""JSON text that is safe to print on a terminal. JSON allows C1 controls (U+0080-U+009F) and the
bidi embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069) raw inside strings, but a
terminal acts on them: U+009B starts an escape sequence as ESC [ does, U+202E shows the text after
it reversed. A recording's or a log's strings may hold them, so what we print writes them as
``\\uXXXX``: still valid JSON, the same data once read."""

from __future__ import annotations

import re

_UNSAFE = re.compile("[\u0080-\u009f\u202a-\u202e\u2066-\u2069]")


def terminal_safe(json_text: str) -> str:
    """``json_text`` with each such character as its ``\\uXXXX`` escape (they can only stand inside
    a string, never within an escape, so the data is unchanged); the same object when it holds
    none. Most text is ASCII, which CPython knows without a scan; the rest is searched once."""
    if json_text.isascii() or _UNSAFE.search(json_text) is None:
        return json_text
    return _UNSAFE.sub(_escape, json_text)


def _escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match[0]):04x}"
