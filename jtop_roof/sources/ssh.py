"""Live samples from tegrastats on another board, through the user's own ``ssh``.

``SshSource`` is a ``TegrastatsSource`` whose child is ``ssh [options] HOST <remote command>``: the
same restarts with back-off, hang detection, ``gap`` events, process-group cleanup and atexit hook
apply to the local ``ssh``. The ``ssh`` found on PATH runs with the user's ``~/.ssh/config``, keys,
agent and jump hosts; jroof only adds

* ``-T`` (no pty: stdout stays the tegrastats lines, stderr stays apart for the restart messages),
* ``-o BatchMode=yes`` (a key that is refused is a ``source_error`` naming the host and ssh's
  message, never a password prompt that hangs),
* ``-o ServerAliveInterval=N -o ServerAliveCountMax=M`` and ``-o ConnectTimeout=S``, so a dead link
  ends the local ``ssh`` (a restart, then a ``gap`` when samples resume) instead of a silent hang.

The remote tegrastats never outlives the connection. The remote command is a small POSIX ``sh``
wrapper (one line, no quotes or backslashes inside, so any login shell passes it on) that

1. kills the tegrastats of this source's previous connection if it still runs (its pid is kept in
   ``${XDG_RUNTIME_DIR:-/tmp}/jroof-ssh-UID-TOKEN.pid``, TOKEN being random per source, so two
   monitors of one board never touch each other's): a link that died without the board's sshd
   noticing leaves a tegrastats blocked on a full pipe, and the reconnect ends it;
2. starts the tegrastats command in the background and waits for it, while a watcher reads the
   channel's stdin: our end of it is a pipe held open and never written, so when the local
   ``ssh`` ends (``stop()``, SIGTERM, SIGHUP, even kill -9 of the monitor) the board's sshd closes
   it, the watcher reads EOF and sends SIGTERM (behind ``sudo``, sudo relays it). This is the
   hang-up a pty would give (``ssh -tt``), without mixing stderr into the samples. A tegrastats
   that is still writing dies of SIGPIPE at its next line anyway.

The local ``ssh`` runs behind the guard of ``children.spawn``, so it ends with the monitor however
the monitor ends, even while the board has not answered yet (when the channel's EOF reaches no one).
What ssh and the board write on stderr reaches messages only made printable.

``describe()`` reads the remote board over ssh (same host, same options): one ``sh`` loop prints
the world-readable files that ``sysfs.BoardFiles`` reads (each after a line with a random marker
and its path, at most 64 KiB each, 1 MiB in all, within ``describe_timeout_s``) and
``nvpmodel -q``; they are written into a private temporary tree and described by the same
``BoardFiles`` code as a local board (which refuses numbers past 64 bits as bad values). A failure
leaves those fields out and says why in ``hints``; ``stop()`` ends the read at once.
Clocks that a non-root tegrastats leaves out are not filled over ssh (the laptop's sysfs is not the
board's): the hints say to use ``sudo -n tegrastats`` on the board.
"""

from __future__ import annotations

import os
import re
import secrets
import shlex
import shutil
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path, PurePosixPath
from typing import Any

from jtop_roof.model.info import SourceInfo
from jtop_roof.model.metrics import printable
from jtop_roof.model.records import Sample
from jtop_roof.sources import children
from jtop_roof.sources.sysfs import BoardFiles, small_int
from jtop_roof.sources.tegrastats import FatalReason, TegrastatsSource, start_problem

#: ssh's exit status for its own errors (connection, authentication, configuration).
SSH_ERROR = 255
#: Bounds on what describe() takes from the board.
FILE_BYTES = 65536
DUMP_BYTES = 1 << 20

# What ssh says when retrying cannot help: a refused key, a changed or unknown host key, a bad
# option or config line. Anything else (refused, timed out, no route, reset) is a dropped link.
_FATAL_SSH = re.compile(
    r"Permission denied|Host key verification failed|REMOTE HOST IDENTIFICATION HAS CHANGED"
    r"|Too many authentication failures|Bad configuration option|Bad port|usage: ssh"
    r"|no argument after keyword|[Tt]erminating, \d+ bad configuration option",
)
# A name that never resolved is a typo; one that resolved before is a network that went away.
_UNKNOWN_HOST = re.compile(r"Could not resolve hostname")
_AUTH = re.compile(r"Permission denied|Too many authentication failures")
_HOST_KEY = re.compile(r"Host key verification failed|REMOTE HOST IDENTIFICATION HAS CHANGED")

