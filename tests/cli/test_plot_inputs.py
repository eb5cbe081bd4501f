"""``plot`` takes ``report``'s inputs and draws the report they make; ``report``, ``export`` and
``plot`` say where ``--out`` went; ``export`` takes ``--trtexec``.

The logs are one real Orin Nano 8GB Super line (tests/data/tegrastats_lines.txt, case
``orin_nano_super``) repeated, 1 s apart, stamped from 5 s before the TensorRT 10 excerpt's run
(tests/data/trtexec: 07/26/2026 20:43:55 to 20:45:30, read in UTC), and the Nano line of
test_inputs_used for a log without stamps. What plot would draw is checked without matplotlib
(CI has none); the figure itself only where matplotlib is installed.
"""

from __future__ import annotations

import csv
import io
import sys
from collections import Counter
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from cli_support import run_main as jroof
from factories import write_synthetic
from paths import REPO, TESTS

from jtop_roof.commands.main import build_parser
from jtop_roof.commands.options import config_of, file_args, readable
from jtop_roof.commands.plot import undrawn_input
from jtop_roof.commands.report import reported
from jtop_roof.outputs import plot as pl
from jtop_roof.roofline.measured import load_probe
from jtop_roof.runtime.config import Config

DATA = TESTS / "data"
TRTEXEC = DATA / "trtexec" / "trt10_resnet50_int8_15w_excerpt.log"
WORKLOAD = REPO / "examples" / "resnet50_int8.yaml"
H200 = DATA / "h200_phases.jsonl"
PROBE = DATA / "h200_probe.json"
NCU = DATA / "h200_ncu_gemm_bf16.csv"
UTC = timezone.utc
RUN_START = datetime(2026, 7, 26, 20, 43, 55, tzinfo=UTC)
TRT_PHASES = ["build", "warm-up", "timed"]
ORIN = ["--device", "orin-nano-8gb-super", "--tz", "UTC"]
WORKED = ["--trtexec", TRTEXEC, "--workload", WORKLOAD, *ORIN]


def case_line(name: str) -> str:
    lines = (DATA / "tegrastats_lines.txt").read_text().splitlines()
    return lines[lines.index(next(line for line in lines if line.startswith(f"## {name} |"))) + 1]


@pytest.fixture
def orin_log(tmp_path: Path) -> Path:
    """120 s of the real Orin line, stamped 1 s apart from 5 s before trtexec's run."""
    body = case_line("orin_nano_super").split(" ", 2)[2]  # its own stamp (MM-DD-YYYY HH:MM:SS) off
    start = RUN_START - timedelta(seconds=5)
    path = tmp_path / "orin.log"
    path.write_text("".join(f"{(start + timedelta(seconds=n)).strftime('%m-%d-%Y %H:%M:%S')} {body}\n"
                            for n in range(120)))
    return path


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def report_of(*args: object) -> tuple[dict, object]:
    """What ``plot ARGS`` hands the figure: the report and the roof inputs, as ``report`` builds them."""
    parsed = build_parser().parse_args(["plot", *map(str, args)])
    tz, interval_s = file_args(parsed)
    with readable(parsed.file) as path:
        return reported(parsed, config_of(parsed), path, tz=tz, interval_s=interval_s, command="plot")


@pytest.fixture
def no_figure(monkeypatch: pytest.MonkeyPatch) -> list[dict]:
    """plot's drawing replaced by a record of what it was given (CI has no matplotlib)."""
    drawn: list[dict] = []

    def plot_file(path: str, out: str, **kw: object) -> str:
        drawn.append({"path": path, "out": out, **kw})
        return out

    monkeypatch.setattr(pl, "pyplot", lambda: None)
    monkeypatch.setattr(pl, "plot_file", plot_file)
    return drawn


# -- arguments ------------------------------------------------------------------------------------------
def _options(command: str) -> set[str]:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    return {s for a in sub.choices[command]._actions if a.help != "==SUPPRESS==" for s in a.option_strings}


def test_plot_takes_every_input_report_takes():
    missing = _options("report") - _options("plot") - {"--format"}
    assert not missing
    args = build_parser().parse_args(["plot", "f.log", "--trtexec", "t.log", "--trtexec-offset", "2.5",
                                      "--log-start", "2026-07-26T20:43:50", "--workload", "w.yaml", "--ncu",
                                      "k.csv", "--probe", "p.json", "--device", "nano", "--power-mode", "5W"])
    assert (args.trtexec, args.trtexec_offset, args.log_start) == ("t.log", 2.5, "2026-07-26T20:43:50")
    assert (args.workload, args.ncu, args.probe, args.device, args.power_mode) == (
        "w.yaml", "k.csv", "p.json", "nano", "5W")


