"""Peers and planted files: the fallback marker directory another user made first,
monitors that are stopped or silent, a probe that is a FIFO, children that must not outlive the
monitor (a silent tegrastats, an ssh board that never answers), endless lines, an ssh board's
stderr and huge integers, and Nsight Compute exports past their bounds. Each case differs from the
examples first reported."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
from paths import REPO
from source_support import WAIT_S, Collector, finishes, gone, pids
from ssh_support import FAKE, fake_ssh, make_source

from jtop_roof import hook
from jtop_roof.formats import ncu
from jtop_roof.formats.ncu import NcuError, read_ncu_csv
from jtop_roof.model.records import Event, Sample
from jtop_roof.roofline.measured import ProbeError, load_probe
from jtop_roof.runtime import control, delivery
from jtop_roof.runtime.control import ControlError, DeliveryError, MarkerListener, send_marker, start_listener
from jtop_roof.sources.ssh import describe_files, parse_dump
from jtop_roof.sources.tegrastats import MAX_LINE_BYTES, TegrastatsSource


@pytest.fixture
def env(monkeypatch, tmp_path):
    yield from fake_ssh(monkeypatch, tmp_path)


NOBODY = 65534


def monitor_env() -> dict[str, str]:
    """This test's environment (its fake ssh on PATH, its knobs) for a monitor in a subprocess."""
    return dict(os.environ, PYTHONPATH=str(REPO))


def escape_free(text: str) -> bool:
    return "\x1b" not in text and "\x07" not in text


# -- the fallback marker directory ------------------------------------------------------------------

@pytest.fixture
def fallback(tmp_path, monkeypatch):
    """No XDG_RUNTIME_DIR: the socket directory is ``<parent>/jroof-<uid>`` (``/tmp`` in use)."""
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.setattr(control, "FALLBACK_PARENT", tmp_path)
    return tmp_path / f"jroof-{os.getuid()}"


@pytest.mark.skipif(os.geteuid() != 0, reason="making a directory of another user needs root")
def test_a_directory_planted_by_another_user_is_refused_loudly(fallback, capsys):
    fallback.mkdir()
    fallback.chmod(0o777)
    os.chown(fallback, NOBODY, NOBODY)
    with pytest.raises(ControlError) as refused:
        start_listener(lambda kind, name: None, required=True)
    message = str(refused.value)
    assert "markers from scripts are off" in message and str(fallback) in message
    assert f"belongs to uid {NOBODY}" in message and "XDG_RUNTIME_DIR" in message
    assert "\n" not in message
    assert start_listener(lambda kind, name: None) is None  # not required: one line, the monitor runs
    assert capsys.readouterr().err.count("\n") == 1
    assert hook.mark("loading") == 0  # the benchmark goes on
    assert list(fallback.iterdir()) == []  # nothing of ours went into it


def test_an_open_or_linked_fallback_directory_is_refused(fallback, tmp_path):
    fallback.mkdir(mode=0o700)
    fallback.chmod(0o777)
    with pytest.raises(ControlError, match=r"others can use it \(mode 0777\)"):
        start_listener(lambda kind, name: None, required=True)
    fallback.rmdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    fallback.symlink_to(elsewhere)
    with pytest.raises(ControlError, match="symbolic link"):
        start_listener(lambda kind, name: None, required=True)


def test_a_private_fallback_directory_of_ours_serves_markers(fallback):
    got: list[tuple[str, str | None]] = []
    listener = start_listener(lambda kind, name: got.append((kind, name)), required=True)
    assert listener is not None
    try:
        assert send_marker("phase_start", "decode") == 1
    finally:
        listener.close()
    assert got == [("phase_start", "decode")]


# -- stopped and silent monitors --------------------------------------------------------------------

STOPPABLE_MONITOR = textwrap.dedent(
    """\
    import sys, time
    from jtop_roof.runtime.control import MarkerListener
    log = open(sys.argv[1], "a")
    listener = MarkerListener(lambda kind, name: (log.write(f"{kind} {name}\\n"), log.flush()))
    listener.start()
    print("listening", flush=True)
    time.sleep(3600)
    """
)


