"""The flight recorder: an append-only JSON Lines file that survives crashes, SSH drops and kill -9.

Format: a header line ``{"type":"header",...}`` then one ``model.record_to_json`` object per line.
Durability rules, and why:

* Each line goes out with one unbuffered ``os.write`` on an ``O_APPEND`` descriptor, so a line is
  never interleaved with another writer's, and everything written before a crash is in the file;
  only the line being written at that instant can be torn.
* A torn line is always followed by a newline before the next line (after a failed write, or when
  appending to a file that ends mid-line), so it damages only itself: readers skip a line that is
  not valid JSON, wherever it is.
* ``os.fsync`` runs at least every ``fsync_every_s`` seconds while there is unsynced data (on the
  next write, or from a small background thread when the stream stalls) and on ``close()``, which
  bounds what a power cut can take.
* An existing recording is appended to, never truncated: the new session starts with its own
  header line, so a header can appear mid-file and starts a new session (new clocks).
* A new file is created with ``O_CREAT | O_EXCL`` and mode 0600 (recordings name the host and the
  command line). An existing file is appended to only when it is a regular file of this user
  whose first line is a jroof header, and not the file being replayed (the header's ``file``):
  a symlink (``O_NOFOLLOW``), an empty, foreign or non-regular file is refused with OSError, so a
  planted link or FIFO never redirects a recording, and a replay never records into itself.
* A recording is locked (``flock``, exclusive) while it is recorded: a second recorder of the same
  file is refused (OSError) instead of interleaving a second session's lines with the first's,
  which readers would take as one session with its clock running back and forth.
* ``to_stdout`` records to standard output (``record -``), the same lines, each written as it
  comes: there is no file to create, lock, append to or check, and syncing is done only where
  standard output is a regular file (a pipe or a terminal has nothing to sync).
"""

from __future__ import annotations

import errno
import fcntl
import os
import stat
import threading
import time
from collections.abc import Callable
from typing import Any

import msgspec

import jtop_roof
from jtop_roof.formats.headers import bound_header, looks_like_header, parse_header_line, salvage_at
from jtop_roof.formats.userfiles import same_input
from jtop_roof.model.codec import json_line, record_to_json
from jtop_roof.model.records import SCHEMA_VERSION, Event, Record, Sample

#: What ``record`` takes for standard output, and a recording there is called.
STDOUT = "-"
# The first line of an existing file is read at most this far to recognise our header.
_HEADER_PROBE_BYTES = 1 << 16


