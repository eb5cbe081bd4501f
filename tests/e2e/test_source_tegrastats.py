"""The live tegrastats source against tests/fake_tegrastats: parsing, restarts, gaps, and that no
child process (direct, behind a shell, behind a sudo-like relay) outlives the monitor."""

from __future__ import annotations

import itertools
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from paths import TESTS
from source_support import WAIT_S, Collector, alive, gone, pids

from jtop_roof.model.records import Event, Sample
from jtop_roof.sources.tegrastats import TegrastatsSource

REPO = TESTS.parent
FAKE = TESTS / "fake_tegrastats"
SYSFS = TESTS / "data" / "sysfs"
ROOT_LINES = TESTS / "data" / "fake_tegrastats_orinnano_super.txt"
NONROOT_LINES = TESTS / "data" / "fake_tegrastats_orinnano_nonroot.txt"


def data_lines(path: Path) -> list[str]:
    return [line for line in path.read_text().splitlines() if line.strip() and not line.startswith("#")]


@pytest.fixture
def fake_env(monkeypatch, tmp_path):
    for name in ("EXIT_AFTER", "HANG_AFTER", "IGNORE_TERM", "EXIT_CODE"):
        monkeypatch.delenv(f"FAKE_TEGRASTATS_{name}", raising=False)
    monkeypatch.setenv("FAKE_TEGRASTATS_LINES", str(ROOT_LINES))
    pidfile = tmp_path / "fake.pid"
    monkeypatch.setenv("FAKE_TEGRASTATS_PIDFILE", str(pidfile))
    return pidfile


def make_source(command=None, **kwargs) -> TegrastatsSource:
    kwargs.setdefault("clock", itertools.count(1_000_000.0, 1.0).__next__)
    kwargs.setdefault("mono", itertools.count(0.0, 1.0).__next__)
    kwargs.setdefault("backoff", (0.01, 0.02))
    kwargs.setdefault("kill_grace_s", 0.5)
    kwargs.setdefault("sysfs_root", str(SYSFS))
    return TegrastatsSource(command or [str(FAKE)], 20, **kwargs)


def is_sample(record) -> bool:
    return isinstance(record, Sample) and record.is_sample


def is_event(kind):
    return lambda record: isinstance(record, Event) and record.kind == kind


def test_live_samples_are_parsed_stamped_and_keep_raw(fake_env):
    source = make_source()
    records = source.records()
    samples = [next(records) for _ in range(3)]
    expected = data_lines(ROOT_LINES)[:3]
    for sample, line in zip(samples, expected, strict=True):
        assert isinstance(sample, Sample) and sample.is_sample
        assert sample.raw == line
        assert sample.stamp == line[:19]  # tegrastats' own stamp is kept beside the host clock
        assert sample.ram is not None and sample.ram.total_mb == 7607
        # Root line: tegrastats' measured clock wins over the sysfs set point (612 in the fake tree).
        assert sample.gpu is not None and sample.gpu.gpc_mhz in ((1018,), (1019,))
        assert sample.emc is not None and sample.emc.mhz == 3199
    assert [s.t_wall for s in samples] == [1_000_000.0, 1_000_001.0, 1_000_002.0]
    assert [s.t_mono for s in samples] == [0.0, 1.0, 2.0]
    (pid,) = pids(fake_env)
    records.close()  # closing the generator ends the child too
    assert gone(pid)


@pytest.mark.parametrize("lines", [ROOT_LINES, NONROOT_LINES], ids=["root", "nonroot"])
def test_live_lines_take_the_short_way_to_the_parsers_sample(fake_env, monkeypatch, lines):
    """A line in the usual order is read by ``usual_sample`` (half the parser's work, in
    the reader's thread each second), and its sample is the parser's, stamped and filled alike."""
    from jtop_roof.formats.parser import parse_line
    from jtop_roof.sources import tegrastats

    monkeypatch.setenv("FAKE_TEGRASTATS_LINES", str(lines))
    short: list[str] = []
    usual = tegrastats.usual_sample
    monkeypatch.setattr(tegrastats, "usual_sample",
                        lambda line, place: (found := usual(line, place)) and (short.append(line) or found))
    source = make_source()
    records = source.records()
    expected = data_lines(lines)
    samples = [next(records) for _ in expected]
    records.close()
    assert short == expected  # every real line is in the usual order
    for index, (sample, line) in enumerate(zip(samples, expected, strict=True)):
        parsed = parse_line(line)
        parsed.t_wall, parsed.t_mono = 1_000_000.0 + index, float(index)
        source._fill(parsed)  # the board's clocks where the line has none
        parsed.io = sample.io  # rates since the last reading: the fill's meter has moved on
        assert sample == parsed, line