def stopped(pid: int) -> bool:
    """Wait until the process shows as stopped."""
    deadline = time.monotonic() + WAIT_S
    while Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "T":
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def waits_seen(monkeypatch: pytest.MonkeyPatch) -> list[dict[socket.socket, bytes]]:
    """What ``send_marker`` waited for, each time it waited: the connections it offered the marker
    to and what each had answered when the wait ended (``delivery._read_replies``, one shared wait)."""
    seen: list[dict[socket.socket, bytes]] = []
    plain_read = delivery._read_replies

    def read_replies(replies: dict[socket.socket, bytearray]) -> None:
        plain_read(replies)
        seen.append({sock: bytes(reply) for sock, reply in replies.items()})

    monkeypatch.setattr(delivery, "_read_replies", read_replies)
    return seen


def test_stopped_monitors_neither_delay_the_live_one_nor_get_stale_markers(runtime_dir, tmp_path,
                                                                           monkeypatch):
    monitors, logs = [], []
    try:
        for index in range(3):
            log = tmp_path / f"stopped{index}.log"
            monitor = subprocess.Popen([sys.executable, "-c", STOPPABLE_MONITOR, str(log)],
                                       stdout=subprocess.PIPE, text=True, env=monitor_env())
            monitors.append(monitor)
            logs.append(log)
            assert monitor.stdout.readline() == "listening\n"
            monitor.send_signal(signal.SIGSTOP)  # Ctrl-Z
            assert stopped(monitor.pid)
        got: list[str | None] = []
        live = MarkerListener(lambda kind, name: got.append(name))
        live.start()
        waits = waits_seen(monkeypatch)
        try:
            delivered = [send_marker("phase_start", f"step {n}") for n in range(4)]
        finally:
            live.close()
        assert delivered == [1, 1, 1, 1] and got == ["step 0", "step 1", "step 2", "step 3"]
        # Each marker waited for the live monitor alone: a stopped one is never offered it, so
        # never waited for (it was a 2 s wait each).
        assert [list(wait.values()) for wait in waits] == [[b"ok\n"]] * 4
        for monitor in monitors:
            monitor.send_signal(signal.SIGCONT)
        time.sleep(0.5)  # resumed: they would now take whatever was queued for them
        assert all(not log.exists() or log.read_text() == "" for log in logs)
    finally:
        for monitor in monitors:
            monitor.kill()
            monitor.wait()


def test_silent_monitors_cost_one_short_wait_in_all(runtime_dir, monkeypatch):
    """Sockets that accept but never answer (a monitor hung in a callback): the live monitor still
    gets every marker, and the wait is shared, not one per socket: one wait for all seven, which
    ended on its bound with the six still silent; the sender is told that six did not answer
    (they may or may not have taken it), not a bare count."""
    silent = []
    for index in range(6):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.bind(str(control.control_dir() / f"{os.getpid() + index + 1}.sock"))
        sock.listen(8)  # queued, never accepted
        silent.append(sock)
    got: list[str | None] = []
    live = MarkerListener(lambda kind, name: got.append(name))
    live.start()
    waits = waits_seen(monkeypatch)
    try:
        with pytest.raises(DeliveryError) as raised:
            send_marker("phase_start", "prefill")
    finally:
        live.close()
        for sock in silent:
            sock.close()
    assert (raised.value.taken, raised.value.unanswered, raised.value.busy) == (1, 6, 0)
    assert got == ["prefill"]
    (wait,) = waits
    assert sorted(wait.values()) == [b""] * 6 + [b"ok\n"]


# -- a probe that is a FIFO -------------------------------------------------------------------------

def test_a_fifo_given_as_probe_is_refused_at_once(tmp_path):
    fifo = tmp_path / "ceilings.json"
    os.mkfifo(fifo)
    with pytest.raises(ProbeError, match="not a regular file"):
        finishes(lambda: load_probe(fifo))


# -- children that must not outlive the monitor -----------------------------------------------------

SILENT_CHILD = "import os, sys, time; open(sys.argv[1], 'a').write(f'{os.getpid()}\\n'); time.sleep(3600)"

MONITOR = textwrap.dedent(
    """\
    import sys
    from jtop_roof.sources.tegrastats import TegrastatsSource
    source = TegrastatsSource(sys.argv[1:], 1000, sysfs_root=None, hang_timeout_s=3600)
    for record in source.records():
        pass
    """
)

SUDO_LIKE = textwrap.dedent(
    """\
    import os, signal, sys
    # Like sudo with use_pty: the command in a session of its own, SIGTERM relayed to it.
    child = os.fork()
    if child == 0:
        os.setsid()
        os.execvp(sys.argv[1], sys.argv[1:])
    signal.signal(signal.SIGTERM, lambda s, _f: os.kill(child, s))
    while True:
        try:
            os.waitpid(child, 0)
            break
        except InterruptedError:
            continue
    """
)


