"""tegrastats' own VDD_IN is judged sample by sample: one reading refused (past 2 kW) or missing
(``nanmW``, or the field left out) costs only the stretches on either side of it, which are gaps
(counted, not observed, never bridged, said in ``energy_note``); the rest of the run keeps its
measured energy. On an Orin the other rails do not add up to the input, so their sum stands in
only for a log that never reads an input rail (AGX Orin's: inferred)."""

from __future__ import annotations

import re
from datetime import timezone
from pathlib import Path

import pytest
from paths import REPO

from jtop_roof.analysis.ledger import EnergyLedger
from jtop_roof.formats.parser import parse_line
from jtop_roof.outputs.report import report_file
from jtop_roof.runtime.config import Config

ROOT = REPO
LOGS = ROOT.parent / "shared" / "tegrastats" / "logs"
LOG = LOGS / "orinnano8gb_jp6_orinnanolab_1.log"
AGX = LOGS / "agxorin_jp6_abdeltegraparser_1.log"
needs_shared = pytest.mark.skipif(not LOG.is_file(), reason="../shared tegrastats logs not beside the repo")
BAD = 149  # the 150th line, whose VDD_IN the edits spoil
#: (pattern, replacement on the 150th line, what the note says of it)
EDITS = {
    "past 2 kW": (r"VDD_IN \d+mW", "VDD_IN 5971000000mW", "VDD_IN read past 2 kW at 1"),
    "nan": (r"VDD_IN \d+mW/\d+mW", "VDD_IN nanmW/nanmW", "not read at 1"),
    "absent": (r"VDD_IN \d+mW/\d+mW ", "", "not read at 1"),
}


def first_lines(count: int = 300) -> list[str]:
    return LOG.read_text().splitlines()[:count]


def whole_of(tmp_path: Path, lines: list[str]) -> dict:
    path = tmp_path / "run.log"
    path.write_text("\n".join(lines) + "\n")
    return report_file(str(path), tz=timezone.utc, interval_s=None, config=Config())["whole"]


def vdd_in_mw(line: str) -> float:
    found = re.search(r"VDD_IN (\d+)mW", line)
    assert found is not None
    return float(found.group(1))


@needs_shared
@pytest.mark.parametrize("edit", sorted(EDITS))
def test_a_bad_vdd_in_on_one_line_costs_only_its_two_stretches(tmp_path, edit):
    """The 1 s stretches either side of the spoiled line are gaps: the total is the clean run's
    less their trapezoids of VDD_IN, over 2 s less observed, still measured, and the note says it
    (before, one reading past 2 kW voided the whole total, and a missing one bridged a sum)."""
    lines = first_lines()
    clean = whole_of(tmp_path, lines)
    pattern, replacement, said = EDITS[edit]
    spoiled = re.sub(pattern, replacement, lines[BAD], count=1)
    assert spoiled != lines[BAD]
    whole = whole_of(tmp_path, [*lines[:BAD], spoiled, *lines[BAD + 1:]])

    before, at, after = (vdd_in_mw(line) for line in lines[BAD - 1:BAD + 2])
    left_out_j = ((before + at) / 2 + (at + after) / 2) * 1.0 / 1000  # two 1 s steps (00:31:40-42)
    assert whole["energy_j"]["total"] == pytest.approx(clean["energy_j"]["total"] - left_out_j, rel=1e-9)
    assert whole["energy_total_source"] == "measured"
    assert (whole["gaps"], whole["duration_s"]) == (clean["gaps"] + 2, clean["duration_s"])
    assert whole["observed_s"] == pytest.approx(clean["observed_s"] - 2.0)
    assert whole["power_w"]["mean"] == pytest.approx(whole["energy_j"]["total"] / whole["observed_s"])
    assert whole["energy_note"].startswith(
        f"tegrastats: 1 sample without VDD_IN ({said}): 2 stretches between samples (2 s) are gaps, "
        "not bridged")
    # the other rails over those stretches are left out too: their means stay over observed time
    soc = whole["energy_j"]["rails"]["VDD_SOC"]
    assert soc < clean["energy_j"]["rails"]["VDD_SOC"]
    assert whole["power_w"]["rails"]["VDD_SOC"]["mean"] == pytest.approx(soc / whole["observed_s"])


