"""trtexec's output placed on a replayed or reported file's stream, or refused in one line.

``--trtexec`` names a run's output; its phases and iterations go onto the file's stream where their
stamps fall (``--log-start`` places a plain log without stamps). The monitor, ``record``, ``serve``
and ``report`` ask ``trtexec_extras`` / ``file_span`` before they start, so an output that cannot
be placed is exit 2 and one line (``TrtexecError``), never phases with no samples; the runtime asks
again as it describes the source, where what cannot be used becomes a note.
"""

from __future__ import annotations

from datetime import tzinfo

from jtop_roof.formats.trtexec import TrtexecError, TrtexecRun, kept_output, read_trtexec, trtexec_records
from jtop_roof.formats.trtexec_span import LogSpan, RunPlacement, parse_log_start, place_run, placement
from jtop_roof.model.records import Marker, Work
from jtop_roof.model.timeline import parse_tz
from jtop_roof.runtime.config import Config
from jtop_roof.sources.base import Source
from jtop_roof.sources.fileindex import FileIndex
from jtop_roof.sources.replay import ReplaySource


def index_span(index: FileIndex, path: str) -> LogSpan:
    """The indexed file's span (its first and last record); TrtexecError when it holds none."""
    if not len(index):
        raise TrtexecError(f"{path} has no records to place trtexec's run on")
    first_mono = index.mono(0)
    last_wall, last_mono = index.last_times()
    first_wall = index.wall_at(0, first_mono)
    return LogSpan(path, first_mono, first_mono if last_mono is None else last_mono, first_wall, last_wall,
                   index.interval_s if first_wall is None else None)


def file_span(path: str, *, tz: tzinfo, interval_s: float | None, name: str | None = None) -> LogSpan:
    """A log's or recording's span, as a replay indexes it (OSError, ``RecordingError``);
    ``name``: the file as the user named it (``-`` for standard input)."""
    index = FileIndex(path, tz=tz, interval_s=interval_s)
    try:
        index.index_new_data(final=True)
        return index_span(index, name or path)
    finally:
        index.close()


def place_on_file(run: TrtexecRun, trtexec: str, path: str, *, tz: tzinfo, interval_s: float | None,
                  log_start: float | None, name: str | None = None) -> RunPlacement:
    """trtexec's run placed on a log or recording (``report``, ``export``, ``compare``): a plain log
    given neither ``log_start`` nor ``interval_s`` is fitted to the run (``placement``'s ``fit``).
    TrtexecError and LogStartError (one line), OSError and ``RecordingError`` (the file)."""
    span = file_span(path, tz=tz, interval_s=interval_s, name=name)
    return placement(run, trtexec, span, tz, log_start, fit=log_start is None and interval_s is None)


def trtexec_extras(source: Source, config: Config) -> tuple[list[Marker | Work], str | None]:
    """``--trtexec`` (else the output ``run`` kept beside the replayed file): its phases and
    iterations on the replayed file's stream, and a note where only part of it overlaps.
    TrtexecError (one line) when it cannot be read or placed; ``LogStartError`` for a bad
    ``--log-start``. Nothing for a source that is not a replay (``--trtexec`` is refused there)."""
    if not isinstance(source, ReplaySource):
        return [], None
    trtexec = config.trtexec or kept_output(source.path)
    if trtexec is None:
        return [], None
    tz = parse_tz(config.tz)
    run = read_trtexec(trtexec, tz, config.trtexec_offset)
    log_start = None if config.log_start is None else parse_log_start(config.log_start, tz)
    span = index_span(source.index, source.path)
    start, note = place_run(run, trtexec, span, tz, log_start)
    return trtexec_records(run, start - span.first_mono), note
