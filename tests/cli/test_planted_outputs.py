"""A file planted where jroof writes an output (``--out``, ``plot``'s default PNG, ``run``'s
``FILE.out``) is never written into: a FIFO would hand the data to whoever reads it (or hang the
command), another user's file or a world-writable one would let another user read or change it,
and a hard link would reach one of the user's other files. Each is refused in one line (exit 2)
and left as it was; a new file is created, an ordinary file of the user's is replaced."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from cli_support import jroof
from paths import TESTS

from jtop_roof.formats.userfiles import OutputError, create_output
from jtop_roof.runtime.child import Child

LOG = TESTS / "data" / "logfile" / "agxorin_jp6_500ms.log"
OLD = b"the user's own bytes\n"


def fifo_with_a_reader(path: Path) -> int:
    """A FIFO at ``path`` that another process holds open for reading (the attacker's ``cat``):
    an open for writing succeeds at once, and what is written goes to the reader."""
    os.mkfifo(path)
    return os.open(path, os.O_RDONLY | os.O_NONBLOCK)


def world_writable(path: Path) -> None:
    path.write_bytes(OLD)
    path.chmod(0o666)


def hard_linked(path: Path) -> None:
    """``path`` is a second name of another file of the user's (``~/.bashrc`` in an attack)."""
    other = path.parent / "elsewhere.txt"
    other.write_bytes(OLD)
    os.link(other, path)


PLANTS: dict[str, Callable[[Path], None]] = {"world-writable": world_writable, "hard link": hard_linked}


@pytest.fixture
def planted(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[[Path], Callable[[], None]]]:
    """Plant ``request.param`` at a path; returns a check that it was left as it was."""
    readers: list[int] = []

    def plant(path: Path) -> Callable[[], None]:
        if request.param == "fifo":
            reader = fifo_with_a_reader(path)
            readers.append(reader)

            def fifo_untouched() -> None:
                assert stat.S_ISFIFO(os.lstat(path).st_mode)
                try:
                    data = os.read(reader, 1 << 16)  # b"": a writer came and went
                except BlockingIOError:  # no writer came
                    data = b""
                assert data == b"", data[:80]
            return fifo_untouched
        PLANTS[request.param](path)

        def untouched() -> None:
            assert path.read_bytes() == OLD
        return untouched

    yield plant
    for reader in readers:
        os.close(reader)


ALL_PLANTS = ["fifo", "world-writable", "hard link"]


@pytest.mark.parametrize("planted", ALL_PLANTS, indirect=True)
@pytest.mark.parametrize(("out", "command"), [
    ("r.md", ("report", str(LOG), "--tz", "UTC", "--out", "r.md")),
    ("r.csv", ("export", str(LOG), "--tz", "UTC", "--out", "r.csv")),
    ("r.parquet", ("export", str(LOG), "--tz", "UTC", "--out", "r.parquet")),
    ("c.md", ("compare", str(LOG), str(LOG), "--tz", "UTC", "--out", "c.md")),
    ("f.svg", ("plot", str(LOG), "--tz", "UTC", "--out", "f.svg")),
    ("agxorin_jp6_500ms.png", ("plot", str(LOG), "--tz", "UTC")),  # plot's default figure
])
def test_a_planted_output_is_refused_in_one_line_and_left_alone(tmp_path, planted, out, command):
    if command[0] == "export" and out.endswith("parquet"):
        pytest.importorskip("pyarrow")
    if command[0] == "plot":
        pytest.importorskip("matplotlib")
    untouched = planted(tmp_path / out)
    result = jroof(*command, cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"jroof-tui: error: refusing to write {out}: "), lines
    untouched()


@pytest.mark.parametrize("planted", ALL_PLANTS, indirect=True)
@pytest.mark.parametrize("append", [False, True])
def test_the_one_opener_refuses_each_plant(tmp_path, planted, append):
    """Every output goes through ``create_output``: appending (``run``'s ``FILE.out``) and
    replacing alike."""
    untouched = planted(tmp_path / "x.out")
    with pytest.raises(OutputError, match=r"^refusing to write .*x\.out: "):
        create_output(tmp_path / "x.out", private=True, append=append)
    untouched()


def test_a_fifo_nobody_reads_is_refused_without_waiting(tmp_path):
    """A planted FIFO without a reader: a blocking open would wait for ever (run apart, so that
    a wait fails this test instead of hanging the suite)."""
    os.mkfifo(tmp_path / "x.out")
    code = ("import sys\nfrom jtop_roof.formats.userfiles import OutputError, create_output\n"
            "try:\n    create_output(sys.argv[1])\nexcept OutputError as exc:\n    print(exc)\n")
    result = subprocess.run([sys.executable, "-c", code, str(tmp_path / "x.out")], capture_output=True,
                            text=True, timeout=60)
    why = "it is not a regular file (a FIFO or a device)"
    assert result.stdout == f"refusing to write {tmp_path / 'x.out'}: {why}\n"


@pytest.mark.skipif(os.geteuid() != 0, reason="planting a file of another user takes root")
def test_another_users_file_is_refused(tmp_path):
    """Another user's file, even one this user may write (mode 0666 or root's reach): what is
    written would be theirs to read."""
    path = tmp_path / "x.out"
    path.write_bytes(OLD)
    path.chmod(0o644)
    os.chown(path, 65534, 65534)
    with pytest.raises(OutputError, match=r"belongs to another user \(uid 65534\)"):
        create_output(path, append=True)
    assert path.read_bytes() == OLD


def test_the_users_own_file_is_replaced_or_appended_to_and_a_new_one_created(tmp_path):
    """What is refused is only what is planted: the user's own file (group-writable too, the usual
    umask 002) is truncated, or appended to; a new file gets 0600 (private) or 0644."""
    own = tmp_path / "own.md"
    own.write_bytes(OLD)
    own.chmod(0o664)
    with open(create_output(own), "wb") as stream:
        stream.write(b"new\n")
    assert own.read_bytes() == b"new\n"
    with open(create_output(own, append=True), "wb") as stream:
        stream.write(b"more\n")
    assert own.read_bytes() == b"new\nmore\n"
    old_umask = os.umask(0o022)
    try:
        for name, private, mode in (("p.out", True, 0o600), ("o.md", False, 0o644)):
            os.close(create_output(tmp_path / name, private=private))
            assert stat.S_IMODE((tmp_path / name).stat().st_mode) == mode
    finally:
        os.umask(old_umask)


@pytest.mark.parametrize("planted", ["fifo", "world-writable"], indirect=True)
def test_runs_workload_output_is_not_written_into_a_planted_file(tmp_path, planted):
    """The TUI's ``run`` keeps the workload's output in ``FILE.out``: a plant there refuses the
    run before the workload starts."""
    untouched = planted(tmp_path / "run.jsonl.out")
    started = tmp_path / "started"
    with pytest.raises(OutputError, match="refusing to write"):
        Child(["touch", str(started)], on_exit=lambda: None, on_screen=False,
              log=str(tmp_path / "run.jsonl.out"), inputs=[str(tmp_path / "run.jsonl")])
    assert not started.exists()
    untouched()
