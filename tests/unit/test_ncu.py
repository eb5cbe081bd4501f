"""Nsight Compute CSV import: long and raw layouts, units, FLOPs as roofline.md counts them.

Real exports: ../shared/research/h200_probe (skipped when absent) and excerpts of them in
tests/data/ncu (see its SOURCES.md). The reference figures are computed here from the CSV cells with
the csv module, independently of jtop_roof.formats.ncu.
"""

from __future__ import annotations

import csv
import os
from pathlib import Path

import pytest
from paths import REPO, TESTS

from jtop_roof.formats.ncu import Kernel, NcuError, read_ncu_csv

ROOT = REPO
DATA = TESTS / "data" / "ncu"
PROBE = ROOT.parent / "shared" / "research" / "h200_probe"
needs_probe = pytest.mark.skipif(
    not (PROBE / "ncu_csv.txt").is_file(), reason="../shared/research not beside the repo"
)
N = 8192  # the bf16 GEMM's size (roofline.md: "bf16 GEMM 8192³")

HEADER = ('"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size",'
          '"Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"')


def long_rows(cc: str, rows: list[tuple[str, str, str, str]]) -> str:
    """A long-layout export of (kernel id, metric, unit, value) rows."""
    out = [HEADER]
    for kid, metric, unit, value in rows:
        out.append(f'"{kid}","1","a.out","h","k{kid}","1","7","(1, 1, 1)","(1, 1, 1)","0","{cc}",'
                   f'"Command line profiler metrics","{metric}","{unit}","{value}"')
    return "\n".join(out) + "\n"


def read_export(tmp_path: Path, text: str) -> tuple[Kernel, ...]:
    """Kernels of ``text`` saved as an export file and read as ``report --ncu`` reads it."""
    path = tmp_path / "export.csv"
    path.write_text(text, encoding="utf-8")
    return read_ncu_csv(path)


def cells(path: Path) -> dict[tuple[str, str], tuple[str, float]]:
    """(kernel id, metric) -> (unit, value) straight from a long-layout file."""
    lines = [line for line in path.read_text().splitlines() if line.startswith('"')]
    out = {}
    for row in csv.DictReader(lines):
        value = float(row["Metric Value"].replace(",", ""))
        out[(row["ID"], row["Metric Name"])] = (row["Metric Unit"], value)
    return out


def by_name(kernels: tuple[Kernel, ...]) -> dict[str, Kernel]:
    return {k.name: k for k in kernels}


def check_fma_and_fill(kernels: tuple[Kernel, ...], source: Path) -> None:
    c = cells(source)
    fma, fill = by_name(kernels)["fma_loop"], by_name(kernels)["cupy_fill"]
    sass = "sm__sass_thread_inst_executed_op_{}_pred_on.sum"
    ffma, fadd, fmul = (c[("0", sass.format(op))][1] for op in ("ffma", "fadd", "fmul"))
    expected = 2 * ffma + fadd + fmul
    assert c[("0", "gpu__time_duration.sum")][0] == "ns"
    assert fma.flops == expected == 4_435_132_416  # roofline.md: 4.435 GFLOP
    assert fma.flops_parts == {"fp32": expected, "tensor": 0.0}
    assert fma.flops_note is None
    assert fma.duration_s == pytest.approx(c[("0", "gpu__time_duration.sum")][1] * 1e-9)
    assert fma.achieved_flops_per_s == pytest.approx(58.5e12, rel=1e-3)  # roofline.md: 58.5 TFLOP/s
    assert fma.dram_bytes == 4096
    assert fma.intensity == pytest.approx(expected / 4096)  # about 10^6
    assert fma.cc == "9.0" and fma.id == "0"
    # A fill: no FLOPs, all bytes; intensity 0, a memory-bound point.
    assert fill.flops == 0 and fill.dram_bytes == 241_678_080 and fill.intensity == 0
    assert fill.duration_s == pytest.approx(c[("1", "gpu__time_duration.sum")][1] * 1e-9)