def test_nonroot_line_gets_gpu_clock_from_devfreq(fake_env, monkeypatch):
    monkeypatch.setenv("FAKE_TEGRASTATS_LINES", str(NONROOT_LINES))
    records = make_source().records()
    sample = next(records)
    records.close()
    assert sample.raw == data_lines(NONROOT_LINES)[0]
    assert sample.gpu is not None
    assert sample.gpu.load_pct == 0  # GR3D_FREQ 0% from the line
    assert sample.gpu.gpc_mhz == (612,)  # sysfs/class/devfreq/17000000.gpu/cur_freq
    assert sample.emc is None  # nothing readable gives EMC on this board without root
    assert [c.mhz for c in sample.cpus] == [1344, 1344, 1344, 1344, 883, 883]  # the line's own


def test_child_that_exits_is_restarted_with_event_and_gap(fake_env, monkeypatch):
    monkeypatch.setenv("FAKE_TEGRASTATS_EXIT_AFTER", "2")
    collector = Collector(make_source())
    before = collector.take_until(is_event("source_restart"))
    after = collector.take_until(is_sample)
    collector.stop()

    assert sum(map(is_sample, before)) == 2
    restart = before[-1]
    assert "exited with status 1" in restart.detail
    assert "exiting after 2 lines" in restart.detail  # the child's stderr is quoted
    gap = next(r for r in after if is_event("gap")(r))
    resumed = after[-1]
    last = [r for r in before if is_sample(r)][-1]
    assert after.index(gap) == after.index(resumed) - 1
    assert gap.t_mono == resumed.t_mono and gap.t_wall == resumed.t_wall  # written when data resumes
    assert gap.gap_s == resumed.t_mono - last.t_mono > 0
    assert "while tegrastats restarted" in gap.detail
    first, second = pids(fake_env, 2)[:2]
    assert first != second
    assert gone(first) and gone(second)


@pytest.mark.parametrize("real_clocks", [False, True])
def test_records_keep_mono_order_across_restarts(fake_env, monkeypatch, real_clocks):
    """A recording is appended in stream order, so t_mono must never step back in it."""
    monkeypatch.setenv("FAKE_TEGRASTATS_EXIT_AFTER", "2")
    clocks = {"clock": time.time, "mono": time.monotonic} if real_clocks else {}
    collector = Collector(make_source(**clocks))
    taken = collector.take_until(is_event("gap"))
    taken += collector.take_until(is_event("gap"))
    collector.stop()
    kinds = [r.kind if isinstance(r, Event) else "sample" for r in taken]
    assert kinds.count("source_restart") == 2
    monos = [r.t_mono for r in taken]
    assert all(b >= a for a, b in itertools.pairwise(monos)), list(zip(kinds, monos, strict=True))


def test_hung_child_ignoring_sigterm_is_killed_and_restarted(fake_env, monkeypatch):
    monkeypatch.setenv("FAKE_TEGRASTATS_HANG_AFTER", "1")
    monkeypatch.setenv("FAKE_TEGRASTATS_IGNORE_TERM", "1")
    collector = Collector(make_source(hang_timeout_s=0.5, kill_grace_s=0.2))
    taken = collector.take_until(is_event("source_restart"))
    assert "hung" in taken[-1].detail
    hung_pid = pids(fake_env)[0]
    assert gone(hung_pid)  # SIGKILL after the grace period, since SIGTERM is ignored
    collector.take_until(is_sample)  # samples resume from a new child
    collector.stop()
    assert all(gone(pid) for pid in pids(fake_env, 2))


