"""Text that is safe to print on a terminal: JSON (``terminal_safe``) and plain text such as a CSV
cell or a Prometheus label value (``shown_text``).

JSON text that is safe to print on a terminal. JSON allows C1 controls (U+0080-U+009F) and the
bidi embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069) raw inside strings, but a
terminal acts on them: U+009B starts an escape sequence as ESC [ does, U+202E shows the text after
it reversed. A recording's or a log's strings may hold them, so what we print writes them as
``\\uXXXX``: still valid JSON, the same data once read."""

from __future__ import annotations

import re
import unicodedata

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


#: What a terminal acts on or draws as nothing, in plain text: controls (C0 but tab and line feed,
#: DEL, C1: ESC and BEL start sequences, CR overwrites the line), format characters (the bidi
#: marks, embeddings, overrides and isolates, zero-width characters, the byte-order mark), lone
#: surrogates (an undecodable byte), and the line and paragraph separators.
HIDDEN_CATEGORIES = frozenset(("Cc", "Cf", "Cs", "Zl", "Zp"))
#: Controls a terminal only moves on (a CSV cell keeps them quoted; the metrics client escapes \n).
KEPT_CONTROLS = "\t\n"


def shown_text(text: str) -> str:
    """``text`` with each character of ``HIDDEN_CATEGORIES`` written as its Python escape
    (``\\x1b``, ``\\u202e``), literal otherwise: a phase, rail or board name from a file or a peer
    reaches a terminal as what it is, never as what it does. The same object when it holds none."""
    if text.isprintable():
        return text
    return "".join(_shown(c) for c in text)


def _shown(c: str) -> str:
    if c.isprintable() or c in KEPT_CONTROLS or unicodedata.category(c) not in HIDDEN_CATEGORIES:
        return c
    return c.encode("unicode_escape").decode("ascii")
