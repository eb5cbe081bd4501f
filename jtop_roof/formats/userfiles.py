"""The files users name, as hostile ground. Reading (config, themes, workloads, trtexec logs): only
a regular file of at most ``MAX_FILE_BYTES`` is read (a FIFO, ``/dev/zero`` or a directory is
refused without blocking), YAML only through the safe loader, and a document whose aliases would
expand past ``MAX_YAML_NODES`` nodes (a "billion laughs") is refused before it is built. Writing
(``create_output``): never through a symbolic link, never into a FIFO, a device or another user's file,
never over the command's own input (standard input's own file for ``-``); ``-`` is
standard output."""

from __future__ import annotations

import errno
import os
import reprlib
import select
import stat
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from jtop_roof.model.errors import UserError

if TYPE_CHECKING:  # imported where a file is read: `parse` and `--help` start without it
    import yaml

#: Config and theme files are small; anything larger is not one.
MAX_FILE_BYTES = 1 << 20
#: Nodes a YAML document may hold once its aliases are expanded.
MAX_YAML_NODES = 100_000
_SHOWN_CHARS = 60


def shown(value: Any) -> str:
    """``repr`` of a bad value for a one-line message: bounded work and length, whatever its size or
    nesting (a YAML alias bomb expands to 10^9 items if printed in full)."""
    text = _REPR.repr(value)
    return text if len(text) <= _SHOWN_CHARS else text[: _SHOWN_CHARS - 3] + "..."


_REPR = reprlib.Repr()
_REPR.maxlevel, _REPR.maxstring, _REPR.maxother = 3, _SHOWN_CHARS, _SHOWN_CHARS
_REPR.maxlist = _REPR.maxtuple = _REPR.maxdict = _REPR.maxset = 4


class YamlError(UserError):
    """A YAML document that cannot be used; the text reads ``" at line N: problem"`` or
    ``": problem"``, to follow the file's name in a one-line message."""


def yaml_error_text(exc: yaml.YAMLError) -> str:
    """``" at line N: problem"``: where a YAML file is broken, for a one-line message."""
    mark = getattr(exc, "problem_mark", None)
    where = f" at line {mark.line + 1}" if mark is not None else ""
    return f"{where}: {getattr(exc, 'problem', None) or 'invalid YAML'}"


def _check_expanded_size(root: yaml.Node) -> None:
    """Refuse a node graph that is recursive or that would build more than MAX_YAML_NODES objects.
    Aliases share nodes, so sizes are summed over a memo by node: linear in the nodes composed."""
    import yaml

    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        if isinstance(node, yaml.MappingNode):
            children: list[yaml.Node] = [n for pair in node.value for n in pair]
        elif isinstance(node, yaml.SequenceNode):
            children = list(node.value)
        else:
            sizes[key] = 1
            continue
        where = f" at line {node.start_mark.line + 1}"
        if children_done:
            open_nodes.discard(key)
            sizes[key] = 1 + sum(sizes[id(child)] for child in children)
            if sizes[key] > MAX_YAML_NODES:
                raise YamlError(f"{where}: more than {MAX_YAML_NODES:,} values once aliases are expanded")
        elif key in open_nodes:
            raise YamlError(f"{where}: an alias refers to a collection that contains it")
        elif key not in sizes:
            open_nodes.add(key)
            stack.append((node, True))
            stack.extend((child, False) for child in children if id(child) not in sizes)


def load_yaml(text: str) -> Any:
    """``yaml.safe_load`` that refuses alias bombs and recursive aliases before building anything,
    and turns every failure (broken syntax, an int of 5,000 digits, a 13th month, nesting deeper
    than the interpreter's stack) into YamlError."""
    import yaml

    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _check_expanded_size(node)
        return loader.construct_document(node)
    except yaml.YAMLError as exc:
        raise YamlError(yaml_error_text(exc)) from None
    except RecursionError:
        raise YamlError(": nested too deeply") from None
    except (ValueError, OverflowError, TypeError) as exc:
        if isinstance(exc, YamlError):
            raise
        raise YamlError(f": a value cannot be read: {shown(str(exc))[1:-1]}") from None
    finally:
        loader.dispose()


