"""The workload spec: reading, validation (one-line errors naming file and field), and the point."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from jtop_roof.roofline.devices import PRECISIONS
from jtop_roof.roofline.workload import (
    MAX_BYTES_PER_ITER,
    PRECISION_ALIASES,
    Point,
    Workload,
    WorkloadError,
    load_workload,
    point,
    workload_from_mapping,
)


def write(tmp_path: Path, text: str, name: str = "w.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def error_of(tmp_path: Path, text: str) -> str:
    path = write(tmp_path, text)
    with pytest.raises(WorkloadError) as info:
        load_workload(path)
    message = str(info.value)
    assert "\n" not in message
    assert str(path) in message
    return message


def test_macs_are_doubled_and_a_bytes_range_gives_an_intensity_interval(tmp_path):
    path = write(tmp_path, (
        "name: resnet50 int8 b1\n"
        "precision: int8\n"
        "macs_per_iter: 4.1e+9\n"
        "bytes_per_iter: [2.6e+7, '1.2e8']\n"
        "notes: |\n  weights + I/O (low)\n  every tensor unfused (high)\n"
    ))
    w = load_workload(path)
    assert w == Workload(
        name="resnet50 int8 b1", precision="int8_tensor", flops_per_iter=8.2e9, counted_as="macs",
        bytes_per_iter_low=2.6e7, bytes_per_iter_high=1.2e8,
        notes="weights + I/O (low)\nevery tensor unfused (high)",
    )
    assert w.intensity_low == pytest.approx(8.2e9 / 1.2e8)
    assert w.intensity_high == pytest.approx(8.2e9 / 2.6e7)


def test_flops_and_a_single_bytes_figure(tmp_path):
    # "8.2e9" without a sign in the exponent is text to YAML 1.1: read as the number it means.
    spec = "name: gemm\nprecision: BF16\nflops_per_iter: 8.2e9\nbytes_per_iter: 4e+6\n"
    w = load_workload(write(tmp_path, spec))
    assert w.flops_per_iter == 8.2e9 and w.counted_as == "flops" and w.precision == "bf16_tensor"
    assert w.bytes_per_iter_low == w.bytes_per_iter_high == 4e6
    assert w.intensity_low == w.intensity_high == pytest.approx(2050.0)


def test_a_copy_has_zero_flops_and_flops_alone_have_no_intensity():
    copy = workload_from_mapping({"name": "memcpy", "precision": "fp32", "flops_per_iter": 0,
                                  "bytes_per_iter": 2e9})
    assert copy.flops_per_iter == 0 and copy.intensity_low == 0 and copy.intensity_high == 0
    bytes_only = workload_from_mapping({"name": "copy", "precision": "fp32", "bytes_per_iter": 2e9})
    assert bytes_only.flops_per_iter is None and bytes_only.intensity_low is None
    flops_only = workload_from_mapping({"name": "x", "precision": "fp16", "flops_per_iter": 1e9})
    assert flops_only.bytes_per_iter_low is None and flops_only.intensity_high is None


def test_every_alias_names_a_device_precision():
    assert set(PRECISION_ALIASES.values()) <= set(PRECISIONS)
    assert set(PRECISIONS) <= set(PRECISION_ALIASES)


def test_point_is_flops_times_rate_and_the_intensity_range():
    w = workload_from_mapping({"name": "r50", "precision": "int8", "macs_per_iter": 4.1e9,
                               "bytes_per_iter": [2.6e7, 1.2e8]})
    # The 15 W benchlab run: 1656 queries in 3.007 s.
    p = point(w, 1656, 3.007)
    assert isinstance(p, Point)
    assert p.iterations_per_s == pytest.approx(1656 / 3.007)
    assert p.achieved_flops_per_s == pytest.approx(8.2e9 * 1656 / 3.007)
    assert p.intensity == (w.intensity_low, w.intensity_high)
    assert p.bytes_per_s_low == pytest.approx(2.6e7 * 1656 / 3.007)
    assert p.bytes_per_s_high == pytest.approx(1.2e8 * 1656 / 3.007)
    assert point(w, 0, 1.0).achieved_flops_per_s == 0
    no_bytes = point(workload_from_mapping({"name": "x", "precision": "fp32", "flops_per_iter": 2}), 3, 2)
    assert no_bytes.achieved_flops_per_s == 3.0
    assert no_bytes.intensity is None and no_bytes.bytes_per_s_low is None


@pytest.mark.parametrize(
    ("iterations", "seconds"),
    [(-1, 1.0), (float("nan"), 1.0), (float("inf"), 1.0), (1, 0), (1, -2.0), (1, float("nan")),
     (1, float("inf")), (True, 1.0), ("3", 1.0)],
)
def test_point_refuses_bad_windows(iterations, seconds):
    w = workload_from_mapping({"name": "x", "precision": "fp32", "flops_per_iter": 1})
    with pytest.raises(WorkloadError) as info:
        point(w, iterations, seconds)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ("precision: fp32\nflops_per_iter: 1\n", "'name': missing"),
        ("name: x\nflops_per_iter: 1\n", "'precision': missing"),
        ("name: x\nprecision: fp4\nflops_per_iter: 1\n", "'precision': expected one of"),
        ("name: x\nprecision: [fp32]\nflops_per_iter: 1\n", "'precision'"),
        ("name: ''\nprecision: fp32\nflops_per_iter: 1\n", "'name'"),
        ("name: 12\nprecision: fp32\nflops_per_iter: 1\n", "'name': expected text"),
        ("name: \"a\\x07b\"\nprecision: fp32\nflops_per_iter: 1\n", "'name'"),
        ("name: x\nprecision: fp32\n", "give flops_per_iter"),
        ("name: x\nprecision: fp32\nflops_per_iter: 1\nmacs_per_iter: 1\n", "both given"),
        ("name: x\nprecision: fp32\nflops_per_iter: -1\n", "'flops_per_iter'"),
        ("name: x\nprecision: fp32\nflops_per_iter: .nan\n", "'flops_per_iter'"),
        ("name: x\nprecision: fp32\nflops_per_iter: .inf\n", "'flops_per_iter'"),
        ("name: x\nprecision: fp32\nflops_per_iter: 'nan'\n", "'flops_per_iter'"),
        ("name: x\nprecision: fp32\nflops_per_iter: 1e+19\n", "'flops_per_iter'"),
        ("name: x\nprecision: fp32\nflops_per_iter: true\n", "'flops_per_iter': expected a number"),
        ("name: x\nprecision: fp32\nflops_per_iter: ten\n", "'flops_per_iter'"),
        ("name: x\nprecision: fp32\nflops_per_iter: " + "9" * 400 + "\n", "'flops_per_iter'"),
        ("name: x\nprecision: fp32\nmacs_per_iter: {a: 1}\n", "'macs_per_iter': expected a number"),
        ("name: x\nprecision: fp32\nbytes_per_iter: 0\n", "'bytes_per_iter'"),
        ("name: x\nprecision: fp32\nbytes_per_iter: [1, 2, 3]\n", "expected one number or [low, high]"),
        ("name: x\nprecision: fp32\nbytes_per_iter: [5, 2]\n", "low 5 is above high 2"),
        ("name: x\nprecision: fp32\nbytes_per_iter: [0, 2]\n", "'bytes_per_iter[0]'"),
        (f"name: x\nprecision: fp32\nbytes_per_iter: [1, {MAX_BYTES_PER_ITER * 10:e}]\n",
         "'bytes_per_iter[1]'"),
        ("name: x\nprecision: fp32\nflops_per_iter: 1\nflop_per_iter: 2\n", "'flop_per_iter': unknown key"),
        ("name: x\nprecision: fp32\nflops_per_iter: 1\nnotes: 5\n", "'notes': expected text"),
        ("- a\n- b\n", "expected a mapping"),
        ("name: [unclosed\n", "at line"),
        ("", "empty"),
    ],
)
def test_every_bad_field_is_one_line_naming_file_and_field(tmp_path, text, field):
    assert field in error_of(tmp_path, text)


def test_alias_bomb_is_refused_before_it_is_built(tmp_path):
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [*a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}, "
              f"*a{i - 1}, *a{i - 1}, *a{i - 1}]" for i in range(1, 10)]
    assert "once aliases are expanded" in error_of(tmp_path, "\n".join(lines) + "\n")


def test_unreadable_files_are_one_line(tmp_path):
    for path, why in [(tmp_path / "missing.yaml", "No such file"), (tmp_path, "a directory")]:
        with pytest.raises(WorkloadError, match=f"cannot read workload file .*{why}") as info:
            load_workload(path)
        assert "\n" not in str(info.value)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(WorkloadError, match="not a regular file"):
        load_workload(fifo)
    big = tmp_path / "big.yaml"
    big.write_bytes(b"#" * (2 << 20))
    with pytest.raises(WorkloadError, match="larger than"):
        load_workload(big)
    binary = tmp_path / "bin.yaml"
    binary.write_bytes(b"name: \xff\xfe\n")
    with pytest.raises(WorkloadError, match="not UTF-8"):
        load_workload(binary)
