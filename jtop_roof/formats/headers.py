"""A recording's header line, bounded when written and read back whatever its size.

Written (``bound_header``, by the recorder): strings are cut at ``TEXT_MAX`` characters, lists and
maps at ``ITEMS_MAX`` entries, nesting at ``DEPTH_MAX``, the keys at ``KEYS_MAX``, and where the
line would still pass ``WRITE_MAX_BYTES`` its largest fields are dropped; the header says what was
cut in its ``cut`` map (field -> what was done), so a long ``run`` argv, a huge device-tree model,
20,000 thermal zones or a hostile ssh dump cost their own field, never the recording.

Read (``parse_header_line``; ``salvage`` for a line too long to hold): a line that starts as our
header line starts (``{"type":"header"``) is a recording header, never a plain tegrastats line. A
header too long for a line (over 1 MiB, from a writer without these bounds) or not valid JSON (a
header torn by a crash) is read field by field in bounded memory: fields up to ``FIELD_MAX_BYTES``
are kept, longer ones dropped and said in ``cut``, as is where the JSON broke off. Reading it as a
recording keeps its samples, phases, power and board, which a refusal would lose for one field;
a header that loses what makes it ours (``app``, ``schema``) is then refused by ``check_header``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any, cast

from jtop_roof.model.codec import encodable_tree, json_line

#: Characters of a header string kept when writing.
TEXT_MAX = 4096
#: Entries of a header list or map kept when writing.
ITEMS_MAX = 256
#: Nesting of a header value kept when writing (deeper values are dropped).
DEPTH_MAX = 8
#: Top-level keys of a header kept, writing and reading.
KEYS_MAX = 64
#: The longest header line written: the recorder's check of an existing file reads this far.
WRITE_MAX_BYTES = 64 << 10
#: A header field longer than this, read from a header line too long to hold, is dropped.
FIELD_MAX_BYTES = 64 << 10
#: The most bytes of fields kept from such a line in all.
SALVAGE_MAX_BYTES = 1 << 20
#: What each header keeps, however large the others: what makes it ours and places its clocks.
ESSENTIAL = ("type", "schema", "app", "version", "start_wall", "start_mono", "tz", "interval_ms", "cut")

#: How our header lines start (the recorder writes ``type`` first), after a BOM and blanks.
_HEADER_START = re.compile(rb'^(?:\xef\xbb\xbf)?\s*\{\s*"type"\s*:\s*"header"\s*[,}]')


def looks_like_header(line: str | bytes) -> bool:
    """True when ``line`` starts as our recording header lines start (only its start is read)."""
    head = line[:128]
    data = head if isinstance(head, bytes) else head.encode("utf-8", "replace")
    return _HEADER_START.match(data) is not None


# ------------------------------------------------------------------------------------ writing


def bound_header(header: Mapping[str, Any]) -> dict[str, Any]:
    """``header`` within the bounds of the module docstring, with a ``cut`` map (field -> what was
    cut) where anything was; the header itself where nothing was."""
    cut: dict[str, str] = {}
    out: dict[str, Any] = {}
    for number, (key, value) in enumerate(header.items()):
        if number >= KEYS_MAX:
            cut["(keys)"] = f"{len(header):,} keys, the first {KEYS_MAX} kept"
            break
        said: list[str] = []
        name = str(key)[:64]
        out[name] = _bounded(value, said, 0)
        if said:
            cut[name] = "; ".join(dict.fromkeys(said))[:200]
    sizes = {key: len(json_line({key: value})) for key, value in out.items()}
    total = sum(sizes.values()) + len(json_line({"cut": cut})) + 256
    for key in sorted((k for k in sizes if k not in ESSENTIAL), key=sizes.__getitem__, reverse=True):
        if total <= WRITE_MAX_BYTES:
            break
        del out[key]
        cut[key] = f"dropped: {sizes[key]:,} bytes, over the header's {WRITE_MAX_BYTES >> 10} KiB"
        total += 100 - sizes[key]
    if cut:
        out["cut"] = {**out["cut"], **cut} if isinstance(out.get("cut"), dict) else cut
    return out


def _bounded(value: Any, said: list[str], depth: int) -> Any:
    if isinstance(value, str):
        if len(value) > TEXT_MAX:
            said.append(f"text of {len(value):,} characters cut to {TEXT_MAX:,}")
            return value[:TEXT_MAX]
        return value
    if not isinstance(value, (list, tuple, dict)):
        return value
    if depth >= DEPTH_MAX:
        said.append(f"nested deeper than {DEPTH_MAX}: dropped there")
        return None
    if len(value) > ITEMS_MAX:
        said.append(f"{len(value):,} entries, the first {ITEMS_MAX} kept")
    if isinstance(value, dict):
        items = list(value.items())[:ITEMS_MAX]
        return {str(k)[:TEXT_MAX]: _bounded(v, said, depth + 1) for k, v in items}
    return [_bounded(v, said, depth + 1) for v in value[:ITEMS_MAX]]


# ------------------------------------------------------------------------------------ reading


def parse_header_line(line: str | bytes) -> dict[str, Any] | None:
    """The header dict when ``line`` is our recording's header line, else None. A line that starts
    as a header but is not valid JSON is read field by field (``salvage``)."""
    text = line.strip()
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    text = text.lstrip("\ufeff")
    if not text.startswith("{"):
        return None
    try:
        obj = json.loads(text)
    except (ValueError, RecursionError):
        if not looks_like_header(text):
            return None
        return salvage([text.encode("utf-8", "surrogatepass")])
    if isinstance(obj, dict) and obj.get("type") == "header":
        return cast(dict[str, Any], encodable_tree(obj))
    return None


def salvage(pieces: Any) -> dict[str, Any]:
    """The header read field by field from ``pieces`` (bytes, in order: one line), in bounded
    memory; what was dropped is in its ``cut`` map."""
    scan = _Scan()
    for piece in pieces:  # all read, so that a reader goes on after the line
        if scan.state not in ("done", "bad"):
            scan.feed(piece)
    return scan.header()


def salvage_at(read: Callable[[int, int], bytes], offset: int) -> tuple[dict[str, Any], int]:
    """(header, bytes up to and with its newline) of the header line at ``offset``, read through
    ``read(size, offset)`` (``os.pread`` of a descriptor) in pieces."""
    scan = _Scan()
    pos = offset
    while True:
        piece = read(1 << 16, pos)
        if not piece:
            break
        newline = piece.find(b"\n")
        if newline >= 0:
            piece = piece[:newline + 1]
        if scan.state not in ("done", "bad"):
            scan.feed(piece)
        pos += len(piece)
        if newline >= 0:
            break
    return scan.header(), pos - offset


_IN_STRING = re.compile(rb'["\\]')
_OUTSIDE = re.compile(rb'["\[\]{},]')
_BLANK = b" \t\r\n"


class _Scan:
    """A top-level JSON object read one piece at a time, its values kept up to a size."""

    def __init__(self) -> None:
        self.state = "start"  # start, key, colon, value, after, done, bad
        self.fields: dict[str, Any] = {}
        self.cut: dict[str, str] = {}
        self._kept_bytes = 0
        self._key = ""
        self._buf = bytearray()
        self._size = 0
        self._keep = True
        self._in_string = self._escape = False
        self._depth = 0
        self._started = False  # a key or value is being read

    def feed(self, data: bytes) -> None:
        i, n = 0, len(data)
        if self.state == "start" and data.startswith(b"\xef\xbb\xbf"):
            i = 3
        while i < n and self.state not in ("done", "bad"):
            if self._started:
                i = self._token(data, i)
                continue
            c = data[i]
            if c in _BLANK:
                i += 1
                continue
            state = self.state
            if state == "start":
                self.state = "key" if c == 0x7B else "bad"
                i += 1
            elif state == "key" and c == 0x7D and not self.fields:
                self.state = "done"
            elif state == "key" and c == 0x22:
                self._begin()
            elif state == "colon" and c == 0x3A:
                self.state = "value"
                i += 1
            elif state == "value":
                self._begin()
            elif state == "after" and c in (0x2C, 0x7D):
                self.state = "key" if c == 0x2C else "done"
                i += 1
            else:
                self.state = "bad"

    def _begin(self) -> None:
        self._started, self._buf, self._size, self._keep = True, bytearray(), 0, True
        self._in_string = self._escape = False
        self._depth = 0

    def _token(self, data: bytes, i: int) -> int:
        """Read on in the key or value being read; at its end, take it."""
        n = len(data)
        start, end = i, -1
        while i < n:
            if self._escape:
                self._escape = False
                i += 1
                continue
            if self._in_string:
                match = _IN_STRING.search(data, i)
                if match is None:
                    i = n
                    break
                j = match.start()
                if data[j] == 0x5C:  # a backslash: the next byte is escaped
                    self._escape, i = True, j + 1
                    continue
                self._in_string, i = False, j + 1
                if self._depth == 0:
                    end = i
                    break
                continue
            match = _OUTSIDE.search(data, i)
            if match is None:
                i = n
                break
            j, c = match.start(), data[match.start()]
            if c == 0x22:
                self._in_string, i = True, j + 1
            elif c in (0x5B, 0x7B):
                self._depth, i = self._depth + 1, j + 1
            elif self._depth == 0:  # , ] or } at the top: the value ended before it
                end = i = j
                break
            elif c == 0x2C:
                i = j + 1
            else:
                self._depth, i = self._depth - 1, j + 1
                if self._depth == 0:
                    end = i
                    break
        self._take(data[start:i])
        if end >= 0:
            self._end()
        return i

    def _take(self, piece: bytes) -> None:
        self._size += len(piece)
        if self._keep and self._size <= FIELD_MAX_BYTES:
            self._buf += piece
        else:
            self._keep, self._buf = False, bytearray()

    def _end(self) -> None:
        self._started = False
        raw, size, kept = bytes(self._buf).strip(), self._size, self._keep
        if self.state == "key":
            try:
                key = json.loads(raw) if kept else None
            except (ValueError, RecursionError):
                key = None
            if not isinstance(key, str):
                self.state = "bad"
                return
            self._key, self.state = key[:64], "colon"
            return
        self.state = "after"
        key = self._key
        if len(self.fields) >= KEYS_MAX:
            self.cut.setdefault("(keys)", f"more than {KEYS_MAX} keys: the first {KEYS_MAX} kept")
            return
        if kept and self._kept_bytes + size <= SALVAGE_MAX_BYTES:
            try:
                self.fields[key] = encodable_tree(json.loads(raw))
                self._kept_bytes += size
                return
            except (ValueError, RecursionError):
                self.cut[key] = "dropped on reading: not valid JSON"
                return
        self.cut[key] = f"dropped on reading: {size:,} bytes, over {FIELD_MAX_BYTES >> 10} KiB"

    def header(self) -> dict[str, Any]:
        """What was read, with ``cut`` saying what was not (and where the line broke off)."""
        cut = dict(self.cut)
        if self.state != "done":
            where = f"after {self._key!r}" if self._key else "at its start"
            cut["(line)"] = f"the header line breaks off or is not valid JSON {where}: the rest is dropped"
        out = dict(self.fields)
        if cut:
            earlier = out.get("cut")
            out["cut"] = {**earlier, **cut} if isinstance(earlier, dict) else cut
        return out


def cut_note(header: Mapping[str, Any]) -> str | None:
    """The note a reader gives for a header whose fields were cut (its ``cut`` map), else None."""
    cut = header.get("cut")
    if not isinstance(cut, dict) or not cut:
        return None
    said = [f"{str(key)[:64]} ({str(what)[:120]})" for key, what in list(cut.items())[:8]]
    more = f" and {len(cut) - 8} more" if len(cut) > 8 else ""
    return "the recording header's fields were cut: " + "; ".join(said) + more
