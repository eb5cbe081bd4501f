"""tegrastats on a remote board through ssh, against tests/fake_ssh (a stand-in ``ssh`` on PATH
that runs the remote command here, in its own session, as the board would) and tests/fake_tegrastats:
samples, the remote board's description, a refused key, a dropped link (gap, reconnect), and that
neither the local ssh nor the remote tegrastats outlives the monitor."""

from __future__ import annotations

import itertools
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from source_support import WAIT_S, Collector, alive, gone, pids
from ssh_support import FAKE, REPO, SYSFS, fake_ssh, make_source

from jtop_roof.model.records import Event, Sample
from jtop_roof.sources.ssh import SshSource, board_label, board_record_path, parse_dump, ssh_sources
from jtop_roof.sources.sysfs import BoardFiles


@pytest.fixture
def env(monkeypatch, tmp_path):
    yield from fake_ssh(monkeypatch, tmp_path)


def is_sample(record) -> bool:
    return isinstance(record, Sample) and record.is_sample


def is_event(kind: str):
    return lambda record: isinstance(record, Event) and record.kind == kind


def test_samples_arrive_through_ssh_with_batchmode_and_keepalives(env):
    collector = Collector(make_source("me@jetson"))
    taken = collector.take_until(is_sample)
    collector.take_until(is_sample)
    collector.stop()
    sample = taken[-1]
    assert sample.raw.startswith("04-19-2026") and sample.gpu.gpc_mhz == (1018,)
    (argv,) = [json.loads(line) for line in env.argv.read_text().splitlines()]
    options = [argv[i + 1] for i, arg in enumerate(argv) if arg == "-o"]
    assert "BatchMode=yes" in options
    assert any(o.startswith("ServerAliveInterval=") for o in options)
    assert any(o.startswith("ServerAliveCountMax=") for o in options)
    assert "-T" in argv and "-tt" not in argv
    assert argv[argv.index("--") + 1] == "me@jetson"


def test_stop_leaves_no_local_ssh_no_remote_tegrastats_and_no_pidfile(env):
    collector = Collector(make_source())
    collector.take_until(is_sample)
    (ssh_pid,) = pids(env.ssh)
    (remote_pid,) = pids(env.tegrastats)
    assert len(env.remote_pidfiles()) == 1  # the wrapper keeps the remote pid for a reconnect
    collector.stop()
    assert gone(ssh_pid) and gone(remote_pid)
    deadline = time.monotonic() + WAIT_S
    while env.remote_pidfiles() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert env.remote_pidfiles() == []


def test_refused_key_is_one_source_error_naming_the_host_and_ssh_message(env, monkeypatch):
    monkeypatch.setenv("FAKE_SSH_REFUSE", "1")  # without BatchMode=yes the stand-in would hang
    records = list(make_source("me@jetson").records())
    assert len(records) == 1
    (event,) = records
    assert isinstance(event, Event) and event.kind == "source_error"
    assert "me@jetson" in event.detail and "Permission denied (publickey)" in event.detail
    assert "BatchMode" in event.detail and "\n" not in event.detail
    assert all(gone(pid) for pid in pids(env.ssh))


def test_describe_with_a_refused_key_leaves_board_fields_out_with_a_hint(env, monkeypatch):
    monkeypatch.setenv("FAKE_SSH_REFUSE", "1")
    info = make_source("me@jetson").describe()
    assert info.model is None and info.power_mode is None and not info.max_clocks
    assert info.header["ssh_host"] == "me@jetson"
    assert any("Permission denied (publickey)" in hint and "me@jetson" in hint for hint in info.hints)


def test_describe_reads_the_remote_board_as_the_local_source_reads_its_own(env):
    info = make_source().describe()
    header = info.header
    local = BoardFiles(SYSFS, run=lambda _c: None).describe()
    assert {key: header[key] for key in local} == local
    assert header["ssh_host"] == "jetson" and header["source"] == "tegrastats"
    assert info.model == "NVIDIA Jetson Orin Nano Engineering Reference Developer Kit Super"
    assert info.power_mode == "MAXN_SUPER" and info.max_clocks["gpu_mhz"] == 1020
    assert info.tpc_gating is not None and info.trips_c
    assert header["command"] == [str(FAKE)]


