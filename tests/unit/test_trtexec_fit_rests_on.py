"""What trtexec's energy per inference rests on where the tegrastats log has no stamps, on the real
pairs in ../shared: ``--log-start`` alone spaces the log at an assumed interval, so its coverage is
``assumed`` and the J/inference withheld; a log fitted to trtexec's run says its J/inference rests
on the fit, which is checked against the GPU's load (the stripped pairs hold within 1%, a log padded
with idle beyond the run is withheld); and the replaying runtime fits a plain log as ``report``
does, so its timed phase is report's."""

from __future__ import annotations

import re
from datetime import timezone
from pathlib import Path
from typing import Any

import pytest
from paths import OUTSIDE

from jtop_roof.formats.trtexec import read_trtexec
from jtop_roof.formats.trtexec_span import parse_log_start
from jtop_roof.outputs.compare_usable import rests_on, usability
from jtop_roof.outputs.report import report_file, to_markdown
from jtop_roof.runtime.config import Config
from jtop_roof.runtime.inputs import place_on_file
from jtop_roof.runtime.runtime import Runtime
from jtop_roof.runtime.session import make_source
from jtop_roof.sources.replay import ReplaySource

SHARED = OUTSIDE / "shared"
LOGS, TRTEXEC = SHARED / "tegrastats" / "logs", SHARED / "trtexec"
NANO = "nano_jp4.6_csc2231_1.log"  # its tegrastats log has no stamps; its lines are 250 ms apart
BENCHLAB = [f"orinnano8gb-super_jp6.2.1_benchlab_{run}.log" for run in
            ("resnet50_int8_maxn_run3", "resnet50_int8_15w_run3", "resnet50_int8_7w_run3",
             "resnet18_fp16_maxn_run1")]
UTC = timezone.utc
STAMP = re.compile(r"^\d\d-\d\d-\d{4} \d\d:\d\d:\d\d ", re.M)

pytestmark = pytest.mark.skipif(
    not all((d / n).is_file() for d in (LOGS, TRTEXEC) for n in [NANO, *BENCHLAB]),
    reason="../shared pairs not beside the repo")


def timed(report: dict[str, Any]) -> dict[str, Any]:
    return next(p for p in report["phases"] if p["name"] == "timed")


def nano_by_log_start(interval_s: float | None) -> dict[str, Any]:
    """The nano pair placed by ``--log-start`` at trtexec's first stamp, as ``report`` places it."""
    path, run = str(LOGS / NANO), read_trtexec(TRTEXEC / NANO, UTC)
    placed = place_on_file(run, "t.log", path, tz=UTC, interval_s=interval_s,
                           log_start=parse_log_start("2023-03-29T17:56:47", UTC))
    return report_file(path, tz=UTC, interval_s=interval_s, config=Config(), trtexec=run, placement=placed)


def stripped(tmp_path: Path, name: str, idle_before_s: float = 0.0, idle_after_s: float = 0.0) -> Path:
    """The stamped log without its stamps, as JetPack 4's tegrastats writes it; with idle lines (its
    first, GPU at 0%) for ``idle_*_s`` seconds at the log's own rate (lines per stamped second)."""
    text = (LOGS / name).read_text()
    lines = text.splitlines(keepends=True)
    per_s = len(lines) / len({line[:19] for line in lines})
    bare = STAMP.sub("", text).splitlines(keepends=True)
    assert "GR3D_FREQ 0%" in bare[0]
    path = tmp_path / name
    path.write_text("".join([bare[0]] * round(idle_before_s * per_s) + bare
                            + [bare[0]] * round(idle_after_s * per_s)))
    return path


def fitted(path: Path, name: str) -> dict[str, Any]:
    return report_file(str(path), tz=UTC, interval_s=None, config=Config(),
                       trtexec=read_trtexec(TRTEXEC / name, UTC))


# -- --log-start without --interval -----------------------------------------------------------------
def test_log_start_alone_rests_on_an_assumed_interval_and_gives_no_energy_per_inference():
    report = nano_by_log_start(None)
    trtexec, work = report["trtexec"], timed(report)["workload"]
    assert report["source"]["interval_source"] == "assumed"
    assert trtexec["coverage_source"] == "assumed" and report["source"]["log_start_source"] == "given"
    assert work["j_per_iter"] is None and work["j_per_iter_above_idle"] is None
    assert "assumed" in work["j_per_iter_note"] and "--interval" in work["j_per_iter_note"]
    assert "--interval" in report["source"]["trtexec_note"]  # said on stderr too
    # With the real interval given, the window is covered in part (the log stops short): withheld
    # for that reason, the coverage given.
    given = nano_by_log_start(0.25)
    assert given["trtexec"]["coverage_source"] == "given"
    assert given["trtexec"]["coverage"] == pytest.approx(0.963, abs=0.005)
    work = timed(given)["workload"]
    assert work["j_per_iter"] is None and "99%" in work["j_per_iter_note"]


