"""trtexec's run on its tegrastats log, on the real pairs in ../shared: the timed phase holds the
iterations; a plain log without stamps is fitted to its paired run and says so (flags win); the
log's coverage of the timed window is stated, and below 99% the energy per inference is withheld
with the reason; the whole run gives no energy per inference over trtexec's timed-only count."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
from paths import OUTSIDE

from jtop_roof.formats.trtexec import read_trtexec
from jtop_roof.outputs.report import report_file
from jtop_roof.runtime.config import Config

SHARED = OUTSIDE / "shared"
LOGS, TRTEXEC = SHARED / "tegrastats" / "logs", SHARED / "trtexec"
NANO = "nano_jp4.6_csc2231_1.log"  # trtexec --loadEngine; its tegrastats log has no stamps (250 ms)
BENCHLAB = [f"orinnano8gb-super_jp6.2.1_benchlab_{run}.log" for run in
            ("resnet50_int8_maxn_run3", "resnet50_int8_15w_run3", "resnet50_int8_7w_run3",
             "resnet18_fp16_maxn_run1")]
MAXN = BENCHLAB[0]
UTC = timezone.utc

PAIRS_HERE = all((d / n).is_file() for d in (LOGS, TRTEXEC) for n in [NANO, *BENCHLAB])
needs_shared = pytest.mark.skipif(not PAIRS_HERE, reason="../shared pairs not beside the repo")
pytestmark = needs_shared


def jroof(*args: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "jtop_roof", *map(str, args)], capture_output=True,
                          text=True, timeout=300)


def kept_pair(tmp_path: Path, name: str, log_lines: list[str] | None = None, trtexec_text: str | None = None,
              stem: str = "run") -> Path:
    """The pair as ``run`` keeps it: FILE and FILE.trtexec.log side by side."""
    log = tmp_path / f"{stem}.log"
    if log_lines is None:
        shutil.copyfile(LOGS / name, log)
    else:
        log.write_text("".join(log_lines))
    kept = tmp_path / f"{stem}.log.trtexec.log"
    kept.write_text((TRTEXEC / name).read_text() if trtexec_text is None else trtexec_text)
    return log


def phases(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {p["name"]: p for p in report["phases"]}


def trtexec_text_window(name: str) -> tuple[float, float]:
    """The timed window read from the trtexec log's text, without the module: the performance
    summary's stamp, less its Total Host Walltime (UTC)."""
    text = (TRTEXEC / name).read_text().splitlines()
    summary = next(line for line in text if "=== Performance summary ===" in line)
    end = datetime.strptime(summary[1:20], "%m/%d/%Y-%H:%M:%S").replace(tzinfo=UTC).timestamp()
    walltime = next(line for line in text if "Total Host Walltime:" in line)
    return end - float(walltime.split("Total Host Walltime:")[1].split()[0]), end


# -- a loadEngine run on a log without stamps ----------------------------------------------------------
def test_load_engine_run_beside_a_plain_log_is_fitted_and_its_timed_phase_holds_the_iterations(tmp_path):
    report = report_file(str(kept_pair(tmp_path, NANO)), tz=UTC, interval_s=None, config=Config())
    got = phases(report)
    assert list(got) == ["build", "warm-up", "timed"]
    run = read_trtexec(TRTEXEC / NANO, UTC)
    assert got["timed"]["workload"]["iterations"] == run.iterations == 10
    assert got["build"]["workload"] is None and got["warm-up"]["workload"] is None
    assert got["timed"]["duration_s"] == pytest.approx(run.host_walltime_s, abs=0.01)
    # Most lines lie in the 20 s timed window, at the GPU's load: it draws more than the build.
    assert got["timed"]["samples"] > got["build"]["samples"] + got["warm-up"]["samples"]
    assert got["timed"]["power_w"]["mean"] > 1.5 * got["build"]["power_w"]["mean"]
    # Said: where the log starts and its interval are inferred from trtexec's run.
    assert report["source"]["log_start_source"] == "inferred"
    assert report["source"]["log_start"].startswith("2023-03-29T17:56:47")
    assert "inferred" in report["source"]["trtexec_note"]
    lines = len((LOGS / NANO).read_text().splitlines())
    first, last = min(p.start_wall for p in run.phases if p.start_wall), run.phases[-1].end_wall
    assert report["trtexec"]["interval_s"] == pytest.approx((last - first) / (lines - 1))
    assert report["trtexec"]["interval_source"] == "inferred"
    # fitted to the run, the log's real span is not known: nor is its coverage of the timed window
    assert report["trtexec"]["coverage"] is None and report["trtexec"]["coverage_source"] is None


