"""``export``'s column types: the tz-aware ``time`` column, integers and floats alike in every
format, CSV and Parquet read back by pandas into the same dtypes, and Parquet's metadata."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
from datetime import datetime, timezone
from pathlib import Path

import pytest
from factories import BENCH, COUNT, HELD, recording_header, write_synthetic
from paths import TESTS

from jtop_roof.model.codec import json_line, record_to_json
from jtop_roof.model.records import Rail, Sample
from jtop_roof.outputs import export as ex
from jtop_roof.outputs.export_types import METADATA_KEYS, pandas_dtypes, utc_time
from jtop_roof.runtime.config import Config

UTC = timezone.utc
DATA = TESTS / "data"


def export_text(path: Path, fmt: str) -> str:
    out = io.StringIO()
    ex.export_file(str(path), fmt, None, tz=UTC, config=Config(), stdout=out)
    return out.getvalue()


def csv_rows(path: Path) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(export_text(path, "csv"))))


def plain_recording(path: Path, walls: list[float]) -> Path:
    """Samples without markers or throttles (no phase, no event), at these wall times."""
    lines = [json_line(recording_header(walls[0], 1.0))]
    for i, wall in enumerate(walls):
        sample = Sample(t_wall=wall, t_mono=1.0 + i, rails={"VDD_IN": Rail(4000.0 + i)}, temps_c={"tj": 40.0})
        lines.append(json_line(record_to_json(sample)))
    path.write_text("".join(lines))
    return path


def test_time_is_utc_iso_with_its_offset_beside_t_wall(tmp_path):
    samples = write_synthetic(tmp_path / "run.jsonl")
    rows = csv_rows(tmp_path / "run.jsonl")
    for row, sample in zip(rows, samples, strict=True):
        moment = datetime.fromisoformat(row["time"])
        assert row["time"].endswith("+00:00") and moment.tzinfo is not None
        assert moment.timestamp() == pytest.approx(sample.t_wall, abs=1e-6)
        assert float(row["t_wall"]) == sample.t_wall
    objects = [json.loads(line) for line in export_text(tmp_path / "run.jsonl", "jsonl").splitlines()]
    assert [o["time"] for o in objects] == [r["time"] for r in rows]


def test_integers_stay_integers_and_floats_floats_in_text_formats(tmp_path):
    write_synthetic(tmp_path / "run.jsonl")
    rows = csv_rows(tmp_path / "run.jsonl")
    objects = [json.loads(line) for line in export_text(tmp_path / "run.jsonl", "jsonl").splitlines()]
    for row, obj in zip(rows, objects, strict=True):
        assert isinstance(obj["gpu_mhz"], int) and "." not in row["gpu_mhz"]
        assert isinstance(obj["emc_mhz"], int)
        assert isinstance(obj["gpu_load_pct"], float) and "." in row["gpu_load_pct"]  # 0.0 and 99.0
        assert isinstance(obj["rail_VDD_IN_mw"], float)


def test_every_wall_time_the_reader_keeps_has_a_time_and_no_other(tmp_path):
    path = plain_recording(tmp_path / "far.jsonl", [0.0, 32_503_679_999.5, 4e11])  # 4e11: past year 9999
    rows = csv_rows(path)
    assert [r["time"] for r in rows] == ["1970-01-01T00:00:00.000000+00:00",
                                         "2999-12-31T23:59:59.500000+00:00", ""]
    assert rows[2]["t_wall"] == ""  # the reader's bounds null it: no time either
    for impossible in (float("nan"), float("inf"), 1e20, -1e20, None):
        assert utc_time(impossible) is None


def test_a_log_without_wall_times_has_an_empty_time_column(tmp_path):
    """Every file has the same leading columns, so that files with and without stamps read as one."""
    stamped = [line for line in (DATA / "fake_tegrastats_orinnano_super.txt").read_text().splitlines()
               if line and not line.startswith("#")]
    unstamped = tmp_path / "plain.log"
    unstamped.write_text("".join(line.split(" ", 2)[2] + "\n" for line in stamped))  # as older releases print
    rows = csv_rows(unstamped)
    assert rows and all(row["t_wall"] == "" and row["time"] == "" and row["t_mono"] != "" for row in rows)


def read_both(tmp_path: Path, path: Path):
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    csv_out, parquet_out = tmp_path / "out.csv", tmp_path / "out.parquet"
    ex.export_file(str(path), "csv", str(csv_out), tz=UTC, config=Config())
    ex.export_file(str(path), "parquet", str(parquet_out), tz=UTC, config=Config())
    dtypes = pandas_dtypes(next(csv.reader(csv_out.open())))
    return pd.read_csv(csv_out, dtype=dtypes, parse_dates=["time"]), pd.read_parquet(parquet_out)


def test_csv_and_parquet_read_back_with_the_same_dtypes_and_values(tmp_path):
    write_synthetic(tmp_path / "run.jsonl")
    from_csv, from_parquet = read_both(tmp_path, tmp_path / "run.jsonl")
    assert list(from_csv.columns) == list(from_parquet.columns)
    assert dict(from_csv.dtypes) == dict(from_parquet.dtypes)
    assert str(from_parquet["time"].dtype).endswith(", UTC]")
    assert str(from_parquet["gpu_mhz"].dtype) == "Int64"  # every sample has a GPU clock
    assert str(from_parquet["cpu1_mhz"].dtype) == "Int64"  # an offline core: missing, still integers
    assert from_parquet["cpu1_mhz"].isna().sum() == COUNT // 2
    assert (from_csv["time"] == from_parquet["time"]).all()
    assert from_csv["phase"].notna().sum() == len(BENCH) and from_csv["throttle"].notna().sum() == len(HELD)
    numbers = [c for c in from_csv.columns if c not in ("phase", "throttle", "power_total_source")]
    assert from_csv[numbers].equals(from_parquet[numbers])
    assert len(from_csv) == COUNT


def test_a_run_without_phases_or_events_still_has_text_columns(tmp_path):
    """Empty throughout, ``phase`` and ``throttle`` are still strings: never a float column of nulls
    that another run's names could not join."""
    path = plain_recording(tmp_path / "quiet.jsonl", [1e6 + i for i in range(5)])
    from_csv, from_parquet = read_both(tmp_path, path)
    for column in ("phase", "throttle"):
        assert from_csv[column].isna().all() and from_parquet[column].isna().all()
        assert from_parquet[column].dtype == "str"
    assert dict(from_csv.dtypes) == dict(from_parquet.dtypes)


