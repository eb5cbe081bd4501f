"""``plot --term`` draws a recording's and a plain log's power, clocks and phases as text with
plotext, from export's rows and the report's phases, without importing matplotlib."""

from __future__ import annotations

import re
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from cli_support import run_main as run
from paths import REPO, TESTS

DATA = TESTS / "data"
H200 = DATA / "h200_phases.jsonl"
TRTEXEC = DATA / "trtexec" / "trt10_resnet50_int8_15w_excerpt.log"
RUN_START = datetime(2026, 7, 26, 20, 43, 55, tzinfo=timezone.utc)
SIZE = ["--size", "120x40"]


def y_labels(text: str, panel: int) -> list[float]:
    """The numbers left of the axis (``123.4┤``) in the ``panel``-th panel of the figure."""
    panels = text.split("└")
    return [float(m) for m in re.findall(r"^\s*(-?[\d.]+)┤", panels[panel], re.M)]


def orin_log(tmp_path: Path, watts: tuple[int, int]) -> Path:
    """120 s of the real Orin Nano Super line, stamped 1 s apart from 5 s before trtexec's run, its
    VDD_IN alternating between two readings."""
    lines = (DATA / "tegrastats_lines.txt").read_text().splitlines()
    body = lines[next(n for n, line in enumerate(lines) if line.startswith("## orin_nano_super |")) + 1]
    body = body.split(" ", 2)[2]
    assert re.search(r"VDD_IN \d+mW/\d+mW", body)
    start = RUN_START - timedelta(seconds=5)
    path = tmp_path / "orin.log"
    vdd = re.compile(r"VDD_IN \d+mW/")
    path.write_text("".join(
        (start + timedelta(seconds=n)).strftime("%m-%d-%Y %H:%M:%S ")
        + vdd.sub(f"VDD_IN {watts[n % 2]}mW/", body) + "\n" for n in range(120)))
    return path


def test_a_recording_draws_its_series_and_phases_within_its_range(capsys):
    ran = run(capsys, "plot", H200, "--term", *SIZE)
    assert ran.returncode == 0, ran.stderr
    for name in ("GPU", "EMC", "CPU (mean of online cores)", "power (W)", "clock (MHz)"):
        assert name in ran.stdout
    for phase in ("idle", "copy", "gemm-bf16", "idle-after"):
        assert phase in ran.stdout
    assert "phases: idle 5.6–9.6 s; copy 9.6–19.6 s" in ran.stdout  # the report's edges
    assert "\x1b[" not in ran.stdout  # captured stdout is no terminal: no colour escapes
    watts = y_labels(ran.stdout, 0)
    # the H200's NVML power reads 60-700 W: the axis spans it, not a default 0-1
    assert 600 < max(watts) <= 701 and min(watts) < 100


def test_a_plain_log_with_trtexec_draws_vdd_in_and_trtexecs_phases(capsys, tmp_path):
    log = orin_log(tmp_path, (4000, 9000))
    ran = run(capsys, "plot", log, "--term", *SIZE, "--trtexec", TRTEXEC, "--device",
              "orin-nano-8gb-super", "--tz", "UTC")
    assert ran.returncode == 0, ran.stderr
    assert "VDD_IN" in ran.stdout and "GPU" in ran.stdout
    for phase in ("build", "warm-up", "timed"):
        assert phase in ran.stdout
    watts = y_labels(ran.stdout, 0)
    assert 8.5 <= max(watts) <= 9.0  # VDD_IN peaks at 9 W; the other rails sit lower


def test_names_from_the_file_are_shown_as_escapes(capsys, tmp_path):
    text = H200.read_text().replace('"gemm-bf16"', '"gemm\\u001b[31m"')
    bad = tmp_path / "bad.jsonl"
    bad.write_text(text)
    ran = run(capsys, "plot", bad, "--term", *SIZE)
    assert ran.returncode == 0, ran.stderr
    assert "\x1b" not in ran.stdout and "gemm\\x1b[31m" in ran.stdout


def test_the_size_asked_for_is_the_figures(capsys):
    ran = run(capsys, "plot", H200, "--term", "--size", "100x30")
    lines = ran.stdout.splitlines()
    assert max(len(line) for line in lines) == 100 and len(lines) == 30


def test_out_gets_the_text_without_colours(capsys, tmp_path):
    out = tmp_path / "fig.txt"
    ran = run(capsys, "plot", H200, "--term", *SIZE, "--out", out)
    assert ran.returncode == 0 and ran.stdout == "" and f"wrote {out}" in ran.stderr
    assert "gemm-bf16" in out.read_text() and "\x1b" not in out.read_text()


@pytest.mark.parametrize("args, needle", [
    (["--size", "10x3"], "at least"),
    (["--size", "big"], "WIDTHxHEIGHT"),
    (["--format", "svg"], "--format svg"),
    (["--probe", str(DATA / "h200_probe.json")], "roofline"),
])
def test_what_term_cannot_draw_is_one_line(capsys, args, needle):
    ran = run(capsys, "plot", H200, "--term", *args)
    assert ran.returncode == 2 and needle in ran.stderr and len(ran.stderr.strip().splitlines()) == 1


def test_a_file_without_samples_is_exit_2(capsys, tmp_path):
    empty = tmp_path / "empty.log"
    empty.write_text("not tegrastats\n")
    ran = run(capsys, "plot", empty, "--term", *SIZE)
    assert ran.returncode == 2 and len(ran.stderr.strip().splitlines()) == 1 and ran.stdout == ""


def test_no_matplotlib_is_imported():
    code = ("import sys; from jtop_roof.commands.main import main; rc = main(['plot', sys.argv[1], "
            "'--term', '--size', '80x24']); print('MPL', 'matplotlib' in sys.modules); sys.exit(rc)")
    done = jroof_python(code, H200)
    assert done.returncode == 0, done.stderr
    assert "gemm-bf16" in done.stdout and "MPL False" in done.stdout


def jroof_python(code: str, *args: object):  # type: ignore[no-untyped-def]
    import subprocess

    root = REPO
    return subprocess.run([sys.executable, "-c", code, *map(str, args)], cwd=root, capture_output=True,
                          text=True, timeout=120, env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin",
                                                       "HOME": str(root)})
