"""A trtexec run whose timed window measured nothing ("Total Host Walltime: 0 s", or 0 queries)
gives no per-inference figure: no work is reported for it (0 J over no time would print as
"0 mJ" per inference) and a note says why, on stderr and in the report."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import pytest
from paths import TESTS

from jtop_roof.commands.main import main
from jtop_roof.formats.trtexec import parse_trtexec, trtexec_records, with_trtexec
from jtop_roof.formats.trtexec_span import LogSpan, place_run
from jtop_roof.model.records import Marker, Sample, Work

DATA = TESTS / "data"
EXCERPT = (DATA / "trtexec" / "trt10_resnet50_int8_15w_excerpt.log").read_text()
WALLTIME = "Total Host Walltime: 3.007 s"
TRACE = "Timing trace has 1656 queries over 3.007 s"
UTC = timezone.utc
#: The excerpt's first stamp, read from it: the log below starts 5 s before.
RUN_START = datetime(2026, 7, 26, 20, 43, 55, tzinfo=UTC).timestamp()
UNMEASURED = {
    "no time": (WALLTIME, "Total Host Walltime: 0 s", "took 0 s"),
    "no time in ms": (WALLTIME, "Total Host Walltime: 0.000 ms", "took 0 s"),
    "no queries": (TRACE, "Timing trace has 0 queries over 3.007 s", "timed 0 queries"),
}


def edited(case: str) -> str:
    old, new, _ = UNMEASURED[case]
    assert old in EXCERPT
    return EXCERPT.replace(old, new)


def plain_log(tmp_path: Path) -> Path:
    """A plain Nano log (a real line, from tests/data), 120 lines at 1 s."""
    lines = (DATA / "tegrastats_lines.txt").read_text().splitlines()
    line = lines[lines.index(next(text for text in lines if text.startswith("## nano_log |"))) + 1]
    path = tmp_path / "plain.log"
    path.write_text((line + "\n") * 120)
    return path


def test_a_measured_run_reports_its_queries_as_work():
    run = parse_trtexec(EXCERPT, UTC)
    assert run.unmeasured is None
    works = [r for r in trtexec_records(run, 0.0) if isinstance(r, Work)]
    assert [w.iterations for w in works] == [1656.0]


@pytest.mark.parametrize("case", sorted(UNMEASURED))
def test_an_unmeasured_run_reports_no_work_but_keeps_its_phases(case):
    run = parse_trtexec(edited(case), UTC)
    assert run.unmeasured is not None and UNMEASURED[case][2] in run.unmeasured
    records = trtexec_records(run, 0.0)
    assert not any(isinstance(r, Work) for r in records)
    assert [r.name for r in records if isinstance(r, Marker) and r.kind == "phase_start"] == \
        ["build", "warm-up", "timed"]
    samples = [Sample(t_wall=RUN_START + s, t_mono=float(s)) for s in range(0, 120, 10)]
    assert not any(isinstance(r, Work) for r in with_trtexec(samples, run))


@pytest.mark.parametrize("case", sorted(UNMEASURED))
def test_placing_an_unmeasured_run_says_why(case):
    run = parse_trtexec(edited(case), UTC)
    span = LogSpan("log", 0.0, 200.0, RUN_START - 10, RUN_START + 190)
    start, note = place_run(run, "t.log", span, UTC)
    assert start == RUN_START - 10
    assert note is not None and "t.log" in note and "no per-inference figures" in note
    partly = LogSpan("log", 0.0, 300.0, RUN_START + 60, RUN_START + 360)
    both = place_run(run, "t.log", partly, UTC)[1]
    assert both is not None and "overlap" in both and "no per-inference figures" in both


@pytest.mark.parametrize("case", sorted(UNMEASURED))
def test_report_prints_no_energy_per_inference_and_says_why(case, tmp_path, capsys):
    trtexec = tmp_path / "trtexec.log"
    trtexec.write_text(edited(case))
    start = datetime.fromtimestamp(RUN_START - 5, UTC).strftime("%Y-%m-%dT%H:%M:%S")
    args = ["report", str(plain_log(tmp_path)), "--trtexec", str(trtexec), "--log-start", start,
            "--tz", "UTC"]
    assert main([*args, "--format", "json"]) == 0
    captured = capsys.readouterr()
    report = json.loads(captured.out)
    timed = next(p for p in report["phases"] if p["name"] == "timed")
    assert timed["workload"] is None
    assert "no per-inference figures" in report["source"]["trtexec_note"]
    assert captured.err.count("no per-inference figures") == 1
    assert main(args) == 0
    assert " mJ" not in capsys.readouterr().out