# The remote wrapper: $1 token, $2 the program's name (to check a pid before killing it), then the
# command. One line, no single quotes or backslashes: it travels inside the user's login shell.
# Once the command runs, the shell's own stderr goes to /dev/null: with the link gone, a
# "Terminated" notice written to it would kill the shell by SIGPIPE before it removes the pid file.
_WRAPPER = (
    'pf="${XDG_RUNTIME_DIR:-/tmp}/jroof-ssh-$(id -u)-$1.pid"; prog="$2"; shift 2; '
    'if [ -r "$pf" ]; then old=$(cat "$pf" 2>/dev/null); case "$old" in ""|*[!0-9]*) ;; '
    '*) if grep -qaF -- "$prog" "/proc/$old/cmdline" 2>/dev/null; then kill -TERM "$old" 2>/dev/null; fi ;; '
    "esac; fi; "
    'exec 3<&0; "$@" & p=$!; exec 2>/dev/null; echo "$p" > "$pf"; '
    '{ read -r _ <&3; kill -TERM "$p" 2>/dev/null; } & w=$!; '
    'wait "$p"; s=$?; kill "$w" 2>/dev/null; '
    'if [ "$(cat "$pf" 2>/dev/null)" = "$p" ]; then rm -f "$pf"; fi; exit "$s"'
)

#: The files BoardFiles.describe() reads, relative to the board's root (globs allowed).
BOARD_FILES = (
    "proc/device-tree/model",
    "sys/class/devfreq/*/cur_freq",
    "sys/class/devfreq/*/max_freq",
    "sys/kernel/debug/bpmp/debug/clk/emc/max_rate",
    "sys/kernel/nvpmodel_clk_cap/emc",
    "sys/kernel/nvpmodel_emc_cap/emc_iso_cap",
    "sys/devices/system/cpu/cpu[0-9]*/cpufreq/cpuinfo_max_freq",
    "sys/class/thermal/thermal_zone*/type",
    "sys/class/thermal/thermal_zone*/trip_point_*_temp",
    "sys/class/thermal/thermal_zone*/trip_point_*_type",
    "var/lib/nvpmodel/status",
    "etc/nvpmodel.conf",
    "sys/devices/gpu.0/tpc_pg_mask",
    "sys/devices/platform/gpu.0/tpc_pg_mask",
)

# $1 the board's root, $2 the marker. Prints "MARK uid N", then "MARK file PATH" and the file for
# each readable file, "MARK nvpmodel" and its output (real root only), "MARK end".
_DUMP = (
    'cd "$1" || exit 3; m="$2"; echo "$m uid $(id -u)"; '
    f"for f in {' '.join(BOARD_FILES)}; do "
    'if [ -f "$f" ] && [ -r "$f" ]; then echo "$m file $f"; '
    f'head -c {FILE_BYTES} "$f" 2>/dev/null; echo; fi; done; '
    'if [ "$1" = / ]; then echo "$m nvpmodel"; nvpmodel -q 2>/dev/null | head -c 8192; echo; fi; '
    'echo "$m end"'
)


def ssh_options(alive_interval_s: int, alive_count: int, connect_timeout_s: int) -> list[str]:
    """The options jroof adds to the user's ssh: no pty, never a prompt, a dead link noticed."""
    return [
        "-T",
        "-o", "BatchMode=yes",
        "-o", f"ServerAliveInterval={alive_interval_s}",
        "-o", f"ServerAliveCountMax={alive_count}",
        "-o", f"ConnectTimeout={connect_timeout_s}",
    ]


def remote_command(script: str, *args: str) -> str:
    """The command string ssh hands to the board's login shell: ``exec sh -c SCRIPT jroof ARGS``."""
    return shlex.join(["exec", "sh", "-c", script, "jroof", *args])


def parse_dump(text: str, marker: str) -> tuple[dict[str, str], str | None, int | None, bool]:
    """(files by relative path, nvpmodel output or None, remote uid or None, complete) from the
    dump script's output. Paths that are absolute or climb out (``..``) are dropped."""
    chunks: dict[str, list[str]] = {}
    nvpmodel: list[str] | None = None
    uid: int | None = None
    complete = False
    current: list[str] | None = None
    for line in text.split("\n"):
        if not line.startswith(marker + " "):
            if current is not None:
                current.append(line)
            continue
        what = line[len(marker) + 1:]
        current = None
        if what.startswith("uid "):
            uid = small_int(what[4:])
        elif what.startswith("file "):
            rel = PurePosixPath(what[5:])
            if rel.parts and not rel.is_absolute() and ".." not in rel.parts:
                current = chunks[str(rel)] = []
        elif what == "nvpmodel":
            current = nvpmodel = []
        elif what == "end":
            complete = True
    files = {path: "\n".join(lines) for path, lines in chunks.items()}
    return files, None if nvpmodel is None else "\n".join(nvpmodel), uid, complete