@pytest.mark.parametrize("behind_sudo", [False, True], ids=["plain", "sudo-like"])
def test_a_silent_tegrastats_dies_with_a_monitor_killed_outright(tmp_path, behind_sudo):
    pidfile = tmp_path / "silent.pid"
    command = [sys.executable, "-c", SILENT_CHILD, str(pidfile)]
    if behind_sudo:
        relay = tmp_path / "sudo_like.py"
        relay.write_text(SUDO_LIKE)
        command = [sys.executable, str(relay), *command]
    monitor = subprocess.Popen([sys.executable, "-c", MONITOR, *command],
                               env=monitor_env())
    try:
        (child_pid,) = pids(pidfile)
        monitor.kill()  # kill -9: no handler, no atexit, and the child never writes (no SIGPIPE)
        monitor.wait(timeout=WAIT_S)
        assert gone(child_pid)
    finally:
        monitor.kill()
        for pid in pids(pidfile, 0):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def test_stop_ends_an_ssh_board_that_never_answers_at_once(env, monkeypatch):
    monkeypatch.setenv("FAKE_SSH_SILENT", "1")
    source = make_source("lab-orin", describe_timeout_s=3 * WAIT_S)
    described: list = []
    reader = threading.Thread(target=lambda: described.append(source.describe()), daemon=True)
    reader.start()
    (ssh_pid,) = pids(env.ssh)
    source.stop()  # quitting while the board is being read
    reader.join(WAIT_S)
    assert not reader.is_alive(), "describe() still waits for the silent board after stop()"
    assert gone(ssh_pid)
    assert described and described[0].model is None


SSH_MONITOR = textwrap.dedent(
    """\
    import sys
    from jtop_roof.sources.ssh import SshSource
    SshSource("lab-xavier", [sys.argv[1]], 500, describe_timeout_s=3600).describe()
    """
)


@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGHUP], ids=["sigterm", "sighup"])
def test_a_signal_while_an_ssh_board_never_answers_leaves_no_ssh(env, monkeypatch, how):
    monkeypatch.setenv("FAKE_SSH_SILENT", "1")
    monitor = subprocess.Popen([sys.executable, "-c", SSH_MONITOR, str(FAKE)],
                               env=monitor_env())
    try:
        (ssh_pid,) = pids(env.ssh)
        monitor.send_signal(how)  # no handler: the monitor dies at once
        monitor.wait(timeout=WAIT_S)
        assert gone(ssh_pid)
    finally:
        monitor.kill()
        for pid in pids(env.ssh, 0):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


# -- endless lines ----------------------------------------------------------------------------------

ENDLESS_THEN_LINES = textwrap.dedent(
    """\
    import sys, time
    out = sys.stdout.buffer
    for _ in range(48):  # 3 MiB of one line, in pieces, before its newline
        out.write(b"9" * 65536)
        out.flush()
    out.write(b"\\n")
    line = open(sys.argv[1], "rb").read().splitlines()[-1] + b"\\n"
    while True:
        out.write(line)
        out.flush()
        time.sleep(0.02)
    """
)


def fake_line_file(tmp_path: Path) -> Path:
    lines = (REPO / "tests" / "data" / "fake_tegrastats_orinnano_super.txt").read_text().splitlines()
    path = tmp_path / "one.txt"
    path.write_text([line for line in lines if line.strip() and not line.startswith("#")][0] + "\n")
    return path


def check_endless_line_is_cut(collector: Collector) -> None:
    taken = collector.take_until(lambda r: isinstance(r, Sample) and r.is_sample)
    collector.stop()
    cut = [r for r in taken if isinstance(r, Sample) and not r.is_sample]
    assert len(cut) == 1 and len(cut[0].raw) == MAX_LINE_BYTES and set(cut[0].raw) == {"9"}
    assert not any(isinstance(r, Event) for r in taken)  # no restart: the monitor went on


def test_an_endless_tegrastats_line_is_cut_and_the_stream_goes_on(tmp_path):
    source = TegrastatsSource([sys.executable, "-c", ENDLESS_THEN_LINES, str(fake_line_file(tmp_path))], 20,
                              sysfs_root=None, kill_grace_s=0.5)
    check_endless_line_is_cut(Collector(source))