@needs_shared
def test_a_phase_away_from_the_bad_line_keeps_its_measured_energy_and_says_nothing():
    """Only the spans that hold the spoiled stretches lose them: a phase before it is measured,
    with no gap and no note, and its energy is the clean run's over the same lines."""
    lines = first_lines(200)
    pattern, replacement, _ = EDITS["past 2 kW"]

    def ledger_of(lines: list[str]) -> EnergyLedger:
        ledger = EnergyLedger(1.0)
        for i, line in enumerate(lines):
            if i == 50:
                ledger.start_phase("early", 50.0)
            if i == 100:
                ledger.start_phase("late", 100.0)
            sample = parse_line(line)
            assert sample is not None
            rails = {name: rail.now_mw for name, rail in sample.rails.items()}
            total = sample.power_total
            ledger.add_sample(float(i), None, None if total is None else total.mw, rails)
        return ledger

    clean = ledger_of(lines)
    spoiled = ledger_of([*lines[:BAD], re.sub(pattern, replacement, lines[BAD], count=1), *lines[BAD + 1:]])
    (early, late), (clean_early, clean_late) = spoiled.phases(), clean.phases()
    assert (early.energy_total_source, early.energy_note, early.gaps) == ("measured", None, 0)
    assert early.energy_j == pytest.approx(clean_early.energy_j, rel=1e-12)
    assert (late.energy_total_source, late.gaps, late.gap_s) == ("measured", 2, 2.0)
    assert late.energy_note is not None and "2 stretches between samples (2 s) are gaps" in late.energy_note
    assert late.energy_j is not None and clean_late.energy_j is not None
    assert late.energy_j < clean_late.energy_j
    assert spoiled.whole.energy_j == pytest.approx(early.energy_j + late.energy_j
                                                   + clean.whole.energy_j - clean_early.energy_j
                                                   - clean_late.energy_j, rel=1e-9)


@needs_shared
def test_a_log_that_never_reads_an_input_rail_keeps_its_sum_of_rails_inferred(tmp_path):
    """AGX Orin's lines have no input rail: the sum of its rails is the total, said inferred, with
    no gap made of it (only a stream that reads its input elsewhere loses a stretch without it)."""
    lines = AGX.read_text().splitlines()[:60]
    assert not any(re.search(r"\b(VDD_IN|VIN|POM_5V_IN) ", line) for line in lines)
    whole = whole_of(tmp_path, lines)
    assert whole["energy_total_source"] == "inferred" and whole["gaps"] == 0
    assert whole["energy_j"]["total"] > 0
    assert whole["energy_note"].startswith("a sum of rails (sum(")


@needs_shared
def test_a_power_stream_refused_where_the_samples_lack_vdd_in_falls_back_to_nothing():
    """A sampler's stretch refused (VDD_IN read negative) takes tegrastats' VDD_IN there; where that
    line has no VDD_IN either, the other rails' sum is not taken: the stretch is not observed."""
    from jtop_roof.model.records import PowerReading

    lines = first_lines(8)

    def whole_of_run(drop_vdd_in: bool):
        ledger = EnergyLedger(1.0)
        for second, line in enumerate(lines):
            sample = parse_line(re.sub(r"VDD_IN \d+mW/\d+mW ", "", line) if drop_vdd_in and second == 4
                                else line)
            assert sample is not None
            total = sample.power_total
            ledger.add_sample(float(second), None, None if total is None else total.mw,
                              {name: rail.now_mw for name, rail in sample.rails.items()})
            for k in range(5):
                mw = -vdd_in_mw(line) if (second, k) == (4, 2) else vdd_in_mw(line)
                ledger.add_power(PowerReading(None, second + k / 5, {"VDD_IN": mw}, {}, "INA3221 hwmon", 0.2))
        return ledger.whole

    kept, dropped = whole_of_run(False), whole_of_run(True)
    assert (kept.gaps, dropped.gaps, dropped.gap_s) == (0, 1, pytest.approx(1.0))
    assert "total there from tegrastats' VDD_IN" in (kept.energy_note or "")
    assert "1.0 s with no sample to fall back to: not observed" in (dropped.energy_note or "")
    fallback_j = (vdd_in_mw(lines[4]) + vdd_in_mw(lines[5])) / 2 / 1000  # tegrastats' 4 s -> 5 s
    assert dropped.energy_j == pytest.approx(kept.energy_j - fallback_j, rel=1e-9)
    assert dropped.energy_total_source == "measured"
