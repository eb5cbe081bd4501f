"""The board and power mode say what the log shows and no more: a mode change within a log, a run held
below its caps, a mode several fit, detection without a unit's clock or cap, a flag the log
contradicts, and a throttle's cause only with evidence.

Real logs come from ../shared (skipped where it is absent). Splices and edits are of real lines and
said so in each test: the MAXN and 7W benchlab runs of one Orin Nano Super put end to end; the MAXN
run with its GPU clock capped at 918 MHz; the 7W run with a GPU hold and the input power edited.
"""

from __future__ import annotations

import json
import re
from datetime import timezone
from pathlib import Path

import pytest
from factories import held_at_306
from paths import OUTSIDE
from tui_support import make_config

from jtop_roof.outputs.report import report_file, to_markdown
from jtop_roof.roofline.ceilings import max_clocks
from jtop_roof.roofline.devices import find_mode, load_devices

LOGS = OUTSIDE / "shared" / "tegrastats" / "logs"
needs_shared = pytest.mark.skipif(not LOGS.is_dir(), reason="../shared is absent")
BENCHLAB = "orinnano8gb-super_jp6.2.1_benchlab_resnet50_int8_"
MAXN, SEVEN_W = LOGS / f"{BENCHLAB}maxn_run3.log", LOGS / f"{BENCHLAB}7w_run3.log"
NON_ROOT_25W = LOGS / "orinnano8gb_jp6_orinnanolab_1.log"
SOURCE_WORDS = {"measured", "given", "assumed", "inferred", None}


def lines_of(path: Path) -> list[str]:
    return [line for line in path.read_text().splitlines() if line.strip()]


def report_of(path: Path, **config: str) -> dict:
    return report_file(str(path), tz=timezone.utc, interval_s=None, config=make_config(**config))


def written(tmp_path: Path, lines: list[str], name: str = "run.log") -> Path:
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    return path


def throttles(report: dict, unit: str | None = None) -> list[dict]:
    return [e for e in report["events"] if e["kind"] == "throttle" and unit in (None, e["unit"])]


# ------------------------------------------------------------------------------- source words


def recording(header: dict, tmp_path: Path) -> Path:
    """A jroof recording: the header as given, one idle sample."""
    head = {"type": "header", "app": "jroof-tui", "schema": 1, "interval_ms": 1000, **header}
    sample = {"type": "sample", "t": 1000.0, "mono": 0.0, "gpu": {"load": 0.0, "mhz": [306]}}
    return written(tmp_path, [json.dumps(head), json.dumps(sample)], "r.jsonl")


def test_a_board_read_off_the_device_is_measured_and_a_flag_is_given(tmp_path):
    """The header's model string and nvpmodel's answer were read off the board: measured. A device
    the user named when recording (the header's ``device``) or now (``--device``) is given."""
    read = report_of(recording({"model": "NVIDIA Jetson Orin Nano Engineering Reference Developer Kit Super",
                                "power_mode": "MAXN_SUPER", "power_mode_id": 2}, tmp_path))
    assert (read["device"], read["device_source"]) == ("orin-nano-8gb-super", "measured")
    assert (read["power_mode"], read["power_mode_source"]) == ("MAXN_SUPER", "measured")
    kept = report_of(recording({"device": "orin-nano-8gb-super", "power_mode": "15W",
                                "command": ["jroof-tui", "record", "--power-mode", "15W"]}, tmp_path))
    assert (kept["device_source"], kept["power_mode_source"]) == ("given", "given")
    flag = report_of(recording({"model": "NVIDIA Jetson Orin Nano Engineering Reference Developer Kit Super"},
                               tmp_path), device="orin-nano-8gb-super", power_mode="7W")
    assert (flag["device_source"], flag["power_mode_source"]) == ("given", "given")


@needs_shared
@pytest.mark.parametrize("path", sorted(LOGS.glob("*.log")) if LOGS.is_dir() else [], ids=lambda p: p.stem)
def test_every_real_log_says_its_board_in_the_four_words_and_invents_no_throttle(path):
    report = report_of(path)
    assert report["device_source"] in SOURCE_WORDS and report["power_mode_source"] in SOURCE_WORDS
    assert throttles(report) == [] and [e for e in report["events"] if e["kind"] == "mode_change"] == []
    assert all(e["cause_source"] in SOURCE_WORDS for e in report["events"])


# ------------------------------------------------------------------------------- a mode change


