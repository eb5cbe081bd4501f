"""The files users name, as hostile ground. Reading (config, themes, workloads, trtexec logs): only
a regular file of at most ``MAX_FILE_BYTES`` is read (a FIFO, ``/dev/zero`` or a directory is
refused without blocking), YAML only through the safe loader, and a document whose aliases would
expand past ``MAX_YAML_NODES`` nodes (a "billion laughs") is refused before it is built. Writing
(``create_output``): never through a symbolic link, never over the command's own input; ``-`` is
standard output."""

from __future__ import annotations

import errno
import os
import reprlib
import stat
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

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


class OutputError(UserError):
    """A file jroof was asked to write that it must not (one line, exit 2)."""


#: ``--out -``: standard output, as ``-`` is standard input for the files read.
STDOUT = "-"


def create_output(path: str | os.PathLike[str], *, inputs: Sequence[str | os.PathLike[str]] = (),
                  private: bool = False, append: bool = False, new: bool = False) -> int:
    """Open a file jroof writes besides a recording (``--out``, a figure, a workload's output) and
    return its descriptor. Never through a symbolic link (another user's link in a shared folder
    cannot redirect it), never over one of the command's own ``inputs``, created with mode 0600
    when ``private`` (a file written beside a recording unasked: as private as the recording),
    else 0644 less the umask (an output the user named). ``new``: only a file that does not exist
    yet (O_EXCL; FileExistsError otherwise). ``-`` (``STDOUT``) is standard output: a duplicate of
    its descriptor, written and closed as a file's would be. Raises OutputError, or OSError for
    the rest."""
    name = os.fspath(path)
    if name == STDOUT:
        return _stdout_descriptor(inputs)
    for given in inputs:
        if _same_file(name, os.fspath(given)):
            raise OutputError(f"refusing to write {name}: it is this command's input {os.fspath(given)}")
    flags = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC | (os.O_APPEND if append else os.O_TRUNC)
    if new:
        flags |= os.O_EXCL
    try:
        return os.open(name, flags, 0o600 if private else 0o644)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise OutputError(f"refusing to write {name}: it is a symbolic link (not followed)") from None
        raise


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
    here = os.fstat(fd)
    for given in (os.fspath(each) for each in inputs):
        if given != STDOUT and _same_stat(here, given):
            raise OutputError(f"refusing to write standard output (--out -): it is this command's "
                              f"input {given}")
    return os.dup(fd)


def _same_stat(here: os.stat_result, name: str) -> bool:
    try:
        return os.path.samestat(here, os.stat(name))
    except OSError:  # it does not exist, or cannot be looked at: not the same file
        return False


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist (yet): not the same file
        return False