def test_a_dropped_link_hangs_up_the_remote_tegrastats(env, monkeypatch):
    """The channel's EOF (our ssh gone) ends the remote command, before any reconnect, even a
    silent one that SIGPIPE cannot reach."""
    monkeypatch.setenv("FAKE_TEGRASTATS_HANG_AFTER", "3")
    monkeypatch.setenv("FAKE_SSH_DIE_AFTER", "3")
    monkeypatch.setenv("FAKE_SSH_DIE_ON", "1")
    collector = Collector(make_source(backoff=(30.0,)))  # no reconnect during this test
    taken = collector.take_until(is_event("source_restart"))
    assert "connection lost" in taken[-1].detail and "Broken pipe" in taken[-1].detail
    assert "jetson" in taken[-1].detail
    (remote_pid,) = pids(env.tegrastats)
    assert gone(remote_pid)
    collector.stop()  # returns from the back-off wait at once
    assert all(gone(pid) for pid in pids(env.ssh))


def test_a_half_dead_link_is_a_gap_then_a_reconnect_that_kills_the_old_remote(env, monkeypatch):
    """The board's side has not noticed the drop (the old remote keeps running): the reconnect's
    wrapper kills it by the pid it recorded."""
    monkeypatch.setenv("FAKE_SSH_DIE_AFTER", "3")
    monkeypatch.setenv("FAKE_SSH_DIE_ON", "1")
    monkeypatch.setenv("FAKE_SSH_LINGER", "1")
    collector = Collector(make_source(backoff=(0.3,)))
    collector.take_until(is_event("source_restart"))
    (old_remote,) = pids(env.tegrastats)
    assert alive(old_remote)  # nothing on the board noticed the drop
    taken = collector.take_until(is_event("gap"))
    gap = taken[-1]
    assert gap.gap_s > 0 and "tegrastats on jetson" in gap.detail
    assert gone(old_remote)
    collector.take_until(is_sample)  # samples resume from the new connection
    new_remote = pids(env.tegrastats, 2)[1]
    collector.stop()
    assert gone(new_remote)
    assert all(gone(pid) for pid in pids(env.ssh, 2))
    monos = [r.t_mono for r in taken]
    assert all(b >= a for a, b in itertools.pairwise(monos))


def test_an_unreachable_board_is_retried_not_given_up(env, monkeypatch):
    monkeypatch.setenv("FAKE_SSH_CONNECT_FAIL", "1")
    collector = Collector(make_source())
    collector.take_until(is_event("source_restart"))
    taken = collector.take_until(is_event("source_restart"))
    assert "Connection refused" in taken[-1].detail
    collector.stop()


def test_an_unknown_host_is_one_error_but_a_lost_name_later_is_retried(env, monkeypatch):
    monkeypatch.setenv("FAKE_SSH_NO_DNS", "1")
    (event,) = list(make_source("jetsn").records())
    assert event.kind == "source_error" and "Could not resolve hostname jetsn" in event.detail
    source = make_source()
    source._served = True  # a session that worked, then the laptop's network went away
    collector = Collector(source)
    taken = collector.take_until(is_event("source_restart"))
    assert "Could not resolve hostname" in taken[-1].detail
    collector.stop()


def test_missing_remote_tegrastats_is_one_error(env):
    (event,) = list(make_source(command=["no-such-tegrastats"]).records())
    assert event.kind == "source_error"
    assert "no-such-tegrastats" in event.detail and "jetson" in event.detail


def test_missing_ssh_client_is_one_error(env, tmp_path):
    (event,) = list(make_source(ssh=str(tmp_path / "no-ssh")).records())
    assert event.kind == "source_error" and "not found" in event.detail and "jetson" in event.detail


def test_dump_parsing_drops_paths_that_leave_the_tree():
    m = "@@jroof-x"
    text = (f"{m} uid 1000\n{m} file proc/device-tree/model\nOrin\x00\n{m} file ../etc/passwd\nroot\n"
            f"{m} file /etc/shadow\nx\n{m} nvpmodel\nNV Power Mode: 15W\n0\n{m} end\n")
    files, nvpmodel, uid, complete = parse_dump(text, m)
    assert files == {"proc/device-tree/model": "Orin\x00"}
    assert nvpmodel == "NV Power Mode: 15W\n0" and uid == 1000 and complete


def test_one_source_per_board_and_labels():
    sources = ssh_sources(["a", "me@b", "a"], ["tegrastats"], 1000)
    assert [s.host for s in sources] == ["a", "me@b"]
    assert board_label("me@jetson.lan") == "jetson.lan" and board_label("jetson:2222") == "jetson"
    assert board_record_path("out/run1.jsonl", "me@orin-1") == "out/run1.orin-1.jsonl"
    assert board_record_path("run1", "a/../b") == "run1.a_.._b.jsonl"
    with pytest.raises(ValueError):
        SshSource("-oProxyCommand=x", ["tegrastats"], 1000)


