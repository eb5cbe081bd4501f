"""``compare``: items from recordings, logs and report JSON; deltas, verdicts and the cheapest mode.

The real data: the benchlab ResNet-50 INT8 runs of an Orin Nano 8GB Super at 7W, 15W and
MAXN_SUPER in ../shared (skipped when absent). Each tegrastats log becomes a recording with the
trtexec timed window as a ``timed`` phase and its queries as a work report, and goes through the
report's pipeline; energy per inference is then checked against a trapezoid written here.
"""

from __future__ import annotations

import json
from datetime import timezone
from pathlib import Path

import pytest
from paths import REPO, TESTS

from jtop_roof.formats.logfile import iter_records
from jtop_roof.formats.trtexec import read_trtexec
from jtop_roof.model.codec import json_line, record_to_json
from jtop_roof.model.records import Marker, Sample, Work
from jtop_roof.outputs import compare as cmp
from jtop_roof.runtime.config import Config

ROOT = REPO
SHARED = ROOT.parent / "shared"
LOGS = SHARED / "tegrastats" / "logs"
TRTEXEC = SHARED / "trtexec"
MODES = {"7w": "7W", "15w": "15W", "maxn": "MAXN_SUPER"}
UTC = timezone.utc
DEVICE = "orin-nano-8gb-super"


def benchlab(mode: str) -> tuple[Path, Path]:
    name = f"orinnano8gb-super_jp6.2.1_benchlab_resnet50_int8_{mode}_run3.log"
    return LOGS / name, TRTEXEC / name


needs_shared = pytest.mark.skipif(not all(p.is_file() for m in MODES for p in benchlab(m)),
                                  reason="../shared benchlab runs not beside the repo")


def to_recording(log: Path, trt: Path, out: Path, power_mode: str) -> tuple[list[Sample], float]:
    """The plain log as a recording with the timed window as phase ``timed`` and its queries as a
    work report; returns the samples inside the window and the iterations."""
    run = read_trtexec(trt, UTC)
    timed = run.timed
    assert timed is not None and timed.start_wall is not None and timed.end_wall is not None
    assert run.iterations
    samples = [r for r in iter_records(log.read_text().splitlines(), tz=UTC) if isinstance(r, Sample)
               and r.is_sample]
    first = samples[0]
    lines = [json_line({"type": "header", "schema": 1, "app": "jroof-tui", "version": "test",
                        "source": "replay", "start_wall": first.t_wall, "start_mono": first.t_mono,
                        "interval_ms": 100, "device": DEVICE, "power_mode": power_mode})]
    inside: list[Sample] = []
    state = "before"
    for sample in samples:
        assert sample.t_wall is not None and sample.t_mono is not None
        within = timed.start_wall <= sample.t_wall <= timed.end_wall
        # The phase's edges are at the first and last sample inside the window (a phase runs
        # marker to marker), so the samples' own trapezoid is its energy.
        if state == "before" and within:
            lines.append(json_line(record_to_json(Marker("phase_start", "timed", sample.t_wall,
                                                         sample.t_mono, "script"))))
            state = "in"
        elif state == "in" and not within:
            last = inside[-1]
            assert last.t_mono is not None
            lines.append(json_line(record_to_json(Work(run.iterations, None, None, "int8", last.t_wall,
                                                       last.t_mono))))
            lines.append(json_line(record_to_json(Marker("phase_end", None, last.t_wall, last.t_mono,
                                                         "script"))))
            state = "after"
        if state == "in":
            inside.append(sample)
        lines.append(json_line(record_to_json(sample)))
    out.write_text("".join(lines))
    return inside, float(run.iterations)


def trapezoid_j(samples: list[Sample], rail: str = "VDD_IN") -> float:
    """Independent: energy of the rail over the samples, trapezoid over their stream times."""
    total = 0.0
    for a, b in zip(samples, samples[1:], strict=False):
        assert a.t_mono is not None and b.t_mono is not None
        total += (a.rails[rail].now_mw + b.rails[rail].now_mw) / 2 * (b.t_mono - a.t_mono) / 1000
    return total


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    if not all(p.is_file() for m in MODES for p in benchlab(m)):
        pytest.skip("../shared benchlab runs not beside the repo")
    tmp = tmp_path_factory.mktemp("benchlab")
    out = {}
    for mode, power_mode in MODES.items():
        log, trt = benchlab(mode)
        rec = tmp / f"r50_{mode}.jsonl"
        inside, iterations = to_recording(log, trt, rec, power_mode)
        report = cmp.file_report(str(rec), tz=UTC, interval_s=None, config=Config())
        saved = tmp / f"r50_{mode}.json"
        saved.write_text(json.dumps(report))
        run = read_trtexec(trt, UTC)
        out[mode] = {"recording": rec, "json": saved, "report": report, "inside": inside,
                     "iterations": iterations, "trt": run}
    return out