def check_gemm(kernel: Kernel) -> None:
    # The tensor ops counter counts 2 per FMA: a dense N^3 GEMM is 2 N^3 FLOPs, plus tile padding
    # (1.6 % on this export, roofline.md), never less.
    assert 2 * N**3 <= kernel.flops <= 1.02 * 2 * N**3  # type: ignore[operator]
    assert kernel.flops == 1_116_691_496_960
    assert kernel.flops_parts == {"tensor": 1_116_691_496_960}
    assert kernel.flops_note is not None and "CUDA-core FLOPs not counted" in kernel.flops_note
    assert kernel.duration_s == pytest.approx(1.389e-3, rel=1e-3)
    assert kernel.achieved_flops_per_s == pytest.approx(804e12, rel=2e-3)  # roofline.md: 804 TFLOP/s
    assert kernel.dram_bytes == pytest.approx(1.382e9, rel=1e-3)
    assert kernel.intensity == pytest.approx(808, rel=2e-3)  # roofline.md: AI = 808 FLOP/B
    assert kernel.sm_hz == pytest.approx(1.596e9, rel=1e-3)  # the power-capped clock
    # Against the roof at that clock (540,672 ops/clk x f): about 93 % (roofline.md).
    assert kernel.sm_hz is not None and kernel.achieved_flops_per_s is not None
    assert kernel.achieved_flops_per_s / (540_672 * kernel.sm_hz) == pytest.approx(0.93, abs=0.01)


# -- excerpts ---------------------------------------------------------------------------------------
def test_long_excerpt_fma_loop_and_fill():
    path = DATA / "h200_fma_fill_long_excerpt.csv"
    kernels = read_ncu_csv(path)
    assert [k.name for k in kernels] == ["fma_loop", "cupy_fill"]
    check_fma_and_fill(kernels, path)


def test_long_and_raw_gemm_excerpts_agree_with_2n_cubed():
    (long_kernel,) = read_ncu_csv(DATA / "h200_gemm_bf16_long_excerpt.csv")
    (raw_kernel,) = read_ncu_csv(DATA / "h200_gemm_bf16_raw_excerpt.csv")
    check_gemm(long_kernel)
    check_gemm(raw_kernel)
    assert raw_kernel.name == long_kernel.name == "nvjet_sm90_tst_320x128_64x3_1x2_h_bz_coopB_NNT"
    assert raw_kernel.metrics["gpu__time_duration.sum"] == pytest.approx(1_388_864e-9)
    assert raw_kernel.metrics["device__attribute_fb_bus_width"] == 6016  # unitless attribute kept


# -- the whole real exports -------------------------------------------------------------------------
@needs_probe
def test_real_long_export_with_command_and_progress_lines():
    path = PROBE / "ncu_csv.txt"
    assert path.read_text().startswith("$ ")  # the command echo, then ==WARNING==/==PROF== lines
    kernels = read_ncu_csv(path)
    assert len(kernels) == 2
    check_fma_and_fill(kernels, path)
    fma = by_name(kernels)["fma_loop"]
    assert fma.metrics["sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained"] == 16_896
    assert fma.metrics["dram__bytes.sum.per_second"] == pytest.approx(54_054_054.05)


@needs_probe
def test_real_gemm_exports_long_and_raw():
    (long_kernel,) = read_ncu_csv(PROBE / "ncu_gemm_bf16_long.csv")
    (raw_kernel,) = read_ncu_csv(PROBE / "ncu_gemm_bf16_raw_subset.csv")
    for kernel in (long_kernel, raw_kernel):
        check_gemm(kernel)
    # Two runs of the same GEMM: within 0.1 % of each other.
    assert raw_kernel.duration_s == pytest.approx(long_kernel.duration_s, rel=1e-3)
    assert raw_kernel.dram_bytes == pytest.approx(long_kernel.dram_bytes, rel=1e-3)


