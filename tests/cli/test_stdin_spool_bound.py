"""``-`` spools standard input to a temporary file, but never more than a cap (2 GiB, or
``JROOF_STDIN_MAX_BYTES``): an endless or hostile stream is refused in one line saying the cap,
and the spool is removed, instead of filling $TMPDIR."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import cli_support
import pytest
from paths import TESTS

LOG = TESTS / "data" / "logfile" / "agxorin_jp6_500ms.log"


def jroof(*args: str, tmp: Path, data: bytes, cap: str | None) -> subprocess.CompletedProcess[bytes]:
    env = dict(os.environ, TMPDIR=str(tmp))
    env.pop("JROOF_STDIN_MAX_BYTES", None)
    if cap is not None:
        env["JROOF_STDIN_MAX_BYTES"] = cap
    return cli_support.jroof(*args, input=data, env=env, cwd=tmp, text=False)


@pytest.mark.parametrize("command", [
    ("report", "-", "--tz", "UTC"),
    ("export", "-", "--tz", "UTC"),
    ("compare", "-", str(LOG), "--tz", "UTC"),
    ("record", "out.jsonl", "--replay", "-", "--speed", "64", "--duration", "5"),
])
def test_standard_input_past_the_cap_is_refused_and_the_spool_removed(tmp_path, command):
    spool_dir = tmp_path / "tmp"
    spool_dir.mkdir()
    data = LOG.read_bytes()
    data = data * (3 * 65536 // len(data) + 1)  # three times the cap
    result = jroof(*command, tmp=spool_dir, data=data, cap="64K")
    assert result.returncode == 2, result.stderr
    assert result.stderr.decode() == ("jroof-tui: error: standard input (-) is larger than 64 KiB, the most "
                                      "that is spooled: give a file name, or set JROOF_STDIN_MAX_BYTES\n")
    assert list(spool_dir.iterdir()) == []
    assert result.stdout == b""


def test_standard_input_under_the_cap_is_read_whole(tmp_path):
    result = jroof("report", "-", "--tz", "UTC", "--format", "json", tmp=tmp_path, data=LOG.read_bytes(),
                   cap=str(LOG.stat().st_size))
    assert result.returncode == 0, result.stderr
    assert b'"samples"' in result.stdout


def test_the_cap_and_its_setting():
    """2 GiB unless set; a setting in bytes or with a unit; anything else one line."""
    from jtop_roof.commands.options import STDIN_MAX_BYTES, StdinError, stdin_cap

    assert stdin_cap({}) == STDIN_MAX_BYTES == 2 << 30
    assert stdin_cap({"JROOF_STDIN_MAX_BYTES": "4G"}) == 4 << 30
    assert stdin_cap({"JROOF_STDIN_MAX_BYTES": "512m"}) == 512 << 20
    assert stdin_cap({"JROOF_STDIN_MAX_BYTES": "1000"}) == 1000
    for bad in ("0", "-1", "1.5G", "lots", "9" * 5000, "²"):
        with pytest.raises(StdinError, match="JROOF_STDIN_MAX_BYTES"):
            stdin_cap({"JROOF_STDIN_MAX_BYTES": bad})


def test_a_bad_setting_is_one_line(tmp_path):
    result = jroof("report", "-", tmp=tmp_path, data=LOG.read_bytes(), cap="lots")
    assert result.returncode == 2
    assert result.stderr.decode() == ("jroof-tui: error: JROOF_STDIN_MAX_BYTES='lots': expected a positive "
                                      "number of bytes (or with K, M, G, T)\n")


def test_a_followed_standard_input_stops_spooling_at_the_cap(tmp_path, capsys):
    """``--replay - --follow``: the stream is spooled as it comes, up to the cap, then no more
    (said once); the replay has what came before."""
    import threading

    from jtop_roof.commands.options import _spool_as_it_comes

    cap = 64 << 10
    data = LOG.read_bytes() * (3 * cap // LOG.stat().st_size + 1)
    source, sink = os.pipe()

    def write() -> None:
        with open(sink, "wb") as stream:
            try:
                stream.write(data)
            except BrokenPipeError:  # the spool stopped reading at the cap
                pass

    writer = threading.Thread(target=write)
    writer.start()
    spool = tmp_path / "spool"
    with open(spool, "wb") as target:
        _spool_as_it_comes(source, target.fileno(), cap).wait()
        os.close(source)  # the spooling thread holds its own copy
        for thread in threading.enumerate():
            if thread.name == "jroof-stdin-spool":
                thread.join(timeout=60)
    writer.join(timeout=60)
    assert 0 < spool.stat().st_size <= cap
    assert data.startswith(spool.read_bytes())
    assert capsys.readouterr().err == ("jroof-tui: standard input (-) passed 64 KiB, the most that is "
                                       "spooled: the rest is not replayed (set JROOF_STDIN_MAX_BYTES "
                                       "for more)\n")