def test_stop_from_another_thread_ends_records_and_the_child(fake_env):
    collector = Collector(make_source())
    collector.take_until(is_sample)
    (pid,) = pids(fake_env)
    collector.stop()
    assert gone(pid)
    assert collector.queue.get(timeout=WAIT_S) is not None  # drained to END without error


def test_stop_wakes_a_reader_waiting_on_a_silent_child_that_ignores_sigterm(fake_env, monkeypatch):
    """The reader waits on the child's output with no poll (an idle wake-up costs CPU): stop()
    wakes it. Here nothing else would: the child stays silent and alive, and its silence limit is
    far beyond the wait for the end."""
    monkeypatch.setenv("FAKE_TEGRASTATS_HANG_AFTER", "1")
    monkeypatch.setenv("FAKE_TEGRASTATS_IGNORE_TERM", "1")
    collector = Collector(make_source(hang_timeout_s=10 * WAIT_S, kill_grace_s=0.2))
    collector.take_until(is_sample)
    (pid,) = pids(fake_env)
    collector.source.stop()
    assert collector.queue.get(timeout=WAIT_S) is Collector.END
    assert gone(pid)  # SIGKILL after the grace, SIGTERM being ignored


def test_child_behind_a_shell_is_gone_after_stop(fake_env, tmp_path):
    shell_pidfile = tmp_path / "shell.pid"
    # Not `exec`: the shell stays the group leader and the fake is its child.
    script = f'echo $$ >> "{shell_pidfile}"; "{FAKE}" "$@"; echo after >&2'
    collector = Collector(make_source(["sh", "-c", script, "sh"]))
    collector.take_until(is_sample)
    (shell_pid,) = pids(shell_pidfile)
    (fake_pid,) = pids(fake_env)
    assert shell_pid != fake_pid
    collector.stop()
    assert gone(shell_pid) and gone(fake_pid)


SUDO_LIKE = textwrap.dedent(
    """\
    import os, signal, sys
    # Like sudo with use_pty: the command runs in its own session, out of reach of a killpg on our
    # group; SIGTERM/SIGHUP/SIGINT sent to us are relayed to it.
    with open(os.environ["SUDO_LIKE_PIDFILE"], "a") as f:
        f.write(f"{os.getpid()}\\n")
    child = os.fork()
    if child == 0:
        os.setsid()
        os.execvp(sys.argv[1], sys.argv[1:])
    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(sig, lambda s, _f: os.kill(child, s))
    while True:
        try:
            _, status = os.waitpid(child, 0)
            break
        except InterruptedError:
            continue
    sys.exit(os.waitstatus_to_exitcode(status) & 0xFF)
    """
)


def test_child_behind_a_sudo_like_relay_in_another_session_is_gone(fake_env, tmp_path, monkeypatch):
    wrapper = tmp_path / "sudo_like.py"
    wrapper.write_text(SUDO_LIKE)
    wrapper_pidfile = tmp_path / "wrapper.pid"
    monkeypatch.setenv("SUDO_LIKE_PIDFILE", str(wrapper_pidfile))
    collector = Collector(make_source([sys.executable, str(wrapper), str(FAKE)]))
    collector.take_until(is_sample)
    (wrapper_pid,) = pids(wrapper_pidfile)
    (fake_pid,) = pids(fake_env)
    assert os.getpgid(fake_pid) != os.getpgid(wrapper_pid)
    collector.stop()
    assert gone(wrapper_pid) and gone(fake_pid)


def test_missing_command_gives_one_clear_error_event_and_ends(tmp_path):
    missing = tmp_path / "no-such-tegrastats"
    records = list(make_source([str(missing)]).records())
    assert len(records) == 1
    (event,) = records
    assert isinstance(event, Event) and event.kind == "source_error"
    assert "not found" in event.detail and str(missing) in event.detail
    assert event.t_wall is not None and event.t_mono is not None