@needs_shared
def test_items_energy_per_inference_matches_an_independent_trapezoid(runs):
    for mode, power_mode in MODES.items():
        run = runs[mode]
        item = cmp.item_from_report(run["report"], mode)
        assert item["span"] == "timed"
        assert item["device"] == DEVICE and item["power_mode"] == power_mode
        energy = trapezoid_j(run["inside"])
        duration = run["inside"][-1].t_mono - run["inside"][0].t_mono
        assert item["energy_j"] == pytest.approx(energy, rel=1e-9)
        assert item["duration_s"] == pytest.approx(duration, rel=1e-9)
        assert item["iterations"] == run["iterations"]
        assert item["j_per_iter"] == pytest.approx(energy / run["iterations"], rel=1e-9)
        assert item["throughput_per_s"] == pytest.approx(run["iterations"] / duration, rel=1e-9)
        # The window the samples span is trtexec's own walltime, to the log's 100 ms resolution.
        assert duration == pytest.approx(run["trt"].host_walltime_s, abs=0.35)
        assert item["power_w"] == pytest.approx(energy / duration, rel=1e-9)
        # The mean clocks come from the report's ceilings: check one against the samples.
        gpu = [s.gpu.mhz for s in run["inside"] if s.gpu is not None and s.gpu.mhz is not None]
        assert item["gpu_mhz"] == pytest.approx(sum(gpu) / len(gpu))


@needs_shared
def test_compare_cheapest_and_verdicts_on_the_three_power_modes(runs):
    items = [cmp.load_item(str(runs[m]["recording"]), tz=UTC, config=Config(),
                           label=MODES[m]) for m in ("maxn", "15w", "7w")]
    result = cmp.compare(items)
    per_iter = {i["label"]: trapezoid_j(runs[m]["inside"]) / runs[m]["iterations"]
                for m, i in zip(("maxn", "15w", "7w"), items, strict=True)}
    best = min(per_iter, key=lambda k: per_iter[k])
    assert result["cheapest"]["label"] == best
    assert result["cheapest"]["j_per_iter"] == pytest.approx(per_iter[best], rel=1e-9)
    assert result["cheapest"]["power_mode"] == best
    # Deltas: one verdict line per item after the first, with the energy delta computed here.
    lines = result["verdicts"]
    assert lines[0].startswith("15W vs MAXN_SUPER: GPU clock ")
    rel = (per_iter["15W"] - per_iter["MAXN_SUPER"]) / per_iter["MAXN_SUPER"]
    word = "more" if rel > 0 else "less"
    assert f"{abs(rel) * 100:.0f}% {word} energy per inference" in lines[0]
    assert any(line.startswith("Lowest energy per inference: ") and best in line for line in lines)
    # Throughput follows the mode here (the GPU clock triples from 7W to MAXN). What bounds it is
    # the rows' roofline verdict: unknown (the work reported no FLOPs or bytes), and no line says more.
    tp = {i["label"]: i["throughput_per_s"] for i in items}
    assert tp["MAXN_SUPER"] > 1.5 * tp["7W"]
    assert {i["roofline"] for i in items} == {"unknown"}
    assert any(line.startswith("Throughput follows the mode") and "roofline verdict unknown" in line
               for line in lines)
    assert not any("-bound" in line for line in lines)
    fastest = [line for line in lines if "the fastest, MAXN_SUPER (MAXN_SUPER)" in line]
    assert fastest


@needs_shared
def test_min_throughput_excludes_slow_modes_and_none_qualifying_is_null(runs):
    items = [cmp.item_from_report(runs[m]["report"], MODES[m]) for m in ("7w", "15w", "maxn")]
    tp = {i["label"]: i["throughput_per_s"] for i in items}
    need = (tp["15W"] + tp["MAXN_SUPER"]) / 2 if tp["15W"] < tp["MAXN_SUPER"] else tp["MAXN_SUPER"]
    result = cmp.compare(items, min_throughput=need)
    fit = [i for i in items if i["throughput_per_s"] >= need]
    assert result["cheapest"]["label"] == min(fit, key=lambda i: i["j_per_iter"])["label"]
    assert result["cheapest"]["throughput_per_s"] >= need
    none = cmp.compare(items, min_throughput=1e9)
    assert none["cheapest"] is None
    assert any(line.startswith("No item reaches at 1e+09/s or more") for line in none["verdicts"])


@needs_shared
def test_report_json_and_phase_items(runs, tmp_path):
    by_json = cmp.load_item(str(runs["7w"]["json"]), tz=UTC)
    by_file = cmp.load_item(str(runs["7w"]["recording"]), tz=UTC, config=Config())
    assert by_json["j_per_iter"] == by_file["j_per_iter"] and by_json["span"] == "timed"
    report = runs["7w"]["report"]
    bare = {**report, "phases": [], "whole": {**report["whole"], "workload": None}}
    whole = cmp.item_from_report(bare, "w")
    assert whole["span"] == "whole run" and whole["j_per_iter"] is None
    named = cmp.load_item(f"{runs['7w']['json']}#timed", tz=UTC)
    assert named["label"].endswith("#timed") and named["span"] == "timed"
    with pytest.raises(cmp.CompareError, match="no phase named 'nope'"):
        cmp.load_item(f"{runs['7w']['json']}#nope", tz=UTC)
    result = cmp.compare([by_json, whole])
    text = cmp.to_markdown(result)
    assert "| mJ per inference |" not in text  # the whole run has no work: "iteration"
    assert "mJ per iteration" in text
    json.loads(cmp.to_json(result))


