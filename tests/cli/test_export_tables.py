"""One schema for export and the read API: two runs' Parquet files read as one pyarrow dataset
whatever each holds, the processes table, and ``read(path).frame(table)`` equal to
``pandas.read_parquet`` of the export of that table."""

from __future__ import annotations

import csv
import io
import json
from datetime import timezone
from pathlib import Path

import pytest
from paths import OUTSIDE, REPO, TESTS

import jtop_roof
from jtop_roof.api import read
from jtop_roof.formats.logfile import iter_records, open_text
from jtop_roof.formats.recorder import Recorder
from jtop_roof.model.errors import UserError
from jtop_roof.model.records import (
    SCHEMA_VERSION,
    Event,
    Marker,
    PowerReading,
    ProcessReading,
    ProcessRow,
    Sample,
)
from jtop_roof.outputs import export as ex
from jtop_roof.runtime.config import Config

UTC = timezone.utc
DATA = TESTS / "data"
H200 = DATA / "h200_phases.jsonl"  # a real run: phases, and the GPU throttled in the GEMM
SHARED_LOG = (OUTSIDE / "shared" / "tegrastats" / "logs"
              / "orinnano8gb-super_jp6.2.1_benchlab_resnet50_int8_7w_run3.log")


def parquet(path: Path, out: Path, table: str = "samples") -> Path:
    ex.export_file(str(path), "parquet", str(out), tz=UTC, config=Config(), table=table)
    return out


def before_its_first_marker(path: Path, out: Path) -> Path:
    """The real run cut before its first phase: its idle start, no phase and no event."""
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    first = next(i for i, line in enumerate(lines) if '"type":"marker"' in line)
    out.write_text("".join(lines[:first]), encoding="utf-8")
    return out


def real_samples(log: Path) -> list[Sample]:
    with open_text(log) as lines:
        return [r for r in iter_records(lines, tz="UTC") if isinstance(r, Sample) and r.is_sample]


def marked_recording(samples: list[Sample], out: Path, *, processes: bool = False) -> Path:
    """A recording of these samples with a phase around samples 5 to 14; with ``processes``,
    process readings (the first one priming, one empty, one after a gap) and power readings."""
    with Recorder(out, {"source": "replay"}) as rec:
        for i, sample in enumerate(samples):
            mono = sample.t_mono or 0.0
            if i == 5:
                rec.write(Marker("phase_start", "infer", sample.t_wall, mono - 0.01, "script"))
            if i == 15:
                rec.write(Marker("phase_end", None, sample.t_wall, mono - 0.01, "script"))
            if processes and i == 12:
                rec.write(Event("gap", "no data", sample.t_wall, mono - 0.02, gap_s=0.5))
            rec.write(sample)
            if processes and i % 4 == 0:
                bench = ProcessRow(100 + i, "trtexec", None if i == 0 else 95.5, 812.0, 300.0, True)
                rows = [] if i == 4 else [bench, ProcessRow(7, "-sh", 1.5, 2.25)]
                rec.write(ProcessReading(sample.t_wall, mono + 0.005, rows, "/proc + NVML", 5.0, i == 0, 1.0))
                rec.write(PowerReading(sample.t_wall, mono + 0.006, {"VDD_IN": 4000.0 + i}, {},
                                       "INA3221 hwmon", 0.02))
    return out


@pytest.fixture
def pyarrow_modules():
    pytest.importorskip("pandas")
    pa = pytest.importorskip("pyarrow")
    return pa, pytest.importorskip("pyarrow.parquet"), pytest.importorskip("pyarrow.dataset")


def test_a_run_with_phases_and_events_and_one_without_read_as_one_dataset(tmp_path, pyarrow_modules):
    _, pq, ds = pyarrow_modules
    marked = parquet(H200, tmp_path / "marked.parquet")
    quiet = parquet(before_its_first_marker(H200, tmp_path / "quiet.jsonl"), tmp_path / "quiet.parquet")
    marked_table, quiet_table = pq.read_table(marked), pq.read_table(quiet)
    assert marked_table.column("throttle").drop_null().to_pylist()  # events here, none there
    assert quiet_table.column("phase").null_count == quiet_table.num_rows
    assert quiet_table.column("throttle").null_count == quiet_table.num_rows
    assert pq.read_schema(marked).equals(pq.read_schema(quiet))
    both = ds.dataset([str(marked), str(quiet)]).to_table()
    assert both.num_rows == marked_table.num_rows + quiet_table.num_rows
    assert both.schema.equals(pq.read_schema(marked))
    assert str(both.schema.field("time").type) == "timestamp[us, tz=UTC]"


def test_a_plain_log_and_a_recording_of_it_with_phases_read_as_one_dataset(tmp_path, pyarrow_modules):
    if not SHARED_LOG.is_file():
        pytest.skip("../shared is not here")
    pa, pq, ds = pyarrow_modules
    recording = marked_recording(real_samples(SHARED_LOG), tmp_path / "run.jsonl")
    files = [parquet(recording, tmp_path / "run.parquet"), parquet(SHARED_LOG, tmp_path / "log.parquet")]
    schemas = [pq.read_schema(f) for f in files]
    assert schemas[0].equals(schemas[1])
    assert schemas[0].field("phase").type == pa.string() and schemas[0].field("cpu0_mhz").type == pa.int64()
    assert schemas[0].field("t_mono").type == pa.float64()
    assert schemas[0].metadata[b"jroof.schema"] == str(SCHEMA_VERSION).encode()
    phases = ds.dataset([str(f) for f in files]).to_table().column("phase").drop_null().to_pylist()
    assert phases == ["infer"] * 10