def test_export_takes_trtexecs_flags_and_refuses_the_roofs(capsys):
    assert {"--trtexec", "--trtexec-offset", "--log-start"} <= _options("export")
    for flag in ("--workload", "--ncu", "--probe"):
        code, _, err = jroof(capsys, "export", H200, flag, "x")
        assert code == 2 and f"{flag} is not used by `export`" in one_line(err)


@pytest.mark.parametrize(("args", "needle"), [
    (["plot", "-"], "give --out PATH"),
    (["plot", H200, "--log-start", "2026-07-26T20:43:50"], "give --trtexec FILE too"),
    (["plot", H200, "--trtexec-offset", "3"], "--trtexec-offset shifts --trtexec's stamps"),
    (["export", H200, "--trtexec-offset", "3"], "--trtexec-offset shifts --trtexec's stamps"),
    (["export", H200, "--log-start", "2026-07-26T20:43:50"], "give --trtexec FILE too"),
    (["plot", H200, "--trtexec-offset", "nan", "--trtexec", TRTEXEC], "--trtexec-offset"),
    (["plot", H200, "--trtexec", TRTEXEC], "do not overlap"),
    (["plot", "/dev/zero", "--out", "x.svg"], "cannot"),
])
def test_inputs_that_cannot_be_used_are_one_line(capsys, no_figure, args, needle):
    code, _, err = jroof(capsys, *args)
    assert code == 2 and needle in one_line(err)
    assert not no_figure


def test_roof_inputs_with_no_roofline_to_go_on_are_refused(capsys, no_figure, tmp_path):
    log = tmp_path / "nano.log"
    log.write_text((case_line("nano_log") + "\n") * 5)
    code, _, err = jroof(capsys, "plot", log, "--device", "nano", "--probe", PROBE,
                         "--out", tmp_path / "x.svg")
    # an H200 probe on a Nano is refused by report's own check first; a fitting one finds no roof
    assert code == 2 and "--probe" in one_line(err)
    report, _ = report_of(H200)
    report["phases"] = [dict(p, roofline=None) for p in report["phases"]]
    report["whole"] = dict(report["whole"], roofline=None)
    args = build_parser().parse_args(["plot", str(H200), "--probe", str(PROBE)])
    why = undrawn_input(args, report, Config())
    assert why is not None and why.startswith(f"--probe {PROBE}: plot draws it on the roofline")


