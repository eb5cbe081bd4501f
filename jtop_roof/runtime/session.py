"""What a monitoring session is made of: the source chosen from the config, and the recording header.

Shared by the TUI and the headless ``record`` command so both pick sources and write headers the
same way. Nothing here imports Textual.
"""

from __future__ import annotations

import os
import shutil
import socket
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import tzinfo
from pathlib import Path
from typing import Any

from jtop_roof.formats.recorder import Recorder
from jtop_roof.model.errors import UserError
from jtop_roof.runtime.config import Config
from jtop_roof.sources.base import Source

HOST_HINT = (
    "no tegrastats on PATH: showing this host (psutil/NVML); "
    "`jroof-tui --source demo` shows a real Jetson recording"
)


class SessionError(UserError):
    """A user-facing problem with the requested source (one line, exit code 2)."""


def tegrastats_available(command: tuple[str, ...]) -> bool:
    """True when the command (and tegrastats itself, if behind sudo or env) is on PATH."""
    program = next((part for part in command if Path(part).name == "tegrastats"), command[0])
    return shutil.which(command[0]) is not None and shutil.which(program) is not None


def resolve_source_kind(config: Config, replay: str | None) -> tuple[str, str | None]:
    """Return (kind, hint). ``auto`` picks tegrastats when it is on PATH, else host with a hint."""
    if config.ssh_hosts:
        if replay is not None or config.source not in ("auto", "tegrastats"):
            given = "--replay" if replay is not None else "--source " + config.source
            raise SessionError(f"--ssh watches live boards: it cannot go with {given}")
        return "ssh", None
    if replay is not None:
        return "replay", None
    if config.source != "auto":
        return config.source, None
    if tegrastats_available(config.tegrastats_command):
        return "tegrastats", None
    return "host", HOST_HINT


def make_source(config: Config, kind: str, replay: str | None, *, interactive: bool = False) -> Source:
    """Build the source; raises SessionError for a file that cannot be read or a bad zone.

    ``interactive``: a replay for the TUI waits at its end for a seek instead of ending."""
    from jtop_roof.model.timeline import parse_tz

    try:
        tz = parse_tz(config.tz)
    except ValueError as exc:
        raise SessionError(str(exc)) from None
    return SOURCE_BUILDERS[kind](SourceRequest(config, replay, interactive, tz))


@dataclass(frozen=True)
class SourceRequest:
    """What a source is built from: the config, ``--replay FILE``, whether a screen shows it (a
    replay then waits at its end for a seek), and the zone of the stamps."""

    config: Config
    replay: str | None
    interactive: bool
    tz: tzinfo


def _replay(request: SourceRequest) -> Source:
    from jtop_roof.formats.logfile import RecordingError
    from jtop_roof.runtime.inputs import fitted_interval_s, given_interval_ms
    from jtop_roof.sources.replay import ReplaySource

    config, replay = request.config, request.replay
    assert replay is not None
    try:
        # The interval wins over a log's stamps only where the user set one (Config's default is
        # no one's: a stamped log's own interval then stands); a plain log fitted to trtexec's run
        # is spaced at the fitted interval, as ``report`` reads it.
        return ReplaySource(replay, speed=config.speed, interval_ms=given_interval_ms(config),
                            interval_s=fitted_interval_s(config, replay, request.tz), tz=request.tz,
                            follow=config.follow, hold_at_end=request.interactive,
                            tz_given=config.tz is not None)
    except OSError as exc:
        raise SessionError(f"cannot replay {replay}: {exc.strerror or exc}") from None
    except RecordingError as exc:
        raise SessionError(f"cannot replay {exc}") from None


def _demo(request: SourceRequest) -> Source:
    from jtop_roof.sources.demo import DemoSource

    return DemoSource(speed=request.config.speed)


def _ssh(request: SourceRequest) -> Source:
    from jtop_roof.sources.ssh import SshSource, ssh_available

    config = request.config
    if not ssh_available():
        raise SessionError("--ssh needs the OpenSSH client: no ssh on PATH")
    if len(config.ssh_hosts) > 1:
        raise SessionError("several --ssh boards: the monitor watches them together; `record` and "
                           "`serve` take one board each (run one per board)")
    try:
        return SshSource(config.ssh_hosts[0], list(config.tegrastats_command), config.interval_ms,
                         backoff=config.restart_backoff_s)
    except ValueError as exc:
        raise SessionError(str(exc)) from None


def _tegrastats(request: SourceRequest) -> Source:
    config = request.config
    if not tegrastats_available(config.tegrastats_command):
        raise SessionError(
            f"cannot run {' '.join(config.tegrastats_command)!r}: not found on PATH "
            "(use --source host or --source demo on a machine without tegrastats)"
        )
    from jtop_roof.sources.power import PoweredSource, board_meters
    from jtop_roof.sources.processes import ProcessSampler
    from jtop_roof.sources.tegrastats import TegrastatsSource

    root = config.sysfs_root
    source = TegrastatsSource(list(config.tegrastats_command), config.interval_ms,
                              backoff=config.restart_backoff_s, sysfs_root=root)
    return PoweredSource(source, lambda: board_meters(root), config.power_hz, root=root,
                         fallback="energy comes from tegrastats' rails at its interval",
                         beside=[ProcessSampler()])