def test_load_engine_run_given_with_trtexec_and_no_flags_is_fitted_and_said_on_stderr():
    result = jroof("report", LOGS / NANO, "--trtexec", TRTEXEC / NANO, "--tz", "UTC", "--format", "json")
    assert result.returncode == 0, result.stderr
    assert "no timestamps" in result.stderr and "inferred" in result.stderr
    report = json.loads(result.stdout)
    assert phases(report)["timed"]["workload"]["iterations"] == 10
    assert report["source"]["log_start_source"] == "inferred"


def test_flags_the_user_gives_win_over_the_fit():
    result = jroof("report", LOGS / NANO, "--trtexec", TRTEXEC / NANO, "--tz", "UTC", "--format", "json",
                   "--log-start", "2023-03-29T17:56:48", "--interval", "250")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["source"]["log_start_source"] == "given"
    assert report["source"]["log_start"].startswith("2023-03-29T17:56:48")
    assert report["trtexec"]["interval_s"] is None and report["trtexec"]["interval_source"] is None
    assert report["trtexec"]["coverage_source"] == "given"
    assert report["whole"]["duration_s"] == pytest.approx(0.25 * 113)


# -- coverage of the timed window ------------------------------------------------------------------------
@pytest.mark.parametrize("name", BENCHLAB)
def test_stamped_pairs_cover_their_timed_window_and_the_whole_run_gives_no_energy_per_inference(name):
    report = report_file(str(LOGS / name), tz=UTC, interval_s=None, config=Config(),
                         trtexec=read_trtexec(TRTEXEC / name, UTC))
    timed = phases(report)["timed"]
    assert report["trtexec"]["coverage"] == 1.0 and report["trtexec"]["coverage_source"] == "measured"
    work = timed["workload"]
    assert work["j_per_iter"] == pytest.approx(timed["energy_j"]["total"] / work["iterations"])
    assert work["j_per_iter_note"] is None
    start, end = trtexec_text_window(name)
    assert timed["duration_s"] == pytest.approx(end - start, abs=1e-3)
    whole = report["whole"]["workload"]
    assert whole["iterations"] == work["iterations"]  # the count is kept, the quotient is not
    assert whole["j_per_iter"] is None and whole["j_per_iter_above_idle"] is None
    assert whole["throughput_per_s"] is None and report["whole"]["roofline"] is None
    assert "only in `timed`" in whole["j_per_iter_note"]


def cut_head(fraction_of_window: float) -> tuple[list[str], float]:
    """The maxn log from the line nearest ``fraction_of_window`` of its timed window before the
    window's end, and that fraction as its stamps (spread within their second) say it."""
    lines = (LOGS / MAXN).read_text().splitlines(keepends=True)
    start, end = trtexec_text_window(MAXN)
    wanted = end - fraction_of_window * (end - start)
    def wall(i: int) -> float:
        second = lines[i][:19]
        same = [n for n, line in enumerate(lines) if line[:19] == second]
        base = datetime.strptime(second, "%m-%d-%Y %H:%M:%S").replace(tzinfo=UTC).timestamp()
        return base + same.index(i) / len(same)
    first = min(range(len(lines)), key=lambda i: abs(wall(i) - wanted))
    return lines[first:], (end - wall(first)) / (end - start)