@needs_shared
def test_a_change_from_maxn_to_7w_is_an_event_and_each_part_is_judged_by_its_own_caps(tmp_path):
    """Splice: the MAXN run, then the 7W run of the same board (real lines, end to end). Judged by
    MAXN's caps the 7W half read as 37.5 s of CPU throttle; each half by its own mode's, none."""
    report = report_of(written(tmp_path, lines_of(MAXN) + lines_of(SEVEN_W)))
    (change,) = [e for e in report["events"] if e["kind"] == "mode_change"]
    assert "from MAXN_SUPER to 7W" in change["reason"] and change["cause_source"] is None
    assert change["start"].startswith("2026-07-26T21:22:45")  # the 7W run's first line
    assert throttles(report) == [] and report["whole"]["throttled_s"] == 0
    assert report["device"] == "orin-nano-8gb-super" and report["power_mode"] is None
    assert report["power_mode_source"] == "inferred"
    assert "MAXN_SUPER" in report["power_mode_note"] and "7W" in report["power_mode_note"]
    assert report["throttle_detection"] == "full" and "changed" in report["throttle_detection_note"]
    assert "Power mode note: the power mode changed within the log" in to_markdown(report)


@needs_shared
def test_a_gpu_held_in_the_7w_part_of_a_spliced_log_is_a_throttle_against_7w(tmp_path):
    """Splice as above, with 91 lines of the 7W half's GPU held at 306 MHz (edited): a throttle of
    306 MHz of the 7W cap (408), not of MAXN's 1020."""
    seven = lines_of(SEVEN_W)
    busy = next(i for i, line in enumerate(seven) if re.search(r"GR3D_FREQ (9\d|100)%", line))
    report = report_of(written(tmp_path, lines_of(MAXN) + held_at_306(seven, busy + 30, 91)))
    (event,) = throttles(report, "gpu")
    assert "306 MHz of 408" in event["reason"] and "cause not seen" in event["reason"]
    assert throttles(report, "cpu") == []


# ------------------------------------------------------------------- a run held below its caps


def capped_at_918(lines: list[str]) -> list[str]:
    """The MAXN run with every GPU clock above 918 MHz edited to 918 (the 25W mode's GPU cap)."""
    def capped(found: re.Match[str]) -> str:
        return f"GR3D_FREQ {found.group(1)}%@[{min(int(found.group(2)), 918)}]"

    return [re.sub(r"GR3D_FREQ (\d+)%@\[(\d+)\]", capped, line) for line in lines]


@needs_shared
def test_a_maxn_run_held_at_918_mhz_keeps_maxn_among_the_candidates_and_names_no_mode(tmp_path):
    report = report_of(written(tmp_path, capped_at_918(lines_of(MAXN))))
    assert report["power_mode"] is None and report["power_mode_source"] is None
    note = report["power_mode_note"]
    assert "orin-nano-8gb-super MAXN_SUPER" in note and "held below the caps the whole run" in note
    assert "918 MHz of MAXN_SUPER's 1020" in note
    assert report["throttle_detection"] != "full"
    assert "orin-nano-8gb-super" in report["device_candidates"]


@needs_shared
def test_each_held_candidate_is_said_against_its_own_modules_cap(tmp_path):
    """The 918 MHz run fits the Orin Nano Super's and the Orin NX 8GB Super's MAXN_SUPER, held below
    the caps: each held GPU is said against its own module's cap (1020 and 1173), never one
    module's cap of the other's run."""
    note = report_of(written(tmp_path, capped_at_918(lines_of(MAXN))))["power_mode_note"]
    said = dict(re.findall(r"([\w-]+): GPU saturated, never above 918 MHz of MAXN_SUPER's (\d+)", note))
    db = load_devices()
    assert set(said) == {"orin-nano-8gb-super", "orin-nx-8gb-super"}
    for device, cap in said.items():
        assert int(cap) == round(max_clocks(db[device], find_mode(db[device], "MAXN_SUPER"))[0])


@needs_shared
def test_a_real_lower_mode_run_is_not_called_a_higher_mode_held_below(tmp_path):
    """The 15W run: CPU and GPU both at the 15W caps, not one unit held below MAXN's."""
    report = report_of(LOGS / f"{BENCHLAB}15w_run3.log")
    assert (report["power_mode"], report["power_mode_note"]) == ("15W", None)


# -------------------------------------------------------------------- detection, full or limited


@needs_shared
def test_detection_is_limited_without_gpu_and_emc_clocks_or_a_cpu_cap():
    """A non-root log prints no GPU or EMC clock; the AGX Orin's MAXN has no CPU cap in the
    database (nor the source): neither can say "full"."""
    non_root = report_of(NON_ROOT_25W)
    assert non_root["power_mode"] == "25W" and non_root["throttle_detection"] == "limited"
    assert "no GPU/EMC clock in the log" in non_root["throttle_detection_note"]
    uncapped = report_of(LOGS / "agxorin_jp6_abdeltegraparser_1.log")
    assert uncapped["power_mode"] == "MAXN" and uncapped["throttle_detection"] == "limited"
    assert "no CPU cap for MAXN" in uncapped["throttle_detection_note"]


# ----------------------------------------------------------------------- flags the log contradicts


