"""Export's rows are built straight from the records, and a Parquet export holds a bounded part of
the file at once: the Arrow columns made from buffers equal pyarrow's own conversion of the same
cells, row groups are cut at the batch size whatever the count, a Parquet export does not load
pandas (nor a CSV export numpy), and a sample that shows a new name after thousands that show
none still gets its column."""

from __future__ import annotations

import csv
import io
import math
import subprocess
import sys
from datetime import datetime, timedelta, timezone

import pytest
from factories import COUNT, recording_header, synthetic_sample, write_synthetic
from paths import REPO

from jtop_roof.model.codec import json_line, record_to_json
from jtop_roof.model.records import Engine, Rail, Sample
from jtop_roof.outputs import export as ex
from jtop_roof.outputs import export_writers
from jtop_roof.outputs.export_arrow import ArrowGroup
from jtop_roof.outputs.export_types import BOOL, FLOAT, INT, TEXT, TIME

UTC = timezone.utc


@pytest.fixture
def pa():
    return pytest.importorskip("pyarrow")


def test_arrow_columns_from_buffers_equal_pyarrows_own(pa):
    """Each column type, with nulls, NaN, text beyond ASCII and times to the microsecond, through
    two groups of one ``ArrowGroup`` (its buffers are filled again for the second, shorter one)."""
    moment = datetime(2025, 10, 26, 0, 0, 1, 500_001, tzinfo=UTC)
    kinds = [(FLOAT, pa.float64()), (INT, pa.int64()), (BOOL, pa.bool_()), (TEXT, pa.string()),
             (TIME, pa.timestamp("us", tz="UTC"))]
    first = [(1.0, 1020, True, "idle", moment), (None, None, None, None, None),
             (math.nan, -5, False, "", moment + timedelta(days=3000)),
             (-0.0, 10**12, True, "phase é \u202e", datetime(1, 1, 1, tzinfo=UTC)),
             (1e300, 7, False, "=x", None)]
    second = [(2.5, 3, False, "b", moment), (3.0, 4, True, "c", moment)]
    group = ArrowGroup(pa, kinds, len(first))
    for rows, cut in ((first, 2), (second, 1)):
        group.add(rows[:cut])
        group.add(rows[cut:])
        made = group.arrays()
        assert group.count == 0
        for at, (_, arrow_type) in enumerate(kinds):
            made[at].validate(full=True)
            expected = pa.array([row[at] for row in rows], type=arrow_type)
            assert made[at].type == arrow_type and made[at].null_count == expected.null_count
            assert [repr(v) for v in made[at].to_pylist()] == [repr(v) for v in expected.to_pylist()]
    with pytest.raises(ValueError):
        group.add(first + second)