def describe_files(files: dict[str, str], nvpmodel: str | None) -> dict[str, Any]:
    """``BoardFiles.describe()`` of a board given as file contents (and its ``nvpmodel -q``)."""
    with tempfile.TemporaryDirectory(prefix="jroof-board-") as tmp:
        root = Path(tmp)
        for rel, text in files.items():
            path = root / rel
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text)
            except OSError:
                continue
        answer = nvpmodel or None
        board = BoardFiles(root, run=lambda command: answer if command == ["nvpmodel", "-q"] else None)
        return board.describe()


def _last_words(message: str) -> str:
    """ssh's most telling line: the last non-empty one, at most 300 characters, made printable
    (the board's stderr may hold escape sequences meant for our terminal)."""
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    return printable(lines[-1][-300:]) if lines else ""


class SshSource(TegrastatsSource):
    """tegrastats on ``host`` through ``ssh``; see the module docstring.

    ``command``: the tegrastats command as run on the board (``["sudo", "-n", "tegrastats"]``).
    ``ssh``: the ssh program (default: ``ssh`` on PATH). ``ssh_args``: extra ssh arguments placed
    before ours (e.g. ``["-p", "2222"]``; normally the user's ``~/.ssh/config`` says it all).
    ``remote_root``: where the board's files are on the board (tests). Other keywords as for
    ``TegrastatsSource`` (``hang_timeout_s`` defaults to three intervals, at least 15 s, since the
    first line also waits for the connection)."""

    def __init__(
        self,
        host: str,
        command: Sequence[str],
        interval_ms: int,
        *,
        ssh: str = "ssh",
        ssh_args: Sequence[str] = (),
        alive_interval_s: int = 5,
        alive_count: int = 3,
        connect_timeout_s: int = 10,
        describe_timeout_s: float = 20.0,
        remote_root: str = "/",
        hang_timeout_s: float | None = None,
        is_root: bool | None = None,
        **kwargs: Any,
    ) -> None:
        if not host or host.startswith("-") or any(c.isspace() for c in host):
            raise ValueError(f"not an ssh host: {host!r}")
        if hang_timeout_s is None:
            hang_timeout_s = max(3 * int(interval_ms) / 1000, 15.0)
        via_sudo = bool(command) and os.path.basename(command[0]) == "sudo"
        super().__init__(
            command, interval_ms, hang_timeout_s=hang_timeout_s, sysfs_root=None,
            is_root=bool(is_root) or via_sudo, **kwargs,
        )
        self.host = host
        self.name = f"tegrastats on {host}"
        self.ssh = ssh
        self.ssh_args = list(ssh_args)
        self._options = ssh_options(alive_interval_s, alive_count, connect_timeout_s)
        self._describe_timeout_s = describe_timeout_s
        self._remote_root = remote_root
        self._root_known = is_root is not None or via_sudo
        self._token = secrets.token_hex(8)
        self._served = False  # a line ever came through: the host and the login are right

    # -- the child -----------------------------------------------------------------------------

    def ssh_argv(self, remote: str) -> list[str]:
        """``ssh [user's extra args] [our options] -- HOST REMOTE``."""
        return [self.ssh, *self.ssh_args, *self._options, "--", self.host, remote]

    def _argv(self) -> list[str]:
        program = os.path.basename(self.command[0]) if self.command else "tegrastats"
        remote = remote_command(
            _WRAPPER, self._token, program, *self.command, "--interval", str(self.interval_ms)
        )
        return self.ssh_argv(remote)

    def _fill(self, sample: Sample) -> None:
        """Nothing to fill (this machine's sysfs is not the board's); notes that the link works."""
        self._served = True

    def _start_error(self, exc: OSError) -> str:
        return f"cannot watch {self.host} over ssh: {start_problem(self.ssh, exc)}"

    def _exit_message(self, code: int, message: str) -> str:
        words = _last_words(message)
        if code == SSH_ERROR:
            if _FATAL_SSH.search(message) or (not self._served and _UNKNOWN_HOST.search(message)):
                return FatalReason(self.refusal(words))
            return f"ssh {self.host}: connection lost" + (f": {words}" if words else "")
        if code == 127:
            shown = shlex.join(self.command)
            return FatalReason(f"cannot run {shown} on {self.host}: {words or 'command not found'}")
        return super()._exit_message(code, message)

    def refusal(self, words: str) -> str:
        """The one line for a connection that retrying cannot fix."""
        fix = ""
        if _AUTH.search(words):
            fix = (" (jroof runs ssh with BatchMode=yes and never asks for a password: load the key "
                   f"into ssh-agent or name it in ~/.ssh/config, then check with `ssh {self.host} true`)")
        elif _HOST_KEY.search(words):
            fix = f" (connect once with plain `ssh {self.host}` to check and accept the board's host key)"
        return f"cannot connect to {self.host} over ssh: {words or 'ssh failed'}{fix}"

    # -- identity ------------------------------------------------------------------------------

    def describe(self) -> SourceInfo:
        info: dict[str, Any] = {
            "source": self.kind,
            "interval_ms": self.interval_ms,
            "command": self.command,
            "ssh_host": self.host,
        }
        board, problem = self.read_board()
        info.update(board)
        info["hints"] = self.remote_hints(
            problem, power_mode_known="power_mode" in board or "power_mode_id" in board
        )
        return SourceInfo.from_mapping(info)

    def read_board(self) -> tuple[dict[str, Any], str | None]:
        """The remote board's ``BoardFiles.describe()`` keys, and what went wrong (or None)."""
        if self._stop.is_set():
            return {}, "stopped before it answered"
        marker = "@@jroof-" + secrets.token_hex(8)
        argv = self.ssh_argv(remote_command(_DUMP, self._remote_root, marker))
        try:
            code, out, err = children.run_bounded(argv, self._describe_timeout_s, DUMP_BYTES, self._stop)
        except OSError as exc:
            return {}, self._start_error(exc)
        files, nvpmodel, uid, complete = parse_dump(out.decode("utf-8", "replace"), marker)
        if uid is not None and not self._root_known:
            self._is_root = uid == 0
        board = describe_files(files, nvpmodel) if files or nvpmodel else {}
        if code is None:
            if self._stop.is_set():
                return board, "stopped before it answered"
            return board, f"no answer within {self._describe_timeout_s:g} s"
        if not complete:
            words = _last_words(err.decode("utf-8", "replace"))
            if code == SSH_ERROR:
                return board, f"ssh failed: {words}" if words else "ssh failed"
            return board, f"exit status {code}" + (f": {words}" if words else "")
        return board, None

    def remote_hints(self, problem: str | None, *, power_mode_known: bool) -> list[str]:
        hints: list[str] = []
        if problem is not None:
            hints.append(
                f"Could not read the board files of {self.host} over ssh ({problem}): model, power "
                "mode, clocks and trip points are unknown."
            )
        if not self._is_root:
            hints.append(
                f"GPU and EMC clocks need root on {self.host}: add a sudoers rule there and run with "
                "--tegrastats-command 'sudo -n tegrastats', see README. Over ssh, clocks tegrastats "
                "leaves out are not filled from the board's sysfs."
            )
        if problem is None and not power_mode_known:
            hints.append(f"Power mode unknown: nvpmodel -q and /var/lib/nvpmodel/status on {self.host} "
                         "gave nothing.")
        return hints


