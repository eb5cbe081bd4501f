"""An input with no sample is an error, said once for every reader: ``report``, ``export``,
``compare``, ``plot``, ``parse``, ``--replay`` and the read API call ``require_samples`` (or, for
``parse`` of a pipe, watch the lines as they pass with ``SampleFinder``). The line says what the
file holds instead: ``no tegrastats samples in run.log: 2 lines, none a sample``.

A file with samples is read only up to its first one (a line or two); a file without is read
whole, once, which is what every reader would have done before saying nothing useful. A sample
is what the readers take as one (``formats.logfile``): in a recording, a ``sample`` record with
a time; in a plain log, a line the parser reads as tegrastats'. A recording header this program
must not read is left to the readers, which say so.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator

from jtop_roof.formats.logfile import (
    RecordingError,
    check_header,
    decode_record_line,
    is_sample_candidate,
    open_text,
    parse_header_line,
)
from jtop_roof.formats.parser import parse_line
from jtop_roof.model.errors import UserError
from jtop_roof.model.records import Sample

#: How a file is named for ``-`` (standard input, or where it was spooled).
STDIN_NAME = "standard input"


class NoSamplesError(UserError):
    """An input without a sample (one line, exit 2)."""


class SampleFinder:
    """Looks at a file's lines in order until one is a sample (``found``), counting what it saw."""

    def __init__(self) -> None:
        self.found = False
        self.lines = 0
        self.blank = 0
        #: None until the first line that is not blank; then whether the file is a recording.
        self.recording: bool | None = None

    def see(self, line: str) -> bool:
        """Take the next line; True once a sample has been seen (the rest need not be shown)."""
        if self.found:
            return True
        self.lines += 1
        if not line.strip():
            self.blank += 1
            return False
        if self.recording is None:
            header = parse_header_line(line)
            self.recording = header is not None
            if header is not None:
                try:
                    check_header(header)
                except RecordingError:  # not ours to read: the reader says why
                    self.found = True
                return self.found
        if self.recording:
            record = decode_record_line(line)
            self.found = isinstance(record, Sample) and record.t_mono is not None
        else:
            self.found = is_sample_candidate(line) and parse_line(line).is_sample
        return self.found

    def message(self, name: str, *, streamed: bool = False) -> str:
        """What the file holds, in one line, for a file without a sample; ``streamed``: a pipe
        (standard input is one too), where an empty input is one where nothing came."""
        where = STDIN_NAME if name == "-" else name
        if self.recording:
            rest = self.lines - self.blank - 1
            held = ("a jroof recording header and nothing else" if rest == 0 else
                    f"a jroof recording header and {_count(rest, 'more line')}, none a sample")
            return f"no samples in {where}: {held}"
        if self.lines == 0:
            held = "nothing came" if streamed or name == "-" else "the file is empty"
        elif self.lines == self.blank:
            held = f"{_count(self.lines, 'line')}, all blank"
        else:
            held = f"{_count(self.lines, 'line')}, none a sample"
        return f"no tegrastats samples in {where}: {held}"


def _count(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def require_samples(path: str, name: str | None = None) -> None:
    """Raise NoSamplesError unless ``path`` (``name``: what the user called it, ``-`` for standard
    input spooled to ``path``) holds a sample. Only a regular file is looked at: a pipe or a device
    is the reader's to read or refuse. OSError where it cannot be read."""
    if not os.path.isfile(path):
        return
    finder = SampleFinder()
    with open_text(path) as stream:
        for line in stream:
            if finder.see(line):
                return
    raise NoSamplesError(finder.message(path if name is None else name))


def watched(lines: Iterable[str], finder: SampleFinder) -> Iterator[str]:
    """``lines`` as they come, shown to ``finder`` until it has found a sample (then passed on
    untouched): for a stream that can be read once (``parse -``)."""
    it = iter(lines)
    for line in it:
        yield line
        if finder.see(line):
            break
    yield from it
