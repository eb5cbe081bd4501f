"""``export``: one flat row per sample, the same columns in every row, phases and throttle events
from the pipeline; read back with the csv module, json, pandas and pyarrow where installed."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import subprocess
import sys
from datetime import timezone

import pytest
from factories import BENCH, COUNT, HELD, SECOND_SESSION, STEP, held_at_306, recording_header, write_synthetic
from paths import OUTSIDE, REPO

from jtop_roof.model.codec import json_line, record_to_json
from jtop_roof.model.records import Rail, Sample
from jtop_roof.outputs import export as ex
from jtop_roof.outputs import export_writers
from jtop_roof.runtime.config import Config

UTC = timezone.utc
SHARED = OUTSIDE / "shared"
SEVEN_W = SHARED / "tegrastats" / "logs" / "orinnano8gb-super_jp6.2.1_benchlab_resnet50_int8_7w_run3.log"


@pytest.fixture
def synthetic(tmp_path):
    path = tmp_path / "run.jsonl"
    return path, write_synthetic(path)


def options(**kw) -> Config:
    return dataclasses.replace(Config(), **kw)


def export_text(path: str, fmt: str, config: Config | None = None) -> str:
    """What ``export`` prints to stdout (csv or jsonl)."""
    stdout = io.StringIO()
    ex.export_file(path, fmt, None, tz=UTC, config=config, stdout=stdout)
    return stdout.getvalue()


def read_csv(text: str) -> tuple[list[str], list[dict[str, str]]]:
    reader = csv.DictReader(io.StringIO(text))
    rows = list(reader)
    return list(reader.fieldnames or []), rows


def test_csv_columns_phases_and_throttle(synthetic):
    path, samples = synthetic
    text = export_text(str(path), "csv", options())
    columns, rows = read_csv(text)
    assert columns == [
        "t_wall", "time", "t_mono", "t_s", "phase", "throttle", "gap_s", "ram_used_mb", "ram_total_mb",
        "cpu0_load_pct", "cpu0_mhz", "cpu1_load_pct", "cpu1_mhz", "gpu_load_pct", "gpu_mhz",
        "emc_load_pct", "emc_mhz", "engine_NVENC0_mhz", "engine_APE_mhz", "temp_tj_c", "temp_cv0_c",
        "rail_VDD_IN_mw", "rail_VDD_CPU_GPU_CV_mw", "power_total_mw", "power_total_source",
    ]
    assert len(rows) == COUNT
    for i, row in enumerate(rows):
        assert row["phase"] == ('bench, "1"' if i in BENCH else "")
        assert row["throttle"] == ("throttle:gpu" if i in HELD else ""), i
        assert float(row["t_wall"]) == samples[i].t_wall
        # the stream's one monotonic timeline (a later session's restarted clock placed after the gap)
        assert float(row["t_mono"]) - float(row["t_s"]) == pytest.approx(samples[0].t_mono)
        assert float(row["rail_VDD_IN_mw"]) == 5000.0 + 10 * i
        assert row["gpu_mhz"] == str(300 if i in HELD else 408 if i in BENCH else 306)  # clocks: integers
        assert row["cpu1_load_pct"] == ("" if i % 2 else "1.0")  # a float column, whole values too
        assert row["engine_NVENC0_mhz"] == ("" if i < 20 else "115")
        assert row["temp_cv0_c"] == ""
        assert row["power_total_source"] == "VDD_IN"
    # One timeline: the second session starts after a gap event, its monotonic clock restarted lower.
    t_s = [float(r["t_s"]) for r in rows]
    assert t_s[0] == 0.0 and t_s == sorted(t_s)
    assert t_s[1] == pytest.approx(STEP)
    assert [r["gap_s"] for r in rows if r["gap_s"]] == [rows[SECOND_SESSION]["gap_s"]]
    assert float(rows[SECOND_SESSION]["gap_s"]) == pytest.approx(20.5)


def test_jsonl_has_every_key_in_every_row_and_matches_csv(synthetic):
    path, _ = synthetic
    columns, rows = read_csv(export_text(str(path), "csv", options()))
    text = export_text(str(path), "jsonl", options())
    objects = [json.loads(line) for line in text.splitlines()]
    assert len(objects) == COUNT
    for obj, row in zip(objects, rows, strict=True):
        assert list(obj) == columns
        for key, value in obj.items():
            assert ("" if value is None else str(value)) == row[key]


def test_export_to_a_file_and_pandas_reads_numbers(synthetic, tmp_path):
    path, _ = synthetic
    out = tmp_path / "out.csv"
    assert ex.export_file(str(path), "csv", str(out), tz=UTC, config=options()) == COUNT
    pd = pytest.importorskip("pandas")
    frame = pd.read_csv(out)
    assert len(frame) == COUNT
    for column in ("t_wall", "t_s", "gpu_mhz", "rail_VDD_IN_mw", "cpu1_load_pct", "temp_tj_c", "gap_s"):
        assert frame[column].dtype.kind == "f" or frame[column].dtype.kind == "i", column
    assert frame["rail_VDD_IN_mw"].sum() == sum(5000.0 + 10 * i for i in range(COUNT))


def test_parquet_round_trip(synthetic, tmp_path):
    pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    path, _ = synthetic
    out = tmp_path / "out.parquet"
    assert ex.export_file(str(path), "parquet", str(out), tz=UTC, config=options()) == COUNT
    table = pq.read_table(out)
    _, rows = read_csv(export_text(str(path), "csv", options()))
    assert table.column_names == list(rows[0])
    assert table.column("throttle").to_pylist() == [r["throttle"] or None for r in rows]
    assert table.column("rail_VDD_IN_mw").to_pylist() == [float(r["rail_VDD_IN_mw"]) for r in rows]


def test_parquet_file_is_the_one_pyarrow_parquet_writes(synthetic, tmp_path):
    """The private writer export uses is held to the public one: same schema, metadata, values,
    encodings and compression, column chunk by column chunk."""
    path, _ = synthetic
    pq = pytest.importorskip("pyarrow.parquet")
    ours = tmp_path / "ours.parquet"
    ex.export_file(str(path), "parquet", str(ours), tz=UTC, config=options())
    exported = ex.export_rows(str(path), tz=UTC, config=options(), aware=True)
    table = pq.read_table(ours)
    public = tmp_path / "public.parquet"
    with pq.ParquetWriter(public, table.schema) as writer:
        writer.write_table(table, row_group_size=export_writers.PARQUET_BATCH)
    assert table.column_names == list(exported.table.columns)
    assert table.equals(pq.read_table(public))
    assert table.schema.equals(pq.read_schema(public), check_metadata=True)
    mine, theirs = pq.ParquetFile(ours).metadata, pq.ParquetFile(public).metadata
    assert (mine.format_version, mine.num_rows, mine.num_row_groups) == \
        (theirs.format_version, theirs.num_rows, theirs.num_row_groups)
    for group in range(mine.num_row_groups):
        for column in range(mine.num_columns):
            a, b = mine.row_group(group).column(column), theirs.row_group(group).column(column)
            assert (a.compression, a.encodings, a.statistics) == (b.compression, b.encodings, b.statistics)


def test_a_pyarrow_whose_private_writer_changed_writes_through_the_public_one(synthetic, tmp_path,
                                                                               monkeypatch):
    path, _ = synthetic
    pq = pytest.importorskip("pyarrow.parquet")
    parquet = pytest.importorskip("pyarrow._parquet")
    ours = tmp_path / "ours.parquet"
    ex.export_file(str(path), "parquet", str(ours), tz=UTC, config=options())

    private = parquet.ParquetWriter

    def changed(*args, **options):
        """A later private class: one more option it needs, which the public class passes."""
        if "use_dictionary" not in options:
            raise TypeError("ParquetWriter() missing required keyword argument 'use_dictionary'")
        return private(*args, **options)

    monkeypatch.setattr(parquet, "ParquetWriter", changed)
    fallback = tmp_path / "fallback.parquet"
    assert ex.export_file(str(path), "parquet", str(fallback), tz=UTC, config=options()) == COUNT
    assert pq.read_table(fallback).equals(pq.read_table(ours))
    assert pq.read_schema(fallback).equals(pq.read_schema(ours), check_metadata=True)


def test_parquet_export_leaves_pyarrows_filesystems_unloaded(synthetic, tmp_path):
    """pyarrow.parquet would load the cloud filesystems (some 9 MB) that a file never needs."""
    path, _ = synthetic
    pytest.importorskip("pyarrow")
    code = ("import sys; from datetime import timezone; from jtop_roof.outputs import export as ex; "
            f"ex.export_file({str(path)!r}, 'parquet', {str(tmp_path / 'x.parquet')!r}, tz=timezone.utc); "
            "print(sorted(m for m in sys.modules if m.startswith('pyarrow')))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                            cwd=REPO).stdout
    assert "pyarrow._parquet" in loaded and "pyarrow.fs" not in loaded and "pyarrow.parquet'" not in loaded


def test_parquet_without_pyarrow_is_one_line_naming_it(synthetic, tmp_path, monkeypatch):
    path, _ = synthetic
    monkeypatch.setattr(export_writers, "pyarrow_modules", lambda: None)
    with pytest.raises(ex.ExportError) as info:
        ex.export_file(str(path), "parquet", str(tmp_path / "x.parquet"), tz=UTC)
    assert str(info.value) == ("parquet needs pyarrow: pip install '.[parquet]' in jroof's clone "
                               "(as the README says), else pip install pyarrow")
    assert not (tmp_path / "x.parquet").exists()


def test_errors_are_one_line(tmp_path):
    with pytest.raises(ex.ExportError, match="No such file or directory"):
        ex.export_file(str(tmp_path / "missing.log"), "csv", tz=UTC)
    with pytest.raises(ex.ExportError, match="not a regular file"):
        ex.export_file(str(tmp_path), "csv", tz=UTC)
    foreign = tmp_path / "foreign.jsonl"
    foreign.write_text('{"type": "header", "app": "other", "schema": 1}\n')
    with pytest.raises(ex.ExportError, match="not a jroof recording"):
        ex.export_file(str(foreign), "csv", tz=UTC)
    with pytest.raises(ex.ExportError, match="unknown format"):
        ex.export_file(str(foreign), "xlsx", tz=UTC)


def test_hostile_names_are_safe_columns(tmp_path):
    path = tmp_path / "h.jsonl"
    sample = Sample(t_wall=1000.0, t_mono=1.0, rails={"a,b\n\"c": Rail(1.0), "a_b__c": Rail(2.0)},
                    temps_c={"x y": 3.0})
    path.write_text(json_line(recording_header(1000.0, 1.0)) + json_line(record_to_json(sample)))
    columns, rows = read_csv(export_text(str(path), "csv"))
    assert "rail_a_b__c_mw" in columns and "rail_a_b__c_2_mw" in columns and "temp_x_y_c" in columns
    assert float(rows[0]["rail_a_b__c_mw"]) == 1.0 and float(rows[0]["rail_a_b__c_2_mw"]) == 2.0


@pytest.mark.skipif(not SEVEN_W.is_file(), reason="../shared not beside the repo")
def test_real_log_throttle_rows_match_the_reports_events(tmp_path):
    """A real 7W log with a 10 s GPU hold at 306 MHz (its mode inferred): the rows that export marks
    throttled are exactly those inside the report's events."""
    from jtop_roof.outputs.compare import file_report

    lines = SEVEN_W.read_text().splitlines()
    busy = next(i for i, line in enumerate(lines) if "GR3D_FREQ 99%" in line)
    held = tmp_path / "7w_held.log"
    held.write_text("\n".join(held_at_306(lines, busy + 30, 91)) + "\n")
    opts = options(device="orin-nano-8gb-super")
    report = file_report(str(held), tz=UTC, interval_s=None, config=opts)
    _, rows = read_csv(export_text(str(held), "csv", opts))
    assert len(rows) == report["whole"]["samples"]
    events = [e for e in report["events"] if e["unit"] == "gpu"]
    assert [e["kind"] for e in events] == ["throttle"]
    for row in rows:
        t = float(row["t_s"])
        inside = any(e["start_s"] - 1e-6 <= t <= e["end_s"] + 1e-6 for e in events)
        assert ("throttle:gpu" in row["throttle"]) == inside
    energy = sum((float(a["rail_VDD_IN_mw"]) + float(b["rail_VDD_IN_mw"])) / 2
                 * (float(b["t_s"]) - float(a["t_s"])) for a, b in zip(rows, rows[1:], strict=False)) / 1000
    assert energy == pytest.approx(report["whole"]["energy_j"]["total"], rel=1e-6)
