"""trtexec's output placed on a replayed or reported file's stream, or refused in one line.

``--trtexec`` names a run's output; its phases and iterations go onto the file's stream where their
stamps fall (``--log-start`` places a plain log without stamps; given neither it nor ``--interval``,
a plain log is fitted to trtexec's run: ``trtexec_span.placement``). The monitor, ``record``,
``serve`` and ``report`` ask ``trtexec_extras`` / ``place_on_file`` before they start, so an output
that cannot be placed is exit 2 and one line (``TrtexecError``), never phases with no samples; the
runtime asks again as it describes the source, where what cannot be used becomes a note. A replay
of a plain log is spaced at the fitted interval (``fitted_interval_s``), so its phases are
``report``'s.
"""

from __future__ import annotations

from datetime import tzinfo

from jtop_roof.formats.logfile import RecordingError
from jtop_roof.formats.trtexec import (
    TrtexecError,
    TrtexecRun,
    kept_output,
    read_trtexec,
    trtexec_records_among,
)
from jtop_roof.formats.trtexec_span import LogSpan, RunPlacement, parse_log_start, placement
from jtop_roof.model.records import Marker, Sample, Work
from jtop_roof.model.timeline import parse_tz
from jtop_roof.runtime.config import Config
from jtop_roof.sources.base import Source
from jtop_roof.sources.fileindex import FileIndex
from jtop_roof.sources.replay import ReplaySource


def index_span(index: FileIndex, path: str, *, gpu_loads: bool = False) -> LogSpan:
    """The indexed file's span (its first and last record); TrtexecError when it holds none.
    ``gpu_loads``: a plain log's samples' GPU loads are read too (the whole file), to check a fit."""
    if not len(index):
        raise TrtexecError(f"{path} has no records to place trtexec's run on")
    first_mono = index.mono(0)
    last_wall, last_mono = index.last_times()
    first_wall = index.wall_at(0, first_mono)
    plain = first_wall is None
    loads = tuple((record.t_mono, record.gpu.load_pct) for record in index.scan()
                  if isinstance(record, Sample) and record.t_mono is not None and record.gpu is not None
                  and record.gpu.load_pct is not None) if plain and gpu_loads else ()
    return LogSpan(path, first_mono, first_mono if last_mono is None else last_mono, first_wall, last_wall,
                   index.interval_s if plain else None,
                   index.basis.interval_source if plain else None, loads)


def file_span(path: str, *, tz: tzinfo, interval_s: float | None, name: str | None = None,
              gpu_loads: bool = False) -> LogSpan:
    """A log's or recording's span, as a replay indexes it (OSError, ``RecordingError``);
    ``name``: the file as the user named it (``-`` for standard input)."""
    index = FileIndex(path, tz=tz, interval_s=interval_s)
    try:
        index.index_new_data(final=True)
        return index_span(index, name or path, gpu_loads=gpu_loads)
    finally:
        index.close()


def place_on_file(run: TrtexecRun, trtexec: str, path: str, *, tz: tzinfo, interval_s: float | None,
                  log_start: float | None, name: str | None = None) -> RunPlacement:
    """trtexec's run placed on a log or recording (``report``, ``export``, ``compare``): a plain log
    given neither ``log_start`` nor ``interval_s`` is fitted to the run (``placement``'s ``fit``).
    TrtexecError and LogStartError (one line), OSError and ``RecordingError`` (the file)."""
    fit = log_start is None and interval_s is None
    span = file_span(path, tz=tz, interval_s=interval_s, name=name, gpu_loads=fit)
    return placement(run, trtexec, span, tz, log_start, fit=fit)


def given_interval_ms(config: Config) -> int | None:
    """The user's interval (``--interval``), or None: Config's default is no one's."""
    return None if config.interval_ms == Config.interval_ms else config.interval_ms


def fitted_interval_s(config: Config, path: str, tz: tzinfo) -> float | None:
    """The interval to replay ``path`` at where it is a plain log fitted to trtexec's run
    (``--trtexec``, else the output ``run`` kept beside it; neither ``--log-start`` nor
    ``--interval`` given), as ``report`` reads it; else None. What cannot be read or placed gives
    None here: ``trtexec_extras`` refuses it or notes it."""
    trtexec = config.trtexec or kept_output(path)
    if trtexec is None or config.log_start is not None or given_interval_ms(config) is not None \
            or config.follow:
        return None
    try:
        index = FileIndex(path, tz=tz, interval_s=None)
        try:
            index.index_ready()  # a stamped log or a recording is not read further here
            if not len(index) or index.mode != "plain" or index.wall_at(0, index.mono(0)) is not None:
                return None
            index.index_new_data(final=True)
            span = index_span(index, path, gpu_loads=False)  # the interval needs no loads: no decode
        finally:
            index.close()
        run = read_trtexec(trtexec, tz, config.trtexec_offset)
        return placement(run, trtexec, span, tz, fit=True).interval_s
    except (TrtexecError, RecordingError, OSError, ValueError):
        return None


def trtexec_extras(source: Source, config: Config) -> tuple[list[Marker | Work], str | None]:
    """``--trtexec`` (else the output ``run`` kept beside the replayed file): its phases and
    iterations on the replayed file's stream, and a note where only part of it overlaps, or where
    a plain log was fitted to it (as ``report`` places it: ``place_on_file``). TrtexecError (one
    line) when it cannot be read or placed; ``LogStartError`` for a bad ``--log-start``. Nothing for
    a source that is not a replay (``--trtexec`` is refused there)."""
    if not isinstance(source, ReplaySource):
        return [], None
    trtexec = config.trtexec or kept_output(source.path)
    if trtexec is None:
        return [], None
    tz = parse_tz(config.tz)
    run = read_trtexec(trtexec, tz, config.trtexec_offset)
    log_start = None if config.log_start is None else parse_log_start(config.log_start, tz)
    fit = log_start is None and given_interval_ms(config) is None
    span = index_span(source.index, source.path, gpu_loads=fit)
    placed = placement(run, trtexec, span, tz, log_start, fit=fit)
    return trtexec_records_among(run, placed.log_start - span.first_mono, source.index.monos), placed.note