def test_plain_log_items_without_work_give_no_cheapest(tmp_path):
    log = tmp_path / "a.log"
    log.write_text(
        "07-26-2026 21:22:45 RAM 2195/7620MB CPU [0%@960] EMC_FREQ 0%@2133 GR3D_FREQ 0%@[407] "
        "tj@48.9C VDD_IN 3628mW/3628mW\n"
        "07-26-2026 21:22:46 RAM 2195/7620MB CPU [0%@960] EMC_FREQ 0%@2133 GR3D_FREQ 0%@[407] "
        "tj@48.9C VDD_IN 4628mW/3628mW\n"
        "07-26-2026 21:22:47 RAM 2195/7620MB CPU [0%@960] EMC_FREQ 0%@2133 GR3D_FREQ 0%@[407] "
        "tj@48.9C VDD_IN 3628mW/3628mW\n")
    a = cmp.load_item(str(log), tz=UTC)
    # Two 1 s steps: (3.628 + 4.628) / 2 W each.
    assert a["span"] == "whole run" and a["energy_j"] == pytest.approx(8.256)
    assert a["power_w"] == pytest.approx(4.128) and a["samples"] == 3
    b = {**a, "label": "b", "energy_j": a["energy_j"] * 1.5, "power_w": a["power_w"] * 1.5}
    result = cmp.compare([a, b])
    assert result["cheapest"] is None
    assert result["verdicts"][0] == ("b vs a: mean power 50% higher (6.19 vs 4.13 W); "
                                     "50% more energy (12.4 vs 8.3 J)")
    assert any(v.startswith("No item has an energy per iteration") for v in result["verdicts"])
    assert json.loads(cmp.to_json(result))["cheapest"] is None


def test_errors_are_one_line(tmp_path):
    with pytest.raises(cmp.CompareError, match="No such file"):
        cmp.load_item(str(tmp_path / "missing.log"), tz=UTC)
    bad = tmp_path / "bad.json"
    bad.write_text('{"whole": ')
    with pytest.raises(cmp.CompareError, match="not a report JSON"):
        cmp.load_item(str(bad), tz=UTC)
    other = tmp_path / "other.json"
    other.write_text('{"a": 1}')
    with pytest.raises(cmp.CompareError, match="no 'whole' and 'phases'"):
        cmp.load_item(str(other), tz=UTC)
    foreign = tmp_path / "foreign.jsonl"
    foreign.write_text('{"type": "header", "app": "other", "schema": 1}\n')
    with pytest.raises(cmp.CompareError, match="not a jroof recording"):
        cmp.load_item(str(foreign), tz=UTC)


def test_phases_of_one_run_in_one_mode_get_no_power_mode_verdict():
    """Two different workloads (the H200 run's copy and GEMM) are not the same work per mode:
    deltas yes, but no "throughput follows the mode"."""
    recording = TESTS / "data" / "h200_phases.jsonl"
    items = [cmp.load_item(f"{recording}#{name}", tz=UTC, config=Config()) for name in ("copy", "gemm-bf16")]
    assert all(i["throughput_per_s"] for i in items) and items[0]["power_mode"] == items[1]["power_mode"]
    lines = cmp.compare(items)["verdicts"]
    assert lines and not any("follows the mode" in line or "Paced" in line for line in lines)


def test_each_item_says_what_its_figures_rest_on(tmp_path):
    """A stamped log and the same lines without stamps: compare says the second's interval is
    assumed (its duration rests on it) in the JSON items and a row of the md table."""
    lines = [line for line in (ROOT / "tests" / "data" / "fake_tegrastats_orinnano_super.txt")
             .read_text(encoding="utf-8").splitlines() if line and not line.startswith("#")]
    stamped, bare = tmp_path / "stamped.log", tmp_path / "bare.log"
    # re-stamped two lines a second, so that the stamps tell the interval (0.5 s)
    restamped = [f"04-19-2026 01:31:{10 + i // 2:02d} {line[20:]}" for i, line in enumerate(lines)]
    stamped.write_text("\n".join(restamped) + "\n", encoding="utf-8")
    bare.write_text("\n".join(line[20:] for line in lines) + "\n", encoding="utf-8")
    items = [cmp.load_item(str(path), tz=UTC, config=Config()) for path in (stamped, bare)]
    assert [(i["interval_source"], i["device_source"]) for i in items] == [("measured", "inferred"),
                                                                          ("assumed", "inferred")]
    assert items[1]["interval_s"] == 1.0 and items[0]["interval_s"] == 0.5
    # the power is measured, but the bare log's joules rest on its assumed time between lines
    assert [i["energy_total_source"] for i in items] == ["measured", "assumed"]
    table = cmp.to_markdown(cmp.compare(items))
    row = next(line for line in table.splitlines() if line.startswith("| interval |"))
    assert "(measured)" in row and "1000 ms (assumed)" in row