def test_missing_sudo_is_named_with_a_hint_that_fits_sudo(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # neither sudo nor tegrastats on it
    (event,) = list(make_source(["sudo", "-n", "tegrastats"]).records())
    assert event.kind == "source_error"
    assert "sudo not found on PATH" in event.detail
    assert "Jetson" not in event.detail and "install sudo" in event.detail


def test_missing_tegrastats_hint_points_elsewhere_to_the_host_source(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    (event,) = list(make_source(["tegrastats"]).records())
    assert "tegrastats not found on PATH" in event.detail and "--source host" in event.detail


def test_non_executable_command_gives_error_event(tmp_path):
    script = tmp_path / "tegrastats"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o644)
    (event,) = list(make_source([str(script)]).records())
    assert event.kind == "source_error" and "not executable" in event.detail


def test_describe_without_root_names_the_board_and_the_fix():
    info = make_source(["tegrastats"], is_root=False).describe().header
    assert info["source"] == "tegrastats"
    assert info["model"] == "NVIDIA Jetson Orin Nano Engineering Reference Developer Kit Super"
    assert info["power_mode"] == "MAXN_SUPER" and info["power_mode_id"] == 2
    assert info["max_clocks"]["gpu_mhz"] == 1020
    hints = " ".join(info["hints"])
    assert "sudo -n tegrastats" in hints
    assert "devfreq" in hints and "EMC" in hints


def test_describe_through_sudo_has_no_root_hint():
    info = make_source(["sudo", "-n", "tegrastats"]).describe().header
    assert not any("need root" in hint for hint in info["hints"])
    assert info["command"] == ["sudo", "-n", "tegrastats"]


MONITOR = textwrap.dedent(
    """\
    import signal, sys, threading
    from jtop_roof.sources.tegrastats import TegrastatsSource
    source = TegrastatsSource([sys.argv[1]], 20, sysfs_root=sys.argv[2])
    mode = sys.argv[3]
    if mode == "sigterm":
        signal.signal(signal.SIGTERM, lambda *_: source.stop())
    if mode == "exit":
        # records() in a daemon worker thread, as in the TUI; the main thread exits without stop():
        # the worker is frozen at shutdown, so only the atexit hook can end the child.
        first = threading.Event()
        def work():
            for _ in source.records():
                first.set()
        threading.Thread(target=work, daemon=True).start()
        first.wait()
        print("sample", flush=True)
        sys.exit(0)
    for record in source.records():
        print("sample", flush=True)
    print("ended", flush=True)
    """
)


def run_monitor(mode: str) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.Popen(
        [sys.executable, "-c", MONITOR, str(FAKE), str(SYSFS), mode],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert proc.stdout.readline() == "sample\n"
    return proc


def test_sigterm_to_the_monitor_ends_the_child_through_stop(fake_env):
    monitor = run_monitor("sigterm")
    (pid,) = pids(fake_env)
    monitor.send_signal(signal.SIGTERM)
    rest, _ = monitor.communicate(timeout=WAIT_S)
    assert monitor.returncode == 0 and rest.endswith("ended\n")
    assert gone(pid)


def test_monitor_exiting_without_stop_ends_the_child(fake_env, monkeypatch):
    monkeypatch.setenv("FAKE_TEGRASTATS_HANG_AFTER", "1")  # silent child: SIGPIPE cannot end it
    monitor = run_monitor("exit")
    monitor.communicate(timeout=WAIT_S)
    assert monitor.returncode == 0
    (pid,) = pids(fake_env)
    assert gone(pid)


def test_monitor_killed_outright_child_dies_of_sigpipe(fake_env):
    monitor = run_monitor("plain")
    (pid,) = pids(fake_env)
    monitor.kill()
    monitor.wait(timeout=WAIT_S)
    assert gone(pid)  # its next line hits a pipe nobody reads


async def test_quitting_the_monitor_leaves_no_child(fake_env, tmp_path):
    """The whole TUI over the real source: after q, the tegrastats child is gone."""
    from tui_support import make_config, wait_until

    from jtop_roof.tui.app import JroofApp

    app = JroofApp(make_source(), make_config(), user_themes=tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: len(app.history) >= 3, "live samples from the fake")
        (pid,) = pids(fake_env)
        assert alive(pid)
        await pilot.press("q")
    assert gone(pid)