def test_row_groups_are_cut_at_the_batch_whatever_the_count(tmp_path, monkeypatch, pa):
    import pyarrow.parquet as pq

    path = tmp_path / "run.jsonl"
    write_synthetic(path)
    whole = tmp_path / "whole.parquet"
    ex.export_file(str(path), "parquet", str(whole), tz=UTC)
    for batch, chunk in ((7, 3), (COUNT, 7), (COUNT // 2, COUNT // 2), (1, 1)):
        monkeypatch.setattr(export_writers, "PARQUET_BATCH", batch)
        monkeypatch.setattr(export_writers, "ARROW_CHUNK", chunk)
        cut = tmp_path / f"cut{batch}.parquet"
        assert ex.export_file(str(path), "parquet", str(cut), tz=UTC) == COUNT
        meta = pq.ParquetFile(cut).metadata
        assert [meta.row_group(i).num_rows for i in range(meta.num_row_groups)] == \
            [min(batch, COUNT - start) for start in range(0, COUNT, batch)]
        assert pq.read_table(cut).equals(pq.read_table(whole))
        assert pq.read_schema(cut).metadata == pq.read_schema(whole).metadata


def test_a_table_without_rows_is_one_empty_row_group(tmp_path, pa):
    import pyarrow.parquet as pq

    path = tmp_path / "run.jsonl"
    write_synthetic(path)
    out = tmp_path / "power.parquet"
    assert ex.export_file(str(path), "parquet", str(out), tz=UTC, table="power") == 0
    table = pq.read_table(out)
    assert table.num_rows == 0 and table.column_names[:4] == ["t_wall", "time", "t_mono", "t_s"]


def test_a_parquet_export_does_not_load_pandas(tmp_path, pa):
    """pyarrow's conversion of Python lists imports pandas (some 50 MB): the export's does not."""
    path = tmp_path / "run.jsonl"
    write_synthetic(path)
    code = ("import sys; from datetime import timezone; from jtop_roof.outputs import export as ex; "
            f"ex.export_file({str(path)!r}, 'parquet', {str(tmp_path / 'x.parquet')!r}, tz=timezone.utc); "
            "print('pandas' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_a_csv_export_does_not_load_numpy(tmp_path):
    """Only Parquet needs numpy (some 12 MB): a CSV export's memory stays the reader's."""
    path = tmp_path / "run.jsonl"
    write_synthetic(path)
    code = ("import sys; from datetime import timezone; from jtop_roof.outputs import export as ex; "
            f"ex.export_file({str(path)!r}, 'csv', {str(tmp_path / 'x.csv')!r}, tz=timezone.utc); "
            "print('numpy' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_a_name_first_shown_late_gets_its_column(tmp_path):
    """Thousands of samples of one shape, then one with a new zone, a new rail, an engine's first
    load and one more core: each gets its column, filled on that row only."""
    path = tmp_path / "late.jsonl"
    lines = [json_line(recording_header(1_000_000.0, 100.0))]
    for i in range(3000):
        sample = synthetic_sample(5)
        sample.t_wall, sample.t_mono = 1_000_000.0 + i, 100.0 + i
        if i == 2999:
            sample.temps_c = {**sample.temps_c, "late": 41.5}
            sample.rails = {**sample.rails, "VDD_LATE": Rail(7.0)}
            sample.engines = {**sample.engines, "APE": Engine(12.0, 200)}
            sample.cpus = [*(sample.cpus or []), None, sample.cpus[0] if sample.cpus else None]
        lines.append(json_line(record_to_json(sample)))
    path.write_text("".join(lines))
    out = io.StringIO()
    ex.export_file(str(path), "csv", None, tz=UTC, stdout=out)
    rows = list(csv.DictReader(io.StringIO(out.getvalue())))
    assert len(rows) == 3000
    late = (("temp_late_c", "41.5"), ("rail_VDD_LATE_mw", "7.0"), ("engine_APE_load_pct", "12.0"),
            ("cpu3_mhz", "960"), ("cpu2_mhz", ""))
    for column, value in late:
        assert rows[-1][column] == value, column
        assert {row[column] for row in rows[:-1]} == {""}, column


def test_a_sample_of_no_new_name_keeps_the_columns_of_those_before(tmp_path):
    """Samples whose names are all known add no column, in whatever order they name them."""
    path = tmp_path / "order.jsonl"
    first = Sample(t_wall=1000.0, t_mono=1.0, rails={"B": Rail(1.0), "A": Rail(2.0)}, temps_c={"z": 1.0})
    second = Sample(t_wall=1001.0, t_mono=2.0, rails={"A": Rail(3.0), "B": Rail(4.0)}, temps_c={"z": 2.0})
    path.write_text(json_line(recording_header(1000.0, 1.0)) + json_line(record_to_json(first))
                    + json_line(record_to_json(second)))
    out = io.StringIO()
    ex.export_file(str(path), "csv", None, tz=UTC, stdout=out)
    rows = list(csv.DictReader(io.StringIO(out.getvalue())))
    assert [k for k in rows[0] if k.startswith("rail_")] == ["rail_B_mw", "rail_A_mw"]
    assert [(r["rail_A_mw"], r["rail_B_mw"]) for r in rows] == [("2.0", "1.0"), ("3.0", "4.0")]
