"""What a report's figures rest on is said in every format, from the pipeline's one list.

The input is the real Orin Nano Super lines in tests/data (hokwangchoi/jetson-orin-nano-benchmarks,
MIT), re-stamped two lines a second so that the stamps give the interval, and the same lines with
their stamps cut off, so that the interval (and so every duration and joule) is only assumed.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_support import jroof
from paths import TESTS

DATA = TESTS / "data" / "fake_tegrastats_orinnano_super.txt"


def lines() -> list[str]:
    return [line[20:] for line in DATA.read_text(encoding="utf-8").splitlines()
            if line and not line.startswith("#")]


@pytest.fixture
def logs(tmp_path: Path) -> dict[str, Path]:
    stamped, bare = tmp_path / "stamped.log", tmp_path / "bare.log"
    restamped = [f"04-19-2026 01:31:{10 + i // 2:02d} {line}\n" for i, line in enumerate(lines())]
    stamped.write_text("".join(restamped), encoding="utf-8")
    bare.write_text("".join(f"{line}\n" for line in lines()), encoding="utf-8")
    return {"stamped": stamped, "bare": bare}


def report(path: Path, fmt: str = "json", *extra: str) -> str:
    done = jroof("report", path, "--format", fmt, "--tz", "UTC", *extra)
    assert done.returncode == 0, done.stderr
    return done.stdout


def items(rep: dict) -> dict[str, dict]:
    return {item["what"]: item for item in rep["assumptions"]}


def test_the_json_lists_each_item_with_its_source(logs):
    stamped = json.loads(report(logs["stamped"]))
    said = items(stamped)
    assert list(said)[:2] == ["interval", "stamps"]
    assert (said["interval"]["value"], said["interval"]["source"]) == ("500 ms", "measured")
    assert said["stamps"]["source"] == "given"  # --tz UTC for stamps that write no zone
    assert said["device"]["source"] == stamped["device_source"] == "inferred"
    assert said["power_mode"]["source"] == stamped["power_mode_source"]
    assert said["energy"]["source"] == stamped["whole"]["energy_total_source"] == "measured"


def test_energy_over_an_assumed_interval_is_assumed_not_measured(logs):
    """Power × time: a log without stamps has measured power but an assumed time between lines, so
    its joules rest on that assumption, in each span and in the list, with the reason."""
    bare = json.loads(report(logs["bare"]))
    whole = bare["whole"]
    assert bare["source"]["interval_source"] == "assumed"
    assert whole["energy_total_source"] == "assumed"
    assert "1000 ms" in whole["energy_note"] and "scales" in whole["energy_note"]
    assert items(bare)["energy"]["source"] == "assumed"
    given = json.loads(report(logs["bare"], "json", "--interval", "500"))
    assert given["source"]["interval_source"] == "given"
    assert given["whole"]["energy_total_source"] == "measured" and given["whole"]["energy_note"] is None


def test_md_says_each_item_and_the_observed_time(logs):
    md = report(logs["bare"], "md")
    block = md.split("What these figures rest on", 1)[1].split("| span |", 1)[0]
    assert "- interval: 1000 ms (assumed: the log has no stamps" in block
    assert "- energy: " in block and "(assumed: " in block
    header = next(line for line in md.splitlines() if line.startswith("| span |"))
    assert "| duration s | observed s |" in header


def test_csv_rows_carry_the_sources(logs):
    rows = report(logs["bare"], "csv").splitlines()
    head, whole = rows[0].split(","), rows[1].split(",")
    row = dict(zip(head, whole, strict=True))
    assert row["interval_source"] == "assumed" and row["interval_s"] == "1.0"
    assert row["energy_total_source"] == "assumed" and row["device_source"] == "inferred"
    assert float(row["observed_s"]) == pytest.approx(float(row["duration_s"]))