def read_small_file(path: Path, max_bytes: int = MAX_FILE_BYTES) -> str:
    """The UTF-8 text of a regular file of at most ``max_bytes``. Opened without blocking, so a FIFO
    without a writer, ``/dev/zero`` or a directory is refused at once instead of hanging or growing.
    Raises OSError (``strerror`` says why) or UnicodeDecodeError."""
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
    fd = os.open(path, flags)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = "a directory" if stat.S_ISDIR(info.st_mode) else "not a regular file"
            raise OSError(errno.EINVAL, kind)
        too_big = OSError(errno.EFBIG, f"larger than {max_bytes:,} bytes")
        if info.st_size > max_bytes:
            raise too_big
        chunks: list[bytes] = []
        size = 0
        while True:  # st_size can lie (procfs) or the file can grow: read no more than the cap
            chunk = os.read(fd, max_bytes + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
            if size > max_bytes:
                raise too_big
    finally:
        os.close(fd)
    return b"".join(chunks).decode("utf-8")


def wait_for_writer(fd: int) -> None:
    """Wait until a FIFO opened for reading without blocking has had a writer: one that wrote,
    or one that came and went. Read at once, a FIFO whose writer connects late reads as empty
    (no writer yet is an end of file); Linux reports neither POLLIN nor POLLHUP before a writer
    came, so the poll waits for one (a signal ends the wait)."""
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    while not poller.poll():
        pass


class OutputError(UserError):
    """A file jroof was asked to write that it must not (one line, exit 2)."""


#: ``--out -``: standard output, as ``-`` is standard input for the files read.
STDOUT = "-"
#: ``-`` where a file is read: standard input (spooled to a temporary file by the command line).
STDIN = "-"
#: A spool of standard input -> what standard input was (st_dev, st_ino) when it was spooled: an
#: output is compared with the input the user gave, not with the spool that stands for it.
_SPOOLED: dict[str, tuple[int, int]] = {}


def note_spooled(spool: str, origin: os.stat_result) -> None:
    """Say that ``spool`` holds standard input, which was ``origin`` (its ``fstat``)."""
    _SPOOLED[spool] = (origin.st_dev, origin.st_ino)


def forget_spooled(spool: str) -> None:
    """The spool is gone."""
    _SPOOLED.pop(spool, None)


def create_output(path: str | os.PathLike[str], *, inputs: Sequence[str | os.PathLike[str]] = (),
                  private: bool = False, append: bool = False, new: bool = False) -> int:
    """Open a file jroof writes besides a recording (``--out``, a figure, a workload's output) and
    return its descriptor; every such file is opened here. A new file is created with O_EXCL, mode
    0600 when ``private`` (a file written beside a recording unasked: as private as the recording),
    else 0644 less the umask (an output the user named). An existing one is opened without
    following a link and without blocking (a planted FIFO cannot hang the command), then must
    ``fstat`` as a regular file of this user, with one link, that other users cannot write, and
    none of the command's ``inputs`` (``-`` and its spool: standard input's own file); only then
    is it truncated (unless ``append``). ``new``: only a file that does not exist yet
    (FileExistsError otherwise). ``-`` (``STDOUT``) is standard output: a duplicate of its
    descriptor, written and closed as a file's would be. Raises OutputError (one line), or OSError
    for the rest."""
    name = os.fspath(path)
    if name == STDOUT:
        return _stdout_descriptor(inputs)
    flags = os.O_WRONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | (os.O_APPEND if append else 0)
    for _ in range(8):  # a path removed between the two opens is created again
        try:
            fd = os.open(name, flags | os.O_CREAT | os.O_EXCL, 0o600 if private else 0o644)
            created = True
        except FileExistsError:
            if new:
                raise
            try:
                fd = os.open(name, flags)
            except FileNotFoundError:
                continue
            except OSError as exc:
                raise _refused_open(name, exc) from None
            created = False
        except OSError as exc:
            raise _refused_open(name, exc) from None
        break
    else:
        raise OutputError(f"refusing to write {name}: it keeps appearing and vanishing")
    try:
        if not created:
            refuse_unsafe_output(os.fstat(fd), name, inputs)
            if not append:
                os.ftruncate(fd, 0)
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _refused_open(name: str, exc: OSError) -> Exception:
    """The one line for an output that could not be opened as it is (a link, a FIFO), else ``exc``."""
    if exc.errno == errno.ELOOP:
        return OutputError(f"refusing to write {name}: it is a symbolic link (not followed)")
    if exc.errno == errno.ENXIO:  # O_NONBLOCK|O_WRONLY on a FIFO nobody reads, or a device without one
        return OutputError(f"refusing to write {name}: it is not a regular file (a FIFO or a device)")
    return exc


def refuse_unsafe_output(info: os.stat_result, name: str, inputs: Sequence[str | os.PathLike[str]]) -> None:
    """OutputError unless an existing output (``info``: its ``fstat``) is a file jroof may write
    into: a regular file (a FIFO would hang the command or hand the data to its reader), this
    user's (a file planted by another user is theirs to read), not writable by other users (what
    is written could be changed under the user, or a descriptor held on it read), with no second
    name (a hard link planted to one of the user's files), and none of the command's ``inputs``.
    Group-writable is allowed: with the usual umask 002 and a group per user, it is the user's."""
    why = None
    if not stat.S_ISREG(info.st_mode):
        why = "it is not a regular file (" + _kind(info.st_mode) + ")"
    elif info.st_uid != os.geteuid():
        why = f"it belongs to another user (uid {info.st_uid})"
    elif info.st_mode & stat.S_IWOTH:
        mode = stat.S_IMODE(info.st_mode)
        why = f"any user can write it (mode {mode:04o}): chmod o-w it, or give a new path"
    elif info.st_nlink > 1:
        why = f"it has {info.st_nlink} names (hard links): give a new path"
    else:
        same = same_input(info, inputs)
        if same is not None:
            why = f"it is this command's input {same}"
    if why is not None:
        raise OutputError(f"refusing to write {name}: {why}")


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "not a file"


def same_input(info: os.stat_result, inputs: Sequence[str | os.PathLike[str]]) -> str | None:
    """The input of ``inputs`` that is the file ``info`` describes (by st_dev and st_ino: through
    links and hard links), as the user named it, else None. ``-``, and a spool of standard input,
    are standard input's own file, whatever it was (``report - --out X < X``)."""
    here = (info.st_dev, info.st_ino)
    for given in inputs:
        name = os.fspath(given)
        for shown, identity in _identities(name):
            if identity == here:
                return shown
    return None


def _identities(name: str) -> list[tuple[str, tuple[int, int]]]:
    found: list[tuple[str, tuple[int, int]]] = []
    spooled = _SPOOLED.get(name)
    if spooled is not None:
        found.append(("standard input", spooled))
    elif name == STDIN:
        origin = _stdin_identity()
        if origin is not None:
            found.append(("standard input", origin))
    if name != STDIN:
        try:
            info = os.stat(name)
        except (OSError, ValueError):  # it does not exist, or cannot be looked at
            return found
        found.append((name, (info.st_dev, info.st_ino)))
    return found


def _stdin_identity() -> tuple[int, int] | None:
    """Standard input's (st_dev, st_ino), or None where it has no descriptor."""
    try:
        info = os.fstat(sys.stdin.fileno())
    except (AttributeError, ValueError, OSError):
        return None
    return info.st_dev, info.st_ino


def refuse_stream_over_input(stream: IO[Any], what: str, inputs: Sequence[str | os.PathLike[str]]) -> None:
    """OutputError when ``stream`` (standard output, where a command writes without ``--out``) is
    one of ``inputs``: ``report run.jsonl >> run.jsonl`` would append the report to the recording,
    ``parse run.log >> run.log`` would read its own output for ever. A stream without a
    descriptor (tests) or a closed one is not looked at."""
    try:
        info = os.fstat(stream.fileno())
    except (AttributeError, ValueError, OSError):
        return
    if not stat.S_ISREG(info.st_mode):
        return
    same = same_input(info, inputs)
    if same is not None:
        raise OutputError(f"refusing to write {what}: it is this command's input {same}")


def _stdout_descriptor(inputs: Sequence[str | os.PathLike[str]]) -> int:
    """A duplicate of standard output's descriptor (closing it leaves standard output open), what
    Python holds for it written first so that the bytes keep their order; never when standard
    output is one of ``inputs`` (``report run.jsonl --out - >> run.jsonl`` would read its own
    output). OSError for a standard output without a descriptor."""
    stream = sys.stdout
    if stream is None:
        raise OutputError("cannot write standard output (--out -): it is closed")
    stream.flush()
    fd = stream.fileno()
    refuse_stream_over_input(stream, "standard output (--out -)", inputs)
    return os.dup(fd)