MONITOR = textwrap.dedent(
    """\
    import signal, sys
    from jtop_roof.sources.ssh import SshSource
    source = SshSource("jetson", [sys.argv[1]], 20, remote_root=sys.argv[2])
    signal.signal(signal.SIGTERM, lambda *_: source.stop())
    signal.signal(signal.SIGHUP, lambda *_: source.stop())
    for record in source.records():
        print("sample", flush=True)
    print("ended", flush=True)
    """
)


@pytest.mark.parametrize("how", ["SIGTERM", "SIGHUP", "SIGKILL"])
def test_nothing_outlives_the_monitor(env, monkeypatch, how):
    monkeypatch.setenv("FAKE_TEGRASTATS_HANG_AFTER", "1")  # silent: no SIGPIPE can end it
    monitor = subprocess.Popen(
        [sys.executable, "-c", MONITOR, str(FAKE), str(SYSFS)],
        stdout=subprocess.PIPE,
        text=True,
        env=dict(os.environ, PYTHONPATH=str(REPO)),
    )
    assert monitor.stdout.readline() == "sample\n"
    (ssh_pid,) = pids(env.ssh)
    (remote_pid,) = pids(env.tegrastats)
    monitor.send_signal(getattr(signal, how))
    rest, _ = monitor.communicate(timeout=WAIT_S)
    if how != "SIGKILL":
        assert monitor.returncode == 0 and rest.endswith("ended\n")
    # After kill -9 the monitor's pipe to ssh closes: the channel's EOF ends the remote command,
    # and ssh ends with it.
    assert gone(remote_pid) and gone(ssh_pid)


def test_record_over_ssh_from_the_command_line(env, tmp_path):
    """`jroof-tui record FILE --ssh HOST`: the board's samples, a header naming the host, and a
    refused key as one line."""
    out = tmp_path / "board.jsonl"
    run = subprocess.run([sys.executable, "-m", "jtop_roof", "record", str(out), "--ssh", "me@orin",
                          "--tegrastats-command", str(FAKE), "--interval", "50", "--duration", "2"],
                         capture_output=True, text=True,
                         timeout=60, env=dict(os.environ, PYTHONPATH=str(REPO)))
    assert run.returncode == 0, run.stderr
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert lines[0]["ssh_host"] == "me@orin" and lines[0]["source"] == "tegrastats"
    assert sum(1 for line in lines if line["type"] == "sample") >= 5
    both = subprocess.run([sys.executable, "-m", "jtop_roof", "record", str(tmp_path / "x.jsonl"),
                           "--ssh", "a", "--replay", str(out)], capture_output=True, text=True, timeout=60,
                          env=dict(os.environ, PYTHONPATH=str(REPO)))
    assert both.returncode == 2 and "--ssh watches live boards" in both.stderr


async def test_two_boards_one_header_line_each_a_key_to_switch_and_a_recording_each(env, tmp_path):
    from tui_support import make_config, wait_until

    from jtop_roof.runtime.session import open_recording, record_paths
    from jtop_roof.sources.ssh import SshSource
    from jtop_roof.tui.app import JroofApp

    sources = [SshSource(host, [str(FAKE)], 50, backoff=(0.05,)) for host in ("me@orin-a", "me@orin-b")]
    paths = record_paths(str(tmp_path / "run.jsonl"), sources)
    assert [Path(p).name for p in paths] == ["run.orin-a.jsonl", "run.orin-b.jsonl"]
    config = make_config()
    recorders = [open_recording(path, source, config) for path, source in zip(paths, sources, strict=True)]
    app = JroofApp(sources[0], config, recorder=recorders[0], user_themes=tmp_path,
                   more=[(sources[1], recorders[1])])
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: all(len(s.pipeline.history) >= 3 for s in app.streams), "both boards")
        app.redraw_now()
        header = app.query_one("#header").plain.splitlines()
        assert len(header) == 2 and header[0].startswith("▸ ") and header[1].startswith("  ")
        assert all("● REC run.orin-" in line for line in header)
        await pilot.press("b")
        app.redraw_now()
        header = app.query_one("#header").plain.splitlines()
        assert header[1].startswith("▸ ") and app.pipeline is app.streams[1].pipeline
        await pilot.press("m")  # a key marks the board shown
        await pilot.press("q")
    written = [[json.loads(line) for line in Path(p).read_text().splitlines()] for p in paths]
    assert all(sum(1 for r in lines if r["type"] == "sample") >= 3 for lines in written)
    assert [sum(1 for r in lines if r["type"] == "marker") for lines in written] == [0, 1]
    assert written[0][0]["ssh_host"] == "me@orin-a" and written[1][0]["ssh_host"] == "me@orin-b"