def test_parquet_metadata_describes_the_recording(tmp_path):
    pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    import jtop_roof

    write_synthetic(tmp_path / "run.jsonl")
    out = tmp_path / "run.parquet"
    ex.export_file(str(tmp_path / "run.jsonl"), "parquet", str(out), tz=UTC,
                   config=dataclasses.replace(Config(), power_mode=None))
    schema = pq.read_schema(out)
    meta = {k.decode(): v.decode() for k, v in schema.metadata.items() if k.startswith(b"jroof.")}
    assert set(meta) <= set(METADATA_KEYS)
    assert meta["jroof.version"] == jtop_roof.__version__
    assert meta["jroof.recorded_by"] == "test"  # the recording's header
    assert meta["jroof.source"] == "tegrastats" and meta["jroof.table"] == "samples"
    assert meta["jroof.device"] == "orin-nano-8gb-super" and meta["jroof.power_mode"] == "7W"
    assert meta["jroof.tz"] == "UTC"
    assert not any(key in meta for key in ("jroof.host", "jroof.command"))


def test_a_plain_logs_parquet_says_so_and_names_the_given_zone(tmp_path):
    pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    from jtop_roof.model.timeline import parse_tz

    log = tmp_path / "board.log"
    log.write_text("".join(line + "\n" for line in (DATA / "fake_tegrastats_orinnano_super.txt").read_text()
                           .splitlines() if line and not line.startswith("#")))
    out = tmp_path / "board.parquet"
    ex.export_file(str(log), "parquet", str(out), tz=parse_tz("Europe/Warsaw"), config=Config())
    meta = pq.read_schema(out).metadata
    assert meta[b"jroof.source"] == b"tegrastats log" and meta[b"jroof.tz"] == b"Europe/Warsaw"
    assert b"jroof.recorded_by" not in meta