def test_a_log_covering_part_of_the_timed_window_gives_coverage_and_no_energy_per_inference(tmp_path):
    lines, expected = cut_head(0.91)
    assert 0.85 < expected < 0.95
    result = jroof("report", kept_pair(tmp_path, MAXN, log_lines=lines), "--tz", "UTC", "--format", "json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    coverage = report["trtexec"]["coverage"]
    assert coverage == pytest.approx(expected, abs=0.02)
    assert "99%" in report["trtexec"]["coverage_note"]
    work = phases(report)["timed"]["workload"]
    assert work["iterations"] == 2547  # trtexec's count and rate stay: trtexec measured them
    assert work["j_per_iter"] is None and work["j_per_iter_above_idle"] is None
    assert work["j_per_iter_note"] == report["trtexec"]["coverage_note"]
    md = jroof("report", tmp_path / "run.log", "--tz", "UTC").stdout
    assert f"{coverage:.1%}" in md and "no energy per iteration" in md


# -- compare --------------------------------------------------------------------------------------------
def test_compare_marks_a_short_window_unusable_and_never_ranks_it(tmp_path):
    full = kept_pair(tmp_path, MAXN, stem="full")
    cut = kept_pair(tmp_path, MAXN, log_lines=cut_head(0.91)[0], stem="cut")
    other = kept_pair(tmp_path, BENCHLAB[1], stem="w15")
    result = jroof("compare", cut, full, other, "--tz", "UTC", "--format", "json")
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    items = {i["label"]: i for i in out["items"]}
    assert items["cut"]["usable"] is False and "99%" in items["cut"]["unusable_reason"]
    assert items["cut"]["j_per_iter"] is None
    assert items["full"]["usable"] and items["w15"]["usable"] and items["full"]["unusable_reason"] is None
    assert out["cheapest"]["label"] in ("full", "w15")
    assert any("left out as unusable: cut" in line for line in out["verdicts"])
    md = jroof("compare", cut, full, other, "--tz", "UTC").stdout
    assert "cut: unusable:" in md and "| energy per inference usable | no |" in md


def test_compare_says_why_a_run_that_timed_no_queries_or_was_not_placed_is_unusable(tmp_path):
    text = (TRTEXEC / MAXN).read_text()
    zero = kept_pair(tmp_path, MAXN, trtexec_text=text.replace("Timing trace has 2547 queries",
                                                                "Timing trace has 0 queries"), stem="zero")
    # Another day's run beside the log: it cannot be placed on it.
    elsewhere = kept_pair(tmp_path, MAXN, trtexec_text=text.replace("[07/26/2026-", "[07/20/2026-"),
                          stem="elsewhere")
    full = kept_pair(tmp_path, MAXN, stem="full")
    result = jroof("compare", zero, elsewhere, full, "--tz", "UTC", "--format", "json")
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    items = {i["label"]: i for i in out["items"]}
    assert items["zero"]["usable"] is False and "0 queries" in items["zero"]["unusable_reason"]
    assert items["elsewhere"]["usable"] is False and "do not overlap" in items["elsewhere"]["unusable_reason"]
    assert out["cheapest"]["label"] == "full"


def test_compare_says_an_unusable_items_reason_once_and_refers_to_it_by_label(tmp_path):
    full = kept_pair(tmp_path, MAXN, stem="full")
    cut = kept_pair(tmp_path, MAXN, log_lines=cut_head(0.91)[0], stem="cut")
    out = json.loads(jroof("compare", full, cut, "--tz", "UTC", "--format", "json").stdout)
    reason = {i["label"]: i for i in out["items"]}["cut"]["unusable_reason"]
    assert "99%" in reason
    md = jroof("compare", full, cut, "--tz", "UTC").stdout
    assert md.count(reason.replace("|", "\\|")) == 1 and f"cut: unusable: {reason}" in md
    assert "see cut: unusable" in " ".join(out["verdicts"])
    assert not any(reason in line for line in out["verdicts"])