def ssh_available(ssh: str = "ssh") -> bool:
    """True when the ssh client is on PATH."""
    return shutil.which(ssh) is not None


def ssh_sources(
    hosts: Iterable[str], command: Sequence[str], interval_ms: int, **kwargs: Any
) -> list[SshSource]:
    """One source per board (``--ssh a --ssh b``), in the order given, duplicates dropped."""
    seen: dict[str, None] = dict.fromkeys(hosts)
    return [SshSource(host, command, interval_ms, **kwargs) for host in seen]


def board_label(host: str) -> str:
    """A short name for a board in a header line or a metric label: ``user@jetson:22`` -> ``jetson``."""
    name = host.rsplit("@", 1)[-1]
    if name.startswith("ssh://"):
        name = name[len("ssh://"):].rsplit("@", 1)[-1]
    return name.split(":", 1)[0] if name.count(":") == 1 else name


def board_record_path(path: str, host: str) -> str:
    """Where one board of several records: ``run1.jsonl`` -> ``run1.jetson.jsonl`` (the label made
    safe for a file name)."""
    label = re.sub(r"[^A-Za-z0-9._-]", "_", board_label(host)).strip(".") or "board"
    target = Path(path)
    suffix = target.suffix or ".jsonl"
    return str(target.with_name(f"{target.stem if target.suffix else target.name}.{label}{suffix}"))


__all__ = [
    "BOARD_FILES",
    "SshSource",
    "board_label",
    "board_record_path",
    "describe_files",
    "parse_dump",
    "remote_command",
    "ssh_available",
    "ssh_options",
    "ssh_sources",
]