# -- a fitted log ------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", BENCHLAB)
def test_stripped_pairs_fitted_hold_within_one_percent_and_say_they_rest_on_the_fit(tmp_path, name):
    truth = timed(fitted(LOGS / name, name))["workload"]["j_per_iter"]
    report = fitted(stripped(tmp_path, name), name)
    work = timed(report)["workload"]
    assert work["j_per_iter"] == pytest.approx(truth, rel=0.01)
    assert report["trtexec"]["coverage"] is None and report["trtexec"]["coverage_source"] is None
    assert "rests on the log fitted" in work["j_per_iter_note"] and "checked" in work["j_per_iter_note"]
    assert usability(report, timed(report), work)["usable"] is True


@pytest.mark.parametrize("name", BENCHLAB)
def test_a_log_running_on_idle_beyond_trtexecs_run_fails_the_fit_check_and_is_withheld(tmp_path, name):
    """30 s of idle before the run and 10 s after: the fit would put idle lines in the timed window
    (the maxn pair read 14.3 mJ for a true 16.6)."""
    report = fitted(stripped(tmp_path, name, idle_before_s=30, idle_after_s=10), name)
    work = timed(report)["workload"]
    assert work["j_per_iter"] is None and work["j_per_iter_above_idle"] is None
    assert "does not line up" in work["j_per_iter_note"] and "--interval" in work["j_per_iter_note"]
    assert "does not line up" in report["source"]["trtexec_note"]
    assert report["trtexec"]["coverage"] is None and report["trtexec"]["coverage_source"] is None
    item = usability(report, timed(report), work)
    assert item["usable"] is False and "does not line up" in item["unusable_reason"]


def test_idle_before_the_run_alone_keeps_the_fit(tmp_path):
    """Lines before trtexec's run only stretch the fitted window back into the busy warm-up, at a
    like power: the window stays busy and ends with the GPU's work, so the fit holds, near the truth."""
    name = BENCHLAB[0]
    truth = timed(fitted(LOGS / name, name))["workload"]["j_per_iter"]
    work = timed(fitted(stripped(tmp_path, name, idle_before_s=30), name))["workload"]
    assert work["j_per_iter"] == pytest.approx(truth, rel=0.01) and "checked" in work["j_per_iter_note"]


def test_a_fitted_log_says_its_coverage_is_unknown_and_its_energy_per_inference_rests_on_the_fit():
    """A log spread over trtexec's run covers the run only because it was made to: its coverage is
    unknown (null, with why), never 1.0; its J/inference stays, said to rest on the checked fit, and
    compare uses it with the fitted interval's label."""
    report = fitted(LOGS / NANO, NANO)
    trtexec, work = report["trtexec"], timed(report)["workload"]
    assert trtexec["coverage"] is None and trtexec["coverage_source"] is None
    assert "real span is not known" in trtexec["coverage_note"]
    assert "--interval" in trtexec["coverage_note"] and "--log-start" in trtexec["coverage_note"]
    assert work["j_per_iter"] is not None
    assert "rests on the log fitted" in work["j_per_iter_note"] and "checked" in work["j_per_iter_note"]
    item = next(a for a in report["assumptions"] if a["what"] == "trtexec_coverage")
    assert item["value"] is None and item["source"] is None and item["note"] == trtexec["coverage_note"]
    md = to_markdown(report)
    assert f"- trtexec coverage: unknown ({trtexec['coverage_note']})" in md
    assert usability(report, timed(report), work) == {"usable": True, "unusable_reason": None}
    assert rests_on(report, timed(report))["interval_source"] == "inferred"


# -- the replaying runtime fits as report does --------------------------------------------------------
def test_a_replay_of_a_plain_log_with_trtexec_and_no_flags_is_fitted_as_report_fits_it():
    path = str(LOGS / NANO)
    config = Config(trtexec=str(TRTEXEC / NANO), tz="UTC")
    report = report_file(path, tz=UTC, interval_s=None, config=Config(),
                         trtexec=read_trtexec(TRTEXEC / NANO, UTC))
    source = make_source(config, "replay", path)
    try:
        assert isinstance(source, ReplaySource)
        assert source.interval_s == pytest.approx(report["trtexec"]["interval_s"])
        described = Runtime(source, config).describe()
        assert described.ledger_builder is not None and described.extras
        # the replay says its interval rests on the fit, as report does (header, /metrics)
        timing = described.info.timing
        assert timing is not None and report["source"]["interval_source"] == "inferred"
        assert timing.interval_source == "inferred"
        assert timing.interval_note == report["source"]["interval_note"]
        assert not any("not used" in note for note in described.notes)
        ledger = described.ledger_builder(described.extras)
    finally:
        source.stop()
    phase = next(p for p in ledger.phases() if p.name == "timed")
    want = timed(report)
    assert phase.samples == want["samples"] and phase.iterations == want["workload"]["iterations"]
    assert phase.duration_s == pytest.approx(want["duration_s"])
    assert phase.energy_j is not None and phase.iterations
    assert phase.energy_j / phase.iterations == pytest.approx(want["workload"]["j_per_iter"])