def process_recording(tmp_path: Path) -> Path:
    if not SHARED_LOG.is_file():
        pytest.skip("../shared is not here")
    return marked_recording(real_samples(SHARED_LOG)[:30], tmp_path / "host.jsonl", processes=True)


def test_the_processes_table_has_a_row_per_process_per_reading(tmp_path):
    path = process_recording(tmp_path)
    out = io.StringIO()
    count = ex.export_file(str(path), "csv", None, tz=UTC, stdout=out, table="processes")
    rows = list(csv.DictReader(io.StringIO(out.getvalue())))
    assert count == len(rows) == 2 * 7  # readings at samples 0, 4 (empty), 8, ... 28
    assert list(rows[0]) == ["t_wall", "time", "t_mono", "t_s", "phase", "source", "period_s", "gap_s",
                             "floor_pct", "priming", "pid", "name", "cpu_pct", "rss_mb", "gpu_mem_mb",
                             "benchmark"]
    first, shell = rows[0], rows[1]
    assert (first["priming"], first["pid"], first["cpu_pct"], first["benchmark"]) == \
        ("True", "100", "", "True")
    assert (shell["name"], shell["rss_mb"], shell["gpu_mem_mb"]) == ("'-sh", "2.25", "")  # no formula
    assert {r["pid"] for r in rows[2:4]} == {"108", "7"} and rows[2]["phase"] == "infer"
    assert [r["gap_s"] for r in rows] == [""] * 4 + ["0.5"] * 2 + [""] * 8  # both rows after the gap
    objects = [json.loads(line) for line in
               _text(path, "jsonl", "processes").splitlines()]
    assert objects[2]["cpu_pct"] == 95.5 and objects[2]["pid"] == 108 and objects[3]["benchmark"] is False
    assert objects[0]["time"].endswith("+00:00") and isinstance(objects[0]["t_mono"], float)


def _text(path: Path, fmt: str, table: str) -> str:
    out = io.StringIO()
    ex.export_file(str(path), fmt, None, tz=UTC, stdout=out, table=table)
    return out.getvalue()


def test_the_command_exports_processes(tmp_path):
    from jtop_roof.commands.main import main

    path = process_recording(tmp_path)
    assert main(["export", str(path), "--table", "processes", "--out", str(tmp_path / "p.csv")]) == 0
    assert len((tmp_path / "p.csv").read_text().splitlines()) == 1 + 14


@pytest.mark.parametrize("table", ["samples", "power", "processes"])
def test_the_api_frame_equals_the_exported_parquet(tmp_path, pyarrow_modules, table):
    import pandas as pd

    for path in (process_recording(tmp_path), SHARED_LOG):
        exported = pd.read_parquet(parquet(path, tmp_path / f"{table}.parquet", table))
        run = jtop_roof.read(str(path))
        pd.testing.assert_frame_equal(exported, run.frame(table))
        if path == SHARED_LOG and table != "samples":
            assert len(exported) == 0  # a plain log has no such readings: an empty table, same dtypes


def test_the_api_frame_has_export_types(tmp_path):
    pytest.importorskip("pandas")
    run = read(str(process_recording(tmp_path)))
    samples, processes = run.frame(), run.frame("processes")
    assert str(samples["time"].dtype) == "datetime64[us, UTC]" and str(samples["gpu_mhz"].dtype) == "Int64"
    assert samples["phase"].dtype == "str" and samples["t_mono"].dtype == "float64"
    assert str(processes["pid"].dtype) == "Int64" and str(processes["benchmark"].dtype) == "boolean"
    assert samples["time"].iloc[0].timestamp() == pytest.approx(run.samples["t_wall"][0])
    with pytest.raises(UserError, match="unknown table"):
        run.frame("rails")


def test_read_is_at_the_package_top_and_keeps_numeric_columns(tmp_path):
    path = process_recording(tmp_path)
    assert jtop_roof.read is read
    run = read(str(path))
    assert run.samples["gpu_mhz"].dtype.kind == "f" and run.samples["t_mono"].dtype.kind == "f"
    assert str(run.samples["time"].dtype) == "datetime64[us]"
    first = run.samples["time"][0].astype("datetime64[us]").astype("int64") / 1e6
    assert first == pytest.approx(run.samples["t_wall"][0])
    assert "phase" in run.text and "time" not in run.text


def test_records_are_the_models_objects(tmp_path):
    path = process_recording(tmp_path)
    records = list(read(str(path)).records())
    samples = [r for r in records if isinstance(r, Sample) and r.is_sample]
    assert len(samples) == 30 == read(str(path)).report["whole"]["samples"]
    readings = [r for r in records if isinstance(r, ProcessReading)]
    assert [len(r.processes) for r in readings] == [2, 0, 2, 2, 2, 2, 2, 2]
    assert readings[0].processes[0].name == "trtexec" and readings[0].priming
    assert [r.kind for r in records if isinstance(r, Marker)] == ["phase_start", "phase_end"]
    assert sum(isinstance(r, PowerReading) for r in records) == 8
    with pytest.raises(UserError):
        list(read(str(path)).__class__(str(tmp_path / "gone.jsonl"), {}, {}, {}).records())


def test_the_export_schema_page_documents_every_fixed_column_and_metadata_key():
    """docs/export.md's schema section names each column every file of a table has, and each Parquet key."""
    from jtop_roof.outputs.export_types import METADATA_KEYS

    page = (REPO / "docs" / "export.md").read_text(encoding="utf-8")
    section = page.split("## The export schema", 1)[1].split("\n## ", 1)[0]
    for name in (*ex.PROCESS_COLUMNS, "throttle", "counter_NAME_mj", "power_total_source", *METADATA_KEYS):
        assert f"`{name}`" in section, name