class Recorder:
    """Writes one recording session. ``write`` may be called from any thread, at any time."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        header: dict[str, Any],
        *,
        fsync_every_s: float = 2.0,
        mono: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
        to_stdout: bool = False,
    ) -> None:
        if not fsync_every_s >= 0:
            raise ValueError("fsync_every_s must be >= 0")
        self.path = os.fspath(path)
        self._mono = mono
        self._wall = wall
        self._fsync_every_s = fsync_every_s
        self._lock = threading.Lock()
        self._torn = False  # the file does not end with a newline: start the next line on a fresh one
        self._dirty = False
        # (t_wall, t_mono, our monotonic clock) of the last sample written: markers and events are
        # stamped on the stream's own timeline, which is not ours when recording a replay or demo.
        self._stream_anchor: tuple[float | None, float, float] | None = None
        #: True when the lines go to standard output (``path`` is then only its name), not to a file.
        self.to_stdout = to_stdout
        fd, created = (os.dup(1), True) if self.to_stdout else _open_for_append(self.path)
        try:
            if not self.to_stdout:
                _lock(fd, self.path)
            size = 0 if created else _check_appendable(fd, self.path, header.get("file"))
            #: True when this session was appended after earlier content of the same file.
            self.appended = size > 0
            self._torn = size > 0 and os.pread(fd, 1, size - 1) != b"\n"
            full = {
                "type": "header",
                "schema": SCHEMA_VERSION,
                "app": "jroof-tui",
                "version": jtop_roof.__version__,
                "start_wall": wall(),
                "start_mono": mono(),
                **header,
            }
            full["type"] = "header"
            #: As written: every field bounded, what was cut said in its ``cut`` map.
            self.header = bound_header(full)
            self._fd: int | None = fd
            self._append(_encode(self.header))
            _fsync(fd)
        except BaseException:
            os.close(fd)
            self._fd = None
            raise
        if not self.appended and not self.to_stdout:
            _fsync_directory_of(self.path)
        self._last_sync = mono()
        self._closing = threading.Event()
        self._syncer: threading.Thread | None = None
        if fsync_every_s > 0:
            self._syncer = threading.Thread(target=self._sync_while_idle, name="jroof-recorder-fsync",
                                            daemon=True)
            self._syncer.start()

    @property
    def closed(self) -> bool:
        return self._fd is None

    def write(self, record: Record) -> bool:
        """Append one record as one line. False (nothing written) once the recording is closed.

        Raises ``OSError`` when the file cannot be written (disk full, I/O error); a later write
        may succeed and starts on a fresh line."""
        data = _encode(record_to_json(record))
        with self._lock:
            if self._fd is None:
                return False
            self._append(data)
            if isinstance(record, Sample) and record.t_mono is not None:
                self._stream_anchor = (record.t_wall, record.t_mono, self._mono())
            self._dirty = True
            if self._mono() - self._last_sync >= self._fsync_every_s:
                self._sync_locked()
        return True

    def write_event(self, kind: str, detail: str) -> Event:
        """Record something about the stream itself (``note``, ``source_error``...) stamped now."""
        event = Event(kind, detail, *self.stream_now())
        self.write(event)
        return event

    def stream_now(self) -> tuple[float | None, float]:
        """(t_wall, t_mono) of "now" on the recorded stream's timeline: the last sample's times
        plus the time elapsed since it was written. For a live source this is our own clock; for
        a replay or the demo it keeps markers between the samples they were made among."""
        with self._lock:
            anchor = self._stream_anchor
        if anchor is None:
            return self._wall(), self._mono()
        wall, mono, written_at = anchor
        elapsed = self._mono() - written_at
        return (None if wall is None else wall + elapsed), mono + elapsed

    def close(self) -> None:
        """fsync and close; idempotent, and safe to call from any thread."""
        self._closing.set()
        if self._syncer is not None and self._syncer is not threading.current_thread():
            self._syncer.join()
        with self._lock:
            if self._fd is None:
                return
            fd, self._fd = self._fd, None
            try:
                _fsync(fd)
            finally:
                os.close(fd)

    def __enter__(self) -> Recorder:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _append(self, data: bytes) -> None:
        """Write a whole line; after a torn line, begin with a newline so the tear stays on its own."""
        assert self._fd is not None
        if self._torn:
            data = b"\n" + data
        view = memoryview(data)
        done = 0
        try:
            while done < len(data):
                done += os.write(self._fd, view[done:])
        finally:
            if done:
                self._torn = done < len(data)

    def _sync_locked(self) -> None:
        assert self._fd is not None
        _fsync(self._fd)
        self._dirty = False
        self._last_sync = self._mono()

    def _sync_while_idle(self) -> None:
        """Bound the unsynced window when the stream stalls and no write comes to do it."""
        while not self._closing.wait(self._fsync_every_s):
            with self._lock:
                if self._fd is None:
                    return
                if self._dirty and self._mono() - self._last_sync >= self._fsync_every_s:
                    try:
                        self._sync_locked()
                    except OSError:
                        # The next write or close() meets the same error and reports it.
                        pass


_encoder = msgspec.json.Encoder()


def _encode(obj: dict[str, Any]) -> bytes:
    """One compact JSON line by msgspec's encoder (NaN and infinities are null, as in
    ``model.json_line``; a float may print in another exponent form than ``json.dumps``'s, the
    same number). Text that cannot be UTF-8 (lone surrogates from undecodable bytes) or an integer
    past 64 bits takes ``json_line``, its surrogates as JSON escapes, still valid."""
    try:
        return _encoder.encode(obj) + b"\n"
    except (UnicodeEncodeError, OverflowError, TypeError):
        return json_line(obj).encode("utf-8", "backslashreplace")


def _fsync(fd: int) -> None:
    """``os.fsync``, where there is something to sync: standard output may be a pipe, a terminal or
    a socket (EINVAL), which hold nothing to make durable."""
    try:
        os.fsync(fd)
    except OSError as exc:
        if exc.errno != errno.EINVAL:
            raise


def same_file(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> bool:
    """True when both paths name one file (through symlinks and hard links: st_dev and st_ino);
    False when either does not exist."""
    try:
        first, second = os.stat(a), os.stat(b)
    except (OSError, ValueError):
        return False
    return (first.st_dev, first.st_ino) == (second.st_dev, second.st_ino)


def _open_for_append(path: str) -> tuple[int, bool]:
    """(descriptor, created): a new file (O_EXCL, 0600), else the existing one, never through a
    symlink; O_NONBLOCK so that a FIFO planted at the path cannot block the open (it is refused
    just after)."""
    flags = os.O_RDWR | os.O_APPEND | os.O_CLOEXEC | os.O_NOFOLLOW
    try:
        return os.open(path, flags | os.O_CREAT | os.O_EXCL, 0o600), True
    except FileExistsError:
        pass
    try:
        return os.open(path, flags | os.O_NONBLOCK), False
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise OSError(errno.ELOOP, "is a symbolic link; refusing to follow it", path) from None
        raise


def _lock(fd: int, path: str) -> None:
    """Hold the file for this recorder until its descriptor is closed; OSError when another holds
    it. A filesystem without locks (some network ones) records unlocked."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise OSError(errno.EWOULDBLOCK, "is being recorded by another jroof", path) from None
    except OSError as exc:
        if exc.errno not in (errno.ENOLCK, errno.EOPNOTSUPP):
            raise