def _host(request: SourceRequest) -> Source:
    from jtop_roof.sources.host import HostSource
    from jtop_roof.sources.power import PoweredSource
    from jtop_roof.sources.processes import ProcessSampler

    config = request.config
    source = HostSource(config.interval_ms, sysfs_root=config.sysfs_root)
    return PoweredSource(source, lambda: source.power_meters(config.sysfs_root), config.power_hz,
                         root=config.sysfs_root, fallback="power comes from the samples at their interval",
                         beside=[ProcessSampler(gpu_memory=source.gpu_process_memory)])


#: Every kind of source by name: a new source is a module under ``sources/`` and one line here
#: (and its name in ``config.SOURCES`` when users pick it with ``--source``).
SOURCE_BUILDERS: dict[str, Callable[[SourceRequest], Source]] = {
    "tegrastats": _tegrastats, "host": _host, "demo": _demo, "replay": _replay, "ssh": _ssh,
}


def make_sources(config: Config, kind: str, replay: str | None, *, interactive: bool = False) -> list[Source]:
    """The monitor's sources: one per board with several ``--ssh``, else ``make_source``'s one."""
    if kind == "ssh" and len(config.ssh_hosts) > 1:
        from jtop_roof.sources.ssh import SshSource

        try:
            return [SshSource(host, list(config.tegrastats_command), config.interval_ms,
                              backoff=config.restart_backoff_s) for host in config.ssh_hosts]
        except ValueError as exc:
            raise SessionError(str(exc)) from None
    return [make_source(config, kind, replay, interactive=interactive)]


def record_paths(path: str, sources: Sequence[Source]) -> list[str]:
    """Where each board records: ``path`` for one; ``run1.orin.jsonl``... for several (ssh)."""
    if len(sources) == 1:
        return [path]
    from jtop_roof.sources.ssh import SshSource, board_record_path

    return [board_record_path(path, s.host) if isinstance(s, SshSource) else f"{path}.{i}"
            for i, s in enumerate(sources)]


def build_header(source: Source, config: Config) -> dict[str, Any]:
    """The recording header: schema, identity, clocks and everything replay needs to judge data."""
    from jtop_roof.model.timeline import local_tz_name

    # The Recorder adds type, schema, app, version and the start clocks.
    header: dict[str, Any] = {
        "tz": config.tz or local_tz_name(),
        "interval_ms": config.interval_ms,
        "host": socket.gethostname(),
        "command": list(sys.argv),
    }
    if source.kind == "tegrastats":
        header["tegrastats_command"] = list(config.tegrastats_command)
    # What the user said of the board wins over what the source found, and is kept for replay.
    if config.device is not None:
        header["device"] = config.device
    if config.power_mode is not None:
        header["power_mode"] = config.power_mode
    info = source.describe()
    for key, value in info.header.items():
        header.setdefault(key, value)
    if info.interval_ms is not None:
        header["interval_ms"] = info.interval_ms  # the stream's own (a replayed 100 ms log, say)
    return anonymized(header) if config.anonymize else header


#: What a header says of who recorded it and where: left out by ``--anonymize``.
IDENTIFYING_KEYS = ("host", "command", "tegrastats_command", "ssh_host")


def anonymized(header: dict[str, Any]) -> dict[str, Any]:
    """The header without the host name, the command line and any path (a replayed file's own)."""
    return {key: value for key, value in header.items()
            if key not in IDENTIFYING_KEYS and not (isinstance(value, str) and value.startswith(("/", "~")))}


def open_recording(path: str, source: Source, config: Config) -> Recorder:
    """Open an append-only recording with this session's header. A file that is already there is
    appended to only when this program can read it back: one of our recordings, of a schema it
    reads (else SessionError: appending would make the whole file unreadable, or mix formats)."""
    from jtop_roof.formats.logfile import RecordingError, check_header, read_header

    if os.path.isfile(path) and os.path.getsize(path) > 0:
        try:
            header = read_header(path)
            if header is None:
                raise SessionError(f"{path} is not a jroof recording: record to another file")
            check_header(header, f"{path}: ")
        except RecordingError as exc:
            raise SessionError(f"cannot append to {exc}; record to another file") from None
    return Recorder(path, build_header(source, config))


def auto_record_path(config: Config) -> str:
    """Where the record key writes when no --record FILE was given."""
    name = time.strftime("jroof-%Y%m%d-%H%M%S.jsonl")
    return str(Path(config.record_dir).expanduser() / name)


#: The probe samples clocks faster than the monitor draws them.
PROBE_INTERVAL_MS = 100


def probe_source_factory(
    config: Config | None = None, interval_ms: int = PROBE_INTERVAL_MS
) -> Callable[[], Source]:
    """This machine's source as the monitor would pick it: tegrastats when on PATH (with the
    config's command), else the host source (NVML, psutil), at ``interval_ms``. The probe
    measures this machine: a config's ``source: demo`` (a replay, a remote board) counts as auto;
    ``source: tegrastats`` without tegrastats on PATH is a ProbeError."""
    from jtop_roof.roofline.measured import ProbeError
    from jtop_roof.sources.host import HostSource

    kind = "auto" if config is None or config.source not in ("tegrastats", "host") else config.source
    command = ("tegrastats",) if config is None else tuple(config.tegrastats_command)
    if kind in ("auto", "tegrastats"):
        if tegrastats_available(command):
            from jtop_roof.sources.tegrastats import TegrastatsSource

            return lambda: TegrastatsSource(list(command), interval_ms)
        if kind == "tegrastats":
            raise ProbeError(f"cannot run {' '.join(command)!r}: not found on PATH")
    return lambda: HostSource(interval_ms)