def test_an_endless_line_over_ssh_is_cut_and_the_stream_goes_on(env, tmp_path):
    script = tmp_path / "endless.py"
    script.write_text(ENDLESS_THEN_LINES)
    command = [sys.executable, str(script), str(fake_line_file(tmp_path))]
    check_endless_line_is_cut(Collector(make_source("lab-nano", command)))


# -- an ssh board's stderr and numbers --------------------------------------------------------------

def test_an_ssh_boards_stderr_reaches_messages_printable(env, tmp_path):
    noisy = tmp_path / "noisy"
    noisy.write_text("#!/bin/sh\nprintf 'no \\033]2;owned\\007 \\033[5mtegrastats\\n' >&2\nexit 127\n")
    noisy.chmod(0o755)
    (event,) = list(make_source("lab-agx", [str(noisy)]).records())
    assert event.kind == "source_error" and "tegrastats" in event.detail
    assert escape_free(event.detail)
    info = make_source("lab-agx", remote_root="/no/such/root\x1b]2;owned\x07").describe()
    assert any("no/such/root" in hint for hint in info.hints)
    assert all(escape_free(hint) for hint in info.hints)


def test_huge_integers_from_an_ssh_board_are_bad_values_not_tracebacks():
    digits = "7" * 600
    files = {
        "sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq": digits,
        "sys/devices/system/cpu/cpu1/cpufreq/cpuinfo_max_freq": "1984000",
        "sys/class/thermal/thermal_zone3/type": "soc2-thermal",
        "sys/class/thermal/thermal_zone3/trip_point_1_temp": "-" + digits,
        "sys/class/thermal/thermal_zone3/trip_point_2_temp": "96500",
        "sys/devices/platform/gpu.0/tpc_pg_mask": "0x" + "f" * 300,
        "var/lib/nvpmodel/status": "pmode:" + "3" * 4400,
        "etc/nvpmodel.conf": f"< POWER_MODEL ID={'2' * 5000} NAME=HUGE >\n"
                             f"TPC_POWER_GATING TPC_PG_MASK {digits}\n",
    }
    board = describe_files(files, "NV Power Mode: 25W\n" + "4" * 4400 + "\n")
    assert board["max_clocks"] == {"cpu_mhz": 1984}
    assert board["thermal_trips"] == {"soc2": [{"type": "unknown", "temp_c": 96.5}]}
    assert board["power_mode"] == "25W" and "power_mode_id" not in board and "gpu_tpcs" not in board
    assert parse_dump("@m uid " + "5" * 4500 + "\n@m end\n", "@m")[2] is None


# -- Nsight Compute exports past their bounds -------------------------------------------------------

def raw_export(kernels: int) -> str:
    rows = [f'"{n}","4242","gemv_{n}","2,048","65,536"' for n in range(kernels)]
    return "\n".join(['"ID","Process ID","Kernel Name","gpu__time_duration.sum","dram__bytes.sum"',
                      '"","","","nsecond","byte"', *rows]) + "\n"


def test_an_ncu_export_with_too_many_kernels_is_one_line(tmp_path):
    path = tmp_path / "sweep.csv"
    path.write_text(raw_export(ncu.MAX_KERNELS + 7))
    with pytest.raises(NcuError, match=f"more than {ncu.MAX_KERNELS:,} kernels") as refused:
        read_ncu_csv(path)
    assert "\n" not in str(refused.value) and "--launch-count" in str(refused.value)
    path.write_text(raw_export(ncu.MAX_KERNELS))
    assert len(read_ncu_csv(path)) == ncu.MAX_KERNELS


def test_an_ncu_export_too_big_or_too_wide_is_one_line(tmp_path, monkeypatch):
    big = tmp_path / "big.csv"
    with open(big, "w") as handle:
        handle.write(raw_export(3))
        handle.truncate(ncu.MAX_CSV_BYTES + 1)  # sparse: no disk used
    with pytest.raises(NcuError, match="larger than"):
        read_ncu_csv(big)
    monkeypatch.setattr(ncu, "MAX_METRIC_VALUES", 20_000)  # the same check, with less to read
    columns = ncu.MAX_METRIC_VALUES // 40 + 1
    header = ",".join(f'"sm__x{n}.sum"' for n in range(columns))
    wide = tmp_path / "wide.csv"
    wide.write_text('"ID","Kernel Name",' + header + "\n" + '"",""' + ',"inst"' * columns + "\n"
                    + "".join(f'"{k}","k{k}"' + ',"1"' * columns + "\n" for k in range(40)))
    with pytest.raises(NcuError, match="metric values"):
        read_ncu_csv(wide)