def _check_appendable(fd: int, path: str, replayed: object) -> int:
    """Size of an existing file this recorder may append to; OSError naming the reason otherwise
    (FileExistsError for a file that is not a jroof recording)."""
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        raise OSError(errno.EINVAL, "is not a regular file; refusing to record into it", path)
    if isinstance(replayed, str) and same_input(info, [replayed]) is not None:  # a spool: stdin's file
        raise OSError(errno.EINVAL, "is the file being replayed; refusing to record into it", path)
    if info.st_uid != os.getuid():
        raise PermissionError(errno.EPERM, "belongs to another user; refusing to append to it", path)
    if info.st_size == 0 or not _starts_with_our_header(fd):
        raise FileExistsError(errno.EEXIST, "exists and is not a jroof recording; refusing to append to it",
                              path)
    os.set_blocking(fd, True)
    return info.st_size


def _starts_with_our_header(fd: int) -> bool:
    """The file's first line is our header: read whole up to ``_HEADER_PROBE_BYTES``, field by
    field past that (a header too long for a line, from a writer without ``bound_header``)."""
    probe = os.pread(fd, _HEADER_PROBE_BYTES, 0)
    if b"\n" in probe or len(probe) < _HEADER_PROBE_BYTES:
        header = parse_header_line(probe.split(b"\n", 1)[0])
    elif looks_like_header(probe):
        header = salvage_at(lambda size, at: os.pread(fd, size, at), 0)[0]
    else:
        return False
    return header is not None and header.get("type") == "header" and header.get("app") == "jroof-tui"


def _fsync_directory_of(path: str) -> None:
    """Make a new file's directory entry durable too; some filesystems cannot, which is fine."""
    try:
        dir_fd = os.open(os.path.dirname(os.path.abspath(path)), os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return
    try:
        os.fsync(dir_fd)
    except OSError:
        pass
    finally:
        os.close(dir_fd)