@needs_shared
def test_a_given_device_the_log_contradicts_gets_a_note():
    """Six cores saturated at 1344 MHz: only the Super entry's 25W allows it, not the Orin Nano
    8GB's 15W (1510 MHz) nor 7W (four cores)."""
    report = report_of(NON_ROOT_25W, device="orin-nano-8gb")
    assert (report["device"], report["device_source"]) == ("orin-nano-8gb", "given")
    assert "the log contradicts the given device orin-nano-8gb" in report["device_note"]
    agreed = report_of(NON_ROOT_25W, device="orin-nano-8gb-super")
    assert "contradicts" not in (agreed["device_note"] or "")


@needs_shared
def test_a_contradiction_says_once_what_the_log_shows_and_what_it_fits_without_the_flag():
    """The note gives why the named device cannot have made the log, in its own caps, and the
    board the log points to without the flag (what ``report`` finds unflagged), once; never the
    inference's own note about the named device repeated, nor "no module fits" where one does."""
    unflagged = report_of(NON_ROOT_25W)
    note = report_of(NON_ROOT_25W, device="orin-nano-8gb")["device_note"]
    assert note.count("the log contradicts") == 1 and "none of their modes" not in note
    assert "CPU was saturated at 1344 MHz, below 15W's cap of 1510" in note
    assert "6 CPUs were online where 7W has 4" in note
    assert note.endswith(f"it fits {unflagged['device']} {unflagged['power_mode']}")
    # A faster log named as the slower module and a mode of it: both said against that module.
    found = report_of(MAXN)
    both = report_of(MAXN, device="orin-nano-8gb", power_mode="15W")
    fits = f"it fits {found['device']} {found['power_mode']}"
    assert fits == "it fits orin-nano-8gb-super MAXN_SUPER"
    device_note, mode_note = both["device_note"], both["power_mode_note"]
    assert "GPU ran at 1018 MHz, above that device's maximum of 625" in device_note
    assert device_note.endswith(fits) and "no module" not in device_note
    assert "CPU ran at 1728 MHz, above 15W's cap of 1510" in mode_note
    assert mode_note.endswith(fits) and "no module" not in mode_note and "fits no" not in mode_note


@needs_shared
def test_a_given_mode_the_log_contradicts_gets_a_note():
    """The MAXN run with ``--power-mode 7W``: six cores online, 7W has four."""
    report = report_of(MAXN, power_mode="7W")
    assert (report["power_mode"], report["power_mode_source"]) == ("7W", "given")
    assert "the log contradicts the given mode 7W" in report["power_mode_note"]
    assert report_of(SEVEN_W, power_mode="7W")["power_mode_note"] is None


# ----------------------------------------------------------------------------- a throttle's cause


def at_power(line: str, mw: int) -> str:
    return re.sub(r"VDD_IN \d+mW/\d+mW", f"VDD_IN {mw}mW/{mw}mW", line)


def held_at_the_budget(busy_free_power: int | None) -> list[str]:
    """The 7W run with 91 lines of its GPU held at 306 MHz (edited) drawing 6.9 W (edited), and,
    where ``busy_free_power`` is given, the busy lines at the GPU's cap before it drawing that."""
    lines = lines_of(SEVEN_W)
    busy = next(i for i, line in enumerate(lines) if re.search(r"GR3D_FREQ (9\d|100)%", line))
    lines = held_at_306(lines, busy + 30, 91)
    lines[busy + 30:busy + 121] = [at_power(line, 6900) for line in lines[busy + 30:busy + 121]]
    if busy_free_power is not None:
        lines[busy:busy + 30] = [at_power(line, busy_free_power) if "@[40" in line else line
                                 for line in lines[busy:busy + 30]]
    return lines


@needs_shared
def test_power_at_the_budget_is_the_cause_where_the_same_clock_ran_free_below_it(tmp_path):
    report = report_of(written(tmp_path, held_at_the_budget(None)))
    (event,) = throttles(report, "gpu")
    assert "power: input at the 7W budget (6.9 of 7 W)" in event["reason"]
    assert event["cause_source"] == "inferred"


@needs_shared
def test_power_at_the_budget_is_no_cause_where_the_log_drew_it_with_no_throttle(tmp_path):
    """The same log drew 6.7 W with the GPU busy at its cap: the budget did not hold the clock."""
    report = report_of(written(tmp_path, held_at_the_budget(6700)))
    (event,) = throttles(report, "gpu")
    assert "budget" not in event["reason"] and "cause not seen" in event["reason"]
    assert event["cause_source"] is None


@needs_shared
def test_two_lines_with_cores_off_are_no_mode_change(tmp_path):
    """The MAXN run with two lines' last two cores edited to ``off`` (a hotplug blip, not nvpmodel):
    one part, MAXN_SUPER named, no ``mode_change``."""
    lines = lines_of(MAXN)
    for i in (100, 101):
        lines[i] = re.sub(r",([^,\]]+),([^,\]]+)\]", ",off,off]", lines[i], count=1)
        assert ",off,off]" in lines[i]
    report = report_of(written(tmp_path, lines))
    assert report["power_mode"] == "MAXN_SUPER"
    assert [e for e in report["events"] if e["kind"] == "mode_change"] == []