# -- units, layouts and counting rules ---------------------------------------------------------------
def test_units_are_converted_from_what_the_file_says(tmp_path):
    text = long_rows("8.0", [
        ("0", "gpu__time_duration.sum", "usecond", "41.28"),
        ("0", "dram__bytes_read.sum", "Mbyte", "2.5"),
        ("0", "dram__bytes_write.sum", "Kbyte", "640"),
        ("0", "sm__cycles_elapsed.avg.per_second", "cycle/nsecond", "1.41"),
        ("0", "smsp__sass_thread_inst_executed_op_hfma_pred_on.sum", "Kinst", "1,000"),
        ("0", "sm__sass_thread_inst_executed_op_dadd_pred_on.sum", "inst", "10"),
        ("0", "sm__inst_executed_pipe_tensor.sum", "inst", "0"),
        ("1", "gpu__time_duration.sum", "msecond", "2"),
        ("1", "dram__bytes.sum", "Gbyte", "1.5"),
        ("1", "dram__bytes.sum.per_second", "Tbyte/second", "0.75"),
        ("1", "sm__sass_thread_inst_executed_op_ffma_pred_on.sum", "inst", "n/a"),
        ("2", "gpu__time_duration.sum", "second", "1"),
        ("2", "dram__bytes.sum", "KiB", "1"),
        ("2", "sm__cycles_elapsed.avg.per_second", "Ghz", "1.2"),
    ])
    k0, k1, k2 = read_export(tmp_path, text)
    assert k0.duration_s == pytest.approx(41.28e-6)
    assert k0.dram_bytes == pytest.approx(2.5e6 + 640e3)  # read + write
    assert k0.sm_hz == pytest.approx(1.41e9)
    assert k0.flops_parts == {"fp16": 2 * 1e6, "fp64": 10, "tensor": 0}
    assert k0.flops == 2e6 + 10
    assert k1.duration_s == 2e-3 and k1.dram_bytes == 1.5e9
    assert k1.metrics["dram__bytes.sum.per_second"] == pytest.approx(0.75e12)
    assert k1.flops is None and k1.flops_note == "no FLOP metric exported"  # n/a is not collected
    assert k2.dram_bytes == 1024 and k2.sm_hz == 1.2e9
    assert k2.achieved_flops_per_s is None and k2.intensity is None


def test_decimal_comma_locale_is_recognised_for_the_whole_file(tmp_path):
    text = long_rows("9.0", [
        ("0", "gpu__time_duration.sum", "ns", "75.776"),  # ambiguous alone: 75776 ns in this file
        ("0", "sm__cycles_elapsed.avg.per_second", "hz", "1.976.713.263,33"),
        ("0", "dram__bytes.sum", "byte", "4.096"),
        ("0", "sm__sass_thread_inst_executed_op_ffma_pred_on.sum", "inst", "2.214.592.512"),
    ])
    (k,) = read_export(tmp_path, text)
    assert k.duration_s == pytest.approx(75_776e-9)
    assert k.sm_hz == pytest.approx(1_976_713_263.33)
    assert k.dram_bytes == 4096 and k.flops == 2 * 2_214_592_512


def test_mixed_locales_are_refused(tmp_path):
    text = long_rows("9.0", [
        ("0", "gpu__time_duration.sum", "ns", "1,234.5"),
        ("0", "dram__bytes.sum", "byte", "1.234,5"),
    ])
    with pytest.raises(NcuError, match="two locales"):
        read_export(tmp_path, text)


def test_rule_columns_and_older_layout_with_kernel_time(tmp_path):
    # The header of ncu ~2020.1 (roofline.md 2d) plus the five rule columns; the Kernel Time cell is
    # made up here (its real form is not in ../shared) and is not read.
    older = ('"ID","Process ID","Process Name","Host Name","Kernel Name","Kernel Time","Context","Stream",'
             '"Section Name","Metric Name","Metric Unit","Metric Value","Rule Name","Rule Type",'
             '"Rule Description","Estimated Speedup Type","Estimated Speedup"\n'
             '"3","9","gene","summit","kernel_a","t0","1","7","Sec","dram__bytes.sum","Mbyte",'
             '"1.5","","","","",""\n'
             '"3","9","gene","summit","kernel_a","t0","1","7","Sec","sm__cycles_elapsed.avg",'
             '"cycle","1,000,000","","","","",""\n'
             '"3","9","gene","summit","kernel_a","t0","1","7","Sec",'
             '"sm__cycles_elapsed.avg.per_second","cycle/second","1,000,000,000","","","","",""\n'
             '"3","9","gene","summit","kernel_a","t0","1","7","Sec","","","","SOLBottleneck",'
             '"OPT","a rule","local","10"\n')
    (k,) = read_export(tmp_path, older)
    assert k.id == "3" and k.device is None and k.cc is None
    assert k.duration_s == pytest.approx(1e-3)  # cycles / cycles per second
    assert k.dram_bytes == 1.5e6