def test_without_matplotlib_plot_says_the_readmes_install_line_before_reading(capsys, monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    code, _, err = jroof(capsys, "plot", tmp_path / "missing.log")
    assert code == 2 and one_line(err) == f"jroof-tui: error: {pl.NEEDS_EXTRA}"
    readme = (REPO / "README.md").read_text()
    assert "pip install '.[plot]'" in pl.NEEDS_EXTRA and "pip install '.[plot]'" in readme
    assert "jroof-tui[plot]" not in pl.NEEDS_EXTRA


# -- what plot draws, from the report --------------------------------------------------------------------
def test_trtexecs_phases_and_the_workload_point_are_the_reports(orin_log):
    report, _ = report_of(orin_log, *WORKED, "--power-mode", "15W")
    spans = pl.phase_spans(report)
    assert [s.name for s in spans] == TRT_PHASES
    for span, phase in zip(spans, report["phases"], strict=True):
        assert (span.start_s, span.end_s) == (phase["start_s"], phase["end_s"])
    assert pl.labels_crowd(spans, 119.0)  # the warm-up lasts ~2 s between a long build and timing
    roof = pl.roofline_data(report, Config())
    assert roof is not None and roof.precision == "int8_tensor" and pl.rate_word(roof.precision) == "OP"
    timed = report["phases"][2]["roofline"]
    (point,) = roof.points
    assert point.label.startswith(f"timed: {timed['verdict']}")
    assert point.flops_per_s == timed["achieved_flops_per_s"]
    assert point.intensity == timed["intensity_flop_per_byte"]
    assert any(r.label == "mode's maximum clocks (int8_tensor)" for r in roof.roofs)


def test_without_the_workload_trtexecs_timed_phase_has_no_point(orin_log):
    report, _ = report_of(orin_log, "--trtexec", TRTEXEC, *ORIN, "--power-mode", "15W")
    assert [s.name for s in pl.phase_spans(report)] == TRT_PHASES
    assert pl.roofline_data(report, Config()) is None  # iterations, but no FLOPs to place them by


def test_the_power_mode_sets_the_modes_roof(orin_log):
    def top(mode: str) -> float:
        report, _ = report_of(orin_log, *WORKED, "--power-mode", mode)
        assert (report["device"], report["power_mode"]) == ("orin-nano-8gb-super", mode)
        roof = pl.roofline_data(report, Config())
        assert roof is not None
        (mode_roof,) = [r for r in roof.roofs if r.linestyle == "--"]
        assert mode_roof.peak_flops_per_s is not None
        return mode_roof.peak_flops_per_s

    assert top("7W") < top("15W") < top("MAXN_SUPER")


def test_probe_and_kernels_go_on_the_roofline():
    report, inputs = report_of(H200, "--probe", PROBE, "--ncu", NCU)
    roof = pl.roofline_data(report, Config(), inputs.probe)
    assert roof is not None and roof.precision == "bf16_tensor"
    probe = load_probe(PROBE)
    (measured,) = [r for r in roof.roofs if r.linestyle == ":"]
    assert measured.label.startswith(probe.summary())
    assert measured.peak_flops_per_s == probe.compute["bf16_tensor"].value
    assert measured.bandwidth_bytes_per_s == probe.bandwidth_bytes_per_s
    (kernel,) = [p for p in roof.points if p.marker == "x"]
    ncu = report["ncu"][0]
    assert kernel.flops_per_s == ncu["achieved_flops_per_s"]
    assert kernel.intensity == ncu["intensity_flop_per_byte"]
    assert kernel.label.endswith("(ncu)") and len(kernel.label.split(":")[0]) <= 40


def test_plot_hands_the_figure_reports_report(capsys, no_figure, orin_log, tmp_path):
    out = tmp_path / "r.svg"
    code, stdout, err = jroof(capsys, "plot", orin_log, "--trtexec", TRTEXEC, "--workload", WORKLOAD, *ORIN,
                              "--out", out)
    assert code == 0 and stdout == ""
    assert one_line(err) == f"jroof-tui: wrote {out} (figure, svg)"
    (drawn,) = no_figure
    code, stdout, _ = jroof(capsys, "report", orin_log, "--trtexec", TRTEXEC, "--workload", WORKLOAD, *ORIN,
                            "--format", "json")
    import json

    assert drawn["report"] == json.loads(stdout)


@pytest.mark.parametrize(("a", "b", "crowd"), [((0, 10), (10, 20), False), ((48, 50), (50, 52), True)])
def test_labels_crowd_only_when_names_would_touch(a, b, crowd):
    spans = [pl.PhaseSpan("first", *a, "red"), pl.PhaseSpan("second", *b, "blue")]
    assert pl.labels_crowd(spans, 20.0 if not crowd else 100.0) is crowd
    assert not pl.labels_crowd(spans[:1], 100.0) and not pl.labels_crowd([], 0.0)


# -- --out says where; export's phases and throttle columns ---------------------------------------------
def test_report_out_says_where_and_writes_what_stdout_would(capsys, tmp_path):
    code, text, err = jroof(capsys, "report", H200, "--tz", "UTC")
    assert code == 0 and "wrote" not in err
    out = tmp_path / "r.md"
    code, stdout, err = jroof(capsys, "report", H200, "--tz", "UTC", "--out", out)
    assert code == 0 and stdout == ""
    assert one_line(err) == f"jroof-tui: wrote {out} (report, md)"
    assert out.read_text() == text


def test_report_out_that_cannot_be_written_says_so_and_not_wrote(capsys, tmp_path):
    code, _, err = jroof(capsys, "report", H200, "--out", tmp_path / "none" / "r.md")
    assert code == 2 and "cannot write" in one_line(err) and "wrote" not in err.replace("write", "")


def test_export_out_says_where_and_how_many_rows(capsys, tmp_path):
    code, text, err = jroof(capsys, "export", H200)
    assert code == 0 and "wrote" not in err
    out = tmp_path / "r.csv"
    code, stdout, err = jroof(capsys, "export", H200, "--out", out)
    rows = list(csv.DictReader(out.open()))
    assert code == 0 and stdout == "" and out.read_text() == text
    assert one_line(err) == f"jroof-tui: wrote {out} ({len(rows)} samples, csv)"


def test_export_puts_trtexecs_phases_in_its_phase_column_as_report_counts_them(capsys, orin_log):
    code, text, _ = jroof(capsys, "export", orin_log, "--tz", "UTC")
    assert code == 0 and not {row["phase"] for row in csv.DictReader(io.StringIO(text))} - {""}
    code, text, _ = jroof(capsys, "export", orin_log, "--trtexec", TRTEXEC, "--tz", "UTC")
    assert code == 0
    counted = Counter(row["phase"] for row in csv.DictReader(io.StringIO(text)))
    report, _ = report_of(orin_log, "--trtexec", TRTEXEC, "--tz", "UTC")
    assert {p["name"]: p["samples"] for p in report["phases"]} == {n: counted[n] for n in TRT_PHASES}


def test_export_places_trtexec_by_log_start_on_a_log_without_stamps(capsys, tmp_path):
    log = tmp_path / "nano.log"
    log.write_text((case_line("nano_log") + "\n") * 120)
    code, _, err = jroof(capsys, "export", log, "--trtexec", TRTEXEC, "--tz", "UTC", "--interval", "1000")
    assert code == 2 and "--log-start" in one_line(err)
    # With neither flag the log is fitted to trtexec's run, and that is said.
    code, text, err = jroof(capsys, "export", log, "--trtexec", TRTEXEC, "--tz", "UTC")
    assert code == 0 and "inferred" in err
    assert set(TRT_PHASES) <= {row["phase"] for row in csv.DictReader(io.StringIO(text))}
    start = (RUN_START - timedelta(seconds=5)).strftime("%Y-%m-%dT%H:%M:%S")
    code, text, _ = jroof(capsys, "export", log, "--trtexec", TRTEXEC, "--log-start", start, "--tz", "UTC")
    assert code == 0
    assert set(TRT_PHASES) <= {row["phase"] for row in csv.DictReader(io.StringIO(text))}


def test_exports_throttle_column_follows_the_power_mode_as_reports_events(capsys, tmp_path):
    path = tmp_path / "run.jsonl"
    write_synthetic(path)
    kinds = {}
    for mode in ([], ["--power-mode", "15W"]):
        code, text, _ = jroof(capsys, "export", path, *mode)
        assert code == 0
        column = {kind.split(":")[0] for row in csv.DictReader(io.StringIO(text)) for kind in
                  row["throttle"].split(";") if kind}
        report, _ = report_of(path, *mode)
        assert column == {event["kind"] for event in report["events"]}
        kinds[tuple(mode)] = column
    assert kinds[()] != kinds[("--power-mode", "15W")]


# -- the figure (matplotlib) ---------------------------------------------------------------------------
def svg_texts(path: Path) -> str:
    """The SVG's text: matplotlib draws glyphs as paths and writes each text as a comment."""
    return path.read_text(encoding="utf-8")


def test_svg_names_trtexecs_phases_the_workloads_point_and_the_mode(capsys, orin_log, tmp_path):
    pytest.importorskip("matplotlib")
    out = tmp_path / "r.svg"
    code, _, err = jroof(capsys, "plot", orin_log, "--trtexec", TRTEXEC, "--workload", WORKLOAD, *ORIN,
                         "--power-mode", "15W", "--out", out)
    assert code == 0, err
    svg = svg_texts(out)
    report, _ = report_of(orin_log, *WORKED, "--power-mode", "15W")
    for name in TRT_PHASES:
        assert f"<!-- phase {name} -->" in svg
    assert f"<!-- timed: {report['phases'][2]['roofline']['verdict']} -->" in svg
    assert "orin-nano-8gb-super, 15W" in svg and "<!-- OP/s -->" in svg
    assert "<!-- mode's maximum clocks (int8_tensor) -->" in svg


def test_svg_draws_the_probes_roof_and_the_kernels(capsys, tmp_path):
    pytest.importorskip("matplotlib")
    out = tmp_path / "h.svg"
    code, _, err = jroof(capsys, "plot", H200, "--probe", PROBE, "--ncu", NCU, "--out", out)
    assert code == 0, err
    svg = svg_texts(out)
    assert load_probe(PROBE).summary().split(",")[0] in svg
    assert "(ncu) -->" in svg and "$\\mathdefault" not in svg  # tick labels as plain text


def test_plot_reads_standard_input(capsys, monkeypatch, tmp_path):
    pytest.importorskip("matplotlib")
    stdin = io.TextIOWrapper(io.BytesIO(H200.read_bytes()))
    monkeypatch.setattr(sys, "stdin", stdin)
    out = tmp_path / "s.svg"
    code, _, err = jroof(capsys, "plot", "-", "--out", out)
    assert code == 0, err
    assert "<!-- - — h200, mode unknown -->" in svg_texts(out)