def test_tensor_metrics_are_not_counted_twice(tmp_path):
    text = long_rows("9.0", [
        ("0", "gpu__time_duration.sum", "ns", "1000"),
        ("0", "sm__ops_path_tensor_src_bf16.sum", "", "100"),  # covers the two below
        ("0", "sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32_sparsity_off.sum", "", "60"),
        ("0", "sm__ops_path_tensor_op_hmma_src_bf16_dst_fp32_sparsity_off.sum", "", "40"),
        ("0", "sm__ops_path_tensor_src_fp64.sum", "", "8"),
        ("0", "sm__ops_path_tensor_src_fp64.sum.peak_sustained", "", "33,792"),
        ("0", "sm__inst_executed_pipe_tensor.sum", "inst", "5"),
    ])
    (k,) = read_export(tmp_path, text)
    assert k.flops_parts["tensor"] == 108


@pytest.mark.parametrize(("cc", "flops", "note"), [
    ("7.0", 512 * 4 + 2 * 3, "Volta"),  # the NERSC recipe's 512 FLOPs per HMMA on V100
    ("8.7", None, "no sm__ops_path_tensor_"),  # Orin: executed tensor instructions, no way to count
])
def test_tensor_pipe_instructions(tmp_path, cc, flops, note):
    text = long_rows(cc, [
        ("0", "gpu__time_duration.sum", "ns", "1000"),
        ("0", "sm__inst_executed_pipe_tensor.sum", "inst", "4"),
        ("0", "sm__sass_thread_inst_executed_op_ffma_pred_on.sum", "inst", "3"),
    ])
    (k,) = read_export(tmp_path, text)
    assert k.flops == flops
    assert k.flops_note is not None and note in k.flops_note


def test_no_tensor_metric_is_said_and_orin_has_no_dram_bytes(tmp_path):
    text = long_rows("8.7", [
        ("0", "gpu__time_duration.sum", "ns", "1000"),
        ("0", "sm__sass_thread_inst_executed_op_ffma_pred_on.sum", "inst", "3"),
        ("0", "lts__t_bytes.sum", "byte", "4096"),
    ])
    (k,) = read_export(tmp_path, text)
    assert k.flops == 6
    assert k.flops_note is not None and "tensor-core work, if any, is not counted" in k.flops_note
    assert k.dram_bytes is None and k.intensity is None
    assert k.achieved_flops_per_s == pytest.approx(6e6)


@pytest.mark.parametrize(("text", "why"), [
    ("", "no ncu CSV header"),
    ("==PROF== Disconnected from process 1\n", "no ncu CSV header"),
    ('"ID","Name"\n"0","x"\n', "no 'Kernel Name' column"),
    (HEADER + "\n", "no kernels"),
    (long_rows("9.0", [("0", "gpu__time_duration.sum", "byte", "5")]), "not a time unit"),
    (long_rows("9.0", [("0", "dram__bytes.sum", "furlong", "5")]), "unit 'furlong' not understood"),
    (long_rows("9.0", [("0", "dram__bytes.sum", "byte", "lots")]), "is not a number"),
    (long_rows("9.0", [("0", "dram__bytes.sum", "byte", "-5")]), "negative"),
    (long_rows("9.0", [("0", "dram__bytes.sum", "byte", "inf")]), "is not a number"),
    ('"ID","Kernel Name"\n"0","' + "x" * 200_000 + '"\n', "not a readable CSV"),
])
def test_bad_exports_are_one_line(tmp_path, text, why):
    with pytest.raises(NcuError, match=why) as info:
        read_export(tmp_path, text)
    assert "\n" not in str(info.value)


def test_unreadable_files_are_one_line(tmp_path):
    with pytest.raises(NcuError, match="cannot read ncu export .*No such file"):
        read_ncu_csv(tmp_path / "missing.csv")
    with pytest.raises(NcuError, match="a directory"):
        read_ncu_csv(tmp_path)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(NcuError, match="not a regular file"):
        read_ncu_csv(fifo)
    binary = tmp_path / "bin.csv"
    binary.write_bytes(HEADER.encode() + b'\n"0","\xff\xfe"\n')
    with pytest.raises(NcuError, match="not UTF-8"):
        read_ncu_csv(binary)


def test_section_export_with_display_names_gives_the_duration_only(tmp_path):
    text = long_rows("8.9", [
        ("0", "Duration", "usecond", "10.00"),
        ("0", "DRAM Throughput", "%", "42"),
        ("0", "Memory Throughput", "Gbyte/second", "300"),
    ])
    (k,) = read_export(tmp_path, text)
    assert k.duration_s == pytest.approx(10e-6)
    assert k.flops is None and k.dram_bytes is None and k.flops_note == "no FLOP metric exported"
